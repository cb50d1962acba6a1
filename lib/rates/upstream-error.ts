// No upstream gave a rate, and at least one failed (not one that only said it does not quote the
// currency): the rates domain's one error. No HTTP here: /api/external-data answers it as a 502 or
// a 504 problem through the one table of lib/endpoints/problems.ts.
import { CodedError } from '../core/errors.js'

/** UPSTREAM_TIMEOUT when every failure was a timeout, BAD_UPSTREAM otherwise. */
export type UpstreamErrorCode = 'UPSTREAM_TIMEOUT' | 'BAD_UPSTREAM'

/** The message names each upstream asked and how it answered. */
export class UpstreamError extends CodedError<UpstreamErrorCode> {
  override name = 'UpstreamError'
}
