// Where model artifacts come from (DESIGN §10): `<model>/manifest.json` naming the default version,
// and `<model>/<version>/model.json`. Three stores behind one small interface, chosen by
// SVC_MODEL_STORE: a directory, an HTTP(S) artifact server shared by a fleet, and memory for tests.
// A registry polls them: `stat` tells a changed file from an unchanged one without reading it.
import { readFileSync } from 'node:fs'
import { isAbsolute, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDirectoryStore } from './store-directory.js'
import { createHttpStore } from './store-http.js'
import { createMemoryStore } from './store-memory.js'

export { StoreError, STORE_ERROR_CODES, redactUrl, type StoreErrorCode } from './store-error.js'
export { checkPath } from './store-path.js'
export { createDirectoryStore, createHttpStore, createMemoryStore }
export type { MemoryStore } from './store-memory.js'

export type StoreStat = Readonly<{
  size: number
  /** Last modification, ms since the epoch; 0 when the store cannot tell (an HTTP server without Last-Modified). */
  mtimeMs: number
  /** Opaque, quoted like an HTTP ETag: equal etags mean the same content. Compare, never parse. */
  etag: string
}>

/**
 * Paths are relative to the store's root, `/`-separated: `iris/manifest.json`, `iris/2/model.json`
 * (see checkPath). Every method rejects with a StoreError, and only with one.
 */
export type Store = Readonly<{
  /** Where the store reads from, safe to log: a directory, or a URL without credentials. */
  description: string
  /** Model names, sorted: each is a `<model>` whose `<model>/manifest.json` the store lists. */
  list(): Promise<readonly string[]>
  /** The file's bytes; a fresh Buffer the caller may keep or change. */
  read(path: string): Promise<Buffer>
  stat(path: string): Promise<StoreStat>
}>

export type StoreOptions = Readonly<{
  /** Each HTTP request's bound, connect to last body byte (HTTP store only); DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number
  /** Largest file `read` returns; larger ones are TOO_LARGE, never downloaded or buffered. DEFAULT_MAX_BYTES. */
  maxBytes?: number
  /** Wall clock for the memory store's mtimes. */
  now?: () => number
}>

export const DEFAULT_TIMEOUT_MS = 5000
/** A model.json of a linear model or a small tree ensemble is kilobytes; 16 MiB leaves room for forests. */
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024

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
 * The shipped artifacts: `lib/models/artifacts` under svc's package root. The root is found by
 * walking up from this module to svc's package.json, since it sits one level above `lib/` when run
 * from source and two above `dist/lib/` when built; tsc does not copy JSON, so a build reads the
 * artifacts from the source tree.
 */
export const defaultStoreRoot = (from: URL, dir: URL = new URL('.', from)): string => {
  if (isSvcManifest(new URL('package.json', dir))) return join(fileURLToPath(dir), 'lib', 'models', 'artifacts')
  if (dir.pathname === '/') throw new Error(`package.json of svc not found above ${from.pathname}`)
  return defaultStoreRoot(from, new URL('..', dir))
}

const isSvcManifest = (file: URL): boolean => {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'svc'
  } catch {
    return false // no readable manifest here
  }
}

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

/** Builds the store a spec names, with the defaults for what `options` leaves out. */
export const createStore = (spec: StoreSpec, { timeoutMs = DEFAULT_TIMEOUT_MS, maxBytes = DEFAULT_MAX_BYTES, now = Date.now }: StoreOptions = {}): Store => {
  switch (spec.kind) {
    case 'directory':
      return createDirectoryStore(spec.root, { maxBytes })
    case 'http':
      return createHttpStore(spec.url, { timeoutMs, maxBytes })
    case 'memory':
      return createMemoryStore(spec.files, { maxBytes, now })
  }
}
