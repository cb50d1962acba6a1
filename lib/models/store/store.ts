// Where model versions come from (lib/README.md §10): `<model>/manifest.json` naming the default
// version, and each version's files under `<model>/<version>/` (`model.json` for the kernel; the
// runtime names them, runtime.ts). Four stores implement this interface: a directory
// (store/directory.ts), an HTTP(S) artifact server shared by a fleet (store/http.ts), an
// S3-compatible bucket (store/s3/), and memory for tests (store/memory.ts); store/open.ts builds the
// one SVC_MODEL_STORE names. A registry polls them: `stat` tells a changed file from an unchanged
// one without reading it. Writers (`svc push`, a rollout) change a file only with a condition on
// what they last saw, so of two writers racing from one state exactly one lands.

import type { S3Config } from '../../config/config.js'

export type StoreStat = Readonly<{
  size: number
  /** Last modification, ms since the epoch; 0 when the store cannot tell (an HTTP server without Last-Modified). */
  mtimeMs: number
  /** Opaque, quoted like an HTTP ETag: equal etags mean the same content. Compare, never parse. */
  etag: string
}>

/** A write's precondition: the file still has the etag the writer read, or there is no such file yet. */
export type WriteCondition = Readonly<{ ifMatch: string }> | Readonly<{ ifNoneMatch: '*' }>

/** One reload pass's view of a store: the models, and each file's stat as of the same listing. */
export type StoreScan = Readonly<{
  models: readonly string[]
  stat(path: string): Promise<StoreStat>
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
  /**
   * Writes the whole file if `condition` holds, atomically: a reader sees the old bytes or the new,
   * never a mix. Rejects PRECONDITION_FAILED when it does not hold, READ_ONLY where the store
   * cannot write (HTTP). The stat returned is the new file's, its etag what a next `ifMatch` names.
   */
  write(path: string, bytes: Buffer, condition: WriteCondition): Promise<StoreStat>
  /**
   * A store whose listing carries every file's stat (S3's ListObjectsV2) offers a pass's stats from
   * one listing; without it a pass lists, then stats each file (store/scan.ts).
   */
  scan?(): Promise<StoreScan>
}>

export type StoreOptions = Readonly<{
  /** Each HTTP request's bound, connect to last body byte (HTTP store only); DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number
  /** Largest file `read` returns; larger ones are TOO_LARGE, never downloaded or buffered. DEFAULT_MAX_BYTES. */
  maxBytes?: number
  /** How an s3:// store is reached (lib/config/config.ts); required for one. */
  s3?: S3Config
  /** An instance role's renewal failed while the credentials held are still valid (S3 only). */
  onCredentialsStale?: (error: Error) => void
  /** Wall clock for the memory store's mtimes. */
  now?: () => number
}>

export const DEFAULT_TIMEOUT_MS = 5000
export { DEFAULT_MAX_BYTES } from '../../config/model-store.js'
