// SVC_MODEL_STORE as the configuration reads it: which store model artifacts come from
// (lib/README.md §10). lib/models/store/open.ts builds the store a StoreSpec names.
import { isAbsolute, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from './package-root.js'

export type StoreSpec =
  | Readonly<{ kind: 'directory'; root: string }>
  /** A base URL; any user name and password in it are sent as Basic authentication. */
  | Readonly<{ kind: 'http'; url: URL }>
  /** Not reachable from SVC_MODEL_STORE: for tests that build their configuration in code. */
  | Readonly<{ kind: 'memory'; files: Readonly<Record<string, string | Buffer>> }>

/** What SVC_MODEL_STORE accepts, for a configuration error to name. */
export const STORE_SPEC_FORMS =
  'an absolute directory path, a file:///path URL, or an http(s):// base URL without query or fragment (unset: the artifacts shipped with svc)'

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

/**
 * SVC_MODEL_STORE's value as a spec, or undefined when it is none of STORE_SPEC_FORMS. Unset or
 * empty is the shipped artifacts. A relative path is refused rather than resolved against a working
 * directory that differs between a shell and a service manager.
 */
export const parseStoreSpec = (raw: string | undefined): StoreSpec | undefined => {
  if (raw === undefined || raw === '') return { kind: 'directory', root: DEFAULT_STORE_ROOT }
  if (isAbsolute(raw)) return raw.includes('\0') ? undefined : { kind: 'directory', root: normalize(raw) }
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
