// The one error every model store throws. Its code is stable and is what callers branch on; its
// message names the path and where the store reads from, never a credential.
import { CodedError, errorMessage } from '../../core/errors.js'
import type { WriteCondition } from './store.js'

export const STORE_ERROR_CODES = [
  /** No such file (or it is a directory): a model or version that is not there. */
  'NOT_FOUND',
  /** It is there but cannot be read: permissions, a symlink loop, a 401/403 from the server. */
  'UNREADABLE',
  /** The path is not a plain relative path inside the store (absolute, `..`, empty segments…). */
  'INVALID_PATH',
  /** The artifact server failed: unreachable, timed out, a 5xx, a redirect, a malformed reply. */
  'UPSTREAM_ERROR',
  /** The file is larger than the store's `maxBytes`; it was not read. */
  'TOO_LARGE',
  /** The HTTP store's index.json is not `{"models":[…]}`. */
  'INVALID_INDEX',
  /** A conditional write found the file changed since its etag was read, or present under `ifNoneMatch: '*'`. */
  'PRECONDITION_FAILED',
  /** The store cannot write (the HTTP store): publish to the bucket or directory the server serves. */
  'READ_ONLY',
  /** The directory store's file lock: another writer holds it, or this write's ran out or was broken before it committed; nothing written. */
  'LOCKED',
  /** A file's bytes are not those its version's checksums.json recorded at push. */
  'CHECKSUM_MISMATCH',
] as const
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number]

export class StoreError extends CodedError<StoreErrorCode> {
  override name = 'StoreError'
}

/**
 * What a store's call rejected with, as a StoreError: a Store rejects with StoreError only, so
 * anything else is a store's bug, read as UNREADABLE with its message kept.
 */
export const storeErrorOf = (error: unknown): StoreError =>
  error instanceof StoreError ? error : new StoreError('UNREADABLE', errorMessage(error), { cause: error })

/** A URL as it may be logged: without its user name and password. */
export const redactUrl = (url: URL): string => {
  if (url.username === '' && url.password === '') return url.href
  const bare = new URL(url.href)
  bare.username = ''
  bare.password = ''
  return bare.href
}

/** Why a condition failed, in words: the file is there, or gone, or changed since `ifMatch`'s etag. */
export const preconditionFailure = (condition: WriteCondition, etag: string | undefined): string =>
  'ifMatch' in condition
    ? etag === undefined
      ? `is not there, so it cannot match ${condition.ifMatch}`
      : `changed: its etag is ${etag}, not ${condition.ifMatch}`
    : 'is already there'
