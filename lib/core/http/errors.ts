// Errors an endpoint throws on purpose: the one SvcError (lib/core/errors.ts) that is an answer. The
// code is stable (the problem's `type`; dashboards and clients key on it); the message may change.
// A domain error becomes one at the boundary (lib/endpoints/problems.ts); anything else thrown is an
// unexpected failure and answers 500.
import { CodedError } from '../errors.js'
import type { JsonObject } from '../json.js'

/** Members a problem body carries after `detail` (lib/README.md §7). */
export type ProblemExtra = JsonObject

/**
 * The members of a problem on the model routes, and of every 413: `error`, the detail again, which
 * Open Inference Protocol clients read (lib/README.md §10), first, then `extra`.
 */
export const oipExtra = (detail: string, extra?: ProblemExtra): ProblemExtra => ({ error: detail, ...extra })

export class HttpError extends CodedError<string> {
  override name = 'HttpError'
  readonly status: number
  /** Extra members merged into the problem body (e.g. `{ error: … }` for OIP clients). */
  readonly extra: ProblemExtra | undefined
  /** Extra response headers (e.g. `Allow` on 405, `Retry-After` on 503). */
  readonly headers: Readonly<Record<string, string>> | undefined

  constructor(status: number, code: string, message: string, options?: ErrorOptions & { extra?: ProblemExtra; headers?: Readonly<Record<string, string>> }) {
    super(code, message, options)
    this.status = status
    this.extra = options?.extra
    this.headers = options?.headers
  }
}

const tooLarge = new Map<number, HttpError>()

/**
 * The 413 for a body over SVC_MAX_BODY_BYTES, whether a declared Content-Length shows it before
 * anything is read (lib/server/inspect.ts) or the body reader finds it (Ctx.body): one error per
 * limit, built on first use, so both answer the same bytes and a refusal allocates none. It carries
 * `error` too: Open Inference Protocol clients read that member (lib/README.md §10), whatever the route.
 */
export const payloadTooLarge = (limit: number): HttpError => {
  let error = tooLarge.get(limit)
  if (error === undefined) {
    const detail = `Request body exceeds the limit of ${limit} bytes`
    tooLarge.set(limit, (error = new HttpError(413, 'PAYLOAD_TOO_LARGE', detail, { extra: oipExtra(detail) })))
  }
  return error
}
