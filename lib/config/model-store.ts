// SVC_MODEL_STORE as the configuration reads it: which store model artifacts come from
// (lib/README.md §10). lib/models/store/open.ts builds the store a StoreSpec names.
import { isAbsolute, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from './package-root.js'

export type StoreSpec =
  | Readonly<{ kind: 'directory'; root: string }>
  /** A base URL; any user name and password in it are sent as Basic authentication. */
  | Readonly<{ kind: 'http'; url: URL }>
  /** A bucket of an S3-compatible server; `prefix` is `''` or ends with `/` (`prod/models/`). */
  | Readonly<{ kind: 's3'; bucket: string; prefix: string }>
  /** Not reachable from SVC_MODEL_STORE: for tests that build their configuration in code. */
  | Readonly<{ kind: 'memory'; files: Readonly<Record<string, string | Buffer>> }>

/** What SVC_MODEL_STORE accepts, for a configuration error to name. */
export const STORE_SPEC_FORMS =
  'an absolute directory path, a file:///path URL, an http(s):// base URL without query or fragment, ' +
  'or s3://bucket/prefix (unset: the artifacts shipped with svc)'

/**
 * SVC_MODEL_MAX_BYTES's default: a model.json is kilobytes, a forest or a small network in ONNX a
 * few megabytes; 16 MiB leaves room for both without buffering whatever a store serves.
 */
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024

/**
 * The shipped artifacts: `lib/models/artifacts` under svc's package root (lib/config/package-root.ts).
 * tsc does not copy JSON, so a build reads the artifacts from the source tree.
 */
export const defaultStoreRoot = (from: URL): string => join(packageRoot(from), 'lib', 'models', 'artifacts')

export const DEFAULT_STORE_ROOT: string = defaultStoreRoot(new URL(import.meta.url))

// S3's rules for a bucket name usable in both addressing styles: 3 to 63 lower-case letters, digits,
// dots and hyphens, a letter or digit at each end.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/
// Prefix segments: no empty ones (`a//b`), no `.`/`..`, nothing a store path could not hold.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const PREFIX_SEGMENT = /^[^/\\\u0000-\u001f\u007f]+$/

/**
 * `s3://bucket/prefix` as a spec, or undefined: a valid bucket name, no credentials, query or
 * fragment (a key in the URL would be logged with it), and a prefix of plain segments. The prefix
 * always ends with `/`, so model `model` never matches the keys of `model-v2`.
 */
const s3Spec = (raw: string): StoreSpec | undefined => {
  const rest = raw.slice('s3://'.length)
  const slash = rest.indexOf('/')
  const bucket = slash === -1 ? rest : rest.slice(0, slash)
  const path = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/$/, '')
  if (!BUCKET.test(bucket) || bucket.includes('..') || /[?#]/.test(path)) return undefined
  const segments = path === '' ? [] : path.split('/')
  if (!segments.every((segment) => PREFIX_SEGMENT.test(segment) && segment !== '.' && segment !== '..')) return undefined
  return { kind: 's3', bucket, prefix: segments.map((segment) => `${segment}/`).join('') }
}

/**
 * SVC_MODEL_STORE's value as a spec, or undefined when it is none of STORE_SPEC_FORMS. Unset or
 * empty is the shipped artifacts. A relative path is refused rather than resolved against a working
 * directory that differs between a shell and a service manager.
 */
export const parseStoreSpec = (raw: string | undefined): StoreSpec | undefined => {
  if (raw === undefined || raw === '') return { kind: 'directory', root: DEFAULT_STORE_ROOT }
  if (isAbsolute(raw)) return raw.includes('\0') ? undefined : { kind: 'directory', root: normalize(raw) }
  if (raw.startsWith('s3://')) return s3Spec(raw)
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  if (url === undefined || url.search !== '' || url.hash !== '') return undefined
  try {
    if (url.protocol === 'http:' || url.protocol === 'https:') {
      // They become the Authorization header: a malformed escape is refused here, not at start-up.
      decodeURIComponent(url.username)
      decodeURIComponent(url.password)
      return { kind: 'http', url }
    }
    // fileURLToPath refuses a remote host (file://server/share) and an encoded "/" or NUL.
    return url.protocol === 'file:' ? { kind: 'directory', root: fileURLToPath(url) } : undefined
  } catch {
    return undefined
  }
}

/**
 * SVC_MODEL_STORE's value as a configuration error may show it: unless it is a path, everything
 * after the scheme up to the last `@` is masked, whether or not the value parses as a URL (a
 * password with an unescaped `/` or `@`, a forgotten `https://`).
 */
export const redactStoreSpec = (raw: string): string => (raw.startsWith('/') ? raw : raw.replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?).*@/s, '$1***@'))
