// The store `svc push` writes to: --store, else SVC_MODEL_STORE, in the forms the service reads
// (lib/config/model-store.ts): a directory, or an S3 bucket reached with the environment's S3
// settings, as the service reaches it (lib/config/config.ts, readS3Config). Never the artifacts
// shipped with svc, where SVC_MODEL_STORE unset points the service: they are svc's own files,
// replaced by its next install; nor an HTTP store, which only reads. Opening is this one function,
// so each kind of store push can write to is added here.
import { isAbsolute, resolve } from 'node:path'
import { type Env, readS3Config, type S3Config } from '../../config/config.js'
import { errorMessage } from '../../core/errors.js'
import { DEFAULT_STORE_ROOT, parseStoreSpec, redactStoreSpec } from '../../config/model-store.js'
import { createStore } from '../../models/store/open.js'
import type { Store } from '../../models/store/store.js'
import { PushError } from './errors.js'

const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:/

/**
 * The store `raw` (--store; a relative path from the working directory) or else `env`'s
 * SVC_MODEL_STORE names; PushError INVALID_ARGUMENTS for none, a value of no store's form, the
 * shipped artifacts or a read-only store. Nothing is read or written yet.
 */
export const openPushStore = (raw: string | undefined, env: Env): Store => {
  const source = raw === undefined ? 'SVC_MODEL_STORE' : '--store'
  const value = raw === undefined ? env['SVC_MODEL_STORE'] : raw === '' || isAbsolute(raw) || URL_LIKE.test(raw) ? raw : resolve(raw)
  const refuse = (why: string): never => {
    throw new PushError('INVALID_ARGUMENTS', why)
  }
  if (value === undefined || value === '')
    return refuse(`name the store to push to with --store DIR or SVC_MODEL_STORE: svc does not push into the artifacts it ships (${DEFAULT_STORE_ROOT})`)
  const spec = parseStoreSpec(value)
  const shown = `${source} ${redactStoreSpec(value)}`
  if (spec === undefined) return refuse(`${shown}: expected a directory, a file:///path URL or s3://bucket/prefix`)
  if (spec.kind === 'http') return refuse(`${shown}: the HTTP store is read-only; push to the directory or bucket it publishes`)
  if (spec.kind === 'directory' && resolve(spec.root) === DEFAULT_STORE_ROOT)
    return refuse(`${shown} holds the artifacts shipped with svc: push to a store of your own`)
  let s3: S3Config
  try {
    s3 = readS3Config(env, spec)
  } catch (error: unknown) {
    // A ConfigError: its message names the variables, never their values.
    return refuse(`${shown}: ${errorMessage(error)}`)
  }
  // Push reads a stored file only when its stat gives the size of one held in memory to compare it
  // with, or a manifest; the service's SVC_MODEL_MAX_BYTES bounds what it serves, not this.
  return createStore(spec, { maxBytes: Infinity, s3 })
}
