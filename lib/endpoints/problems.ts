// The domains' errors as answers: the one table (lib/README.md §7). Domain code throws its own
// errors, with codes of their own and no HTTP (a RequestError of the models domain, an
// UpstreamError of the rates); the endpoints hand what they catch to `toHttpError`, and
// toProblemReply (lib/core/http/problem.ts) writes the HttpError it gets as problem+json.
// Anything not in the table goes through unchanged: an HttpError is an answer already, and
// anything else answers 500.
import { HttpError, oipExtra, type ProblemExtra } from '../core/http/errors.js'
import { RequestError, type RequestErrorCode } from '../models/inference/request-error.js'
import { PredictionBusyError } from '../models/onnx/pool/busy-error.js'
import { ModelLookupError, type ModelLookupErrorCode } from '../serving/lookup-error.js'
import { UpstreamError, type UpstreamErrorCode } from '../rates/upstream-error.js'

/** Each domain code's status; the code itself is the problem's (`urn:svc:problem:<code>`). */
const STATUS: Readonly<Record<RequestErrorCode | ModelLookupErrorCode | UpstreamErrorCode, number>> = {
  INVALID_REQUEST: 400,
  INVALID_INPUT: 400,
  BATCH_TOO_LARGE: 400,
  MODEL_NOT_FOUND: 404,
  MODEL_NOT_READY: 503,
  BAD_UPSTREAM: 502,
  UPSTREAM_TIMEOUT: 504,
}

/** A busy worker pool's answer: a second, as load shedding asks (lib/layers/shedding.ts). */
const BUSY_HEADERS = Object.freeze({ 'retry-after': '1' })

/**
 * What an endpoint throws for a domain error it caught: the HttpError it answers, the domain error
 * as its `cause`. A RequestError carries `error`, the detail again (what Open Inference Protocol
 * clients read), and `input` when an input is at fault. A ModelLookupError carries `error` too, and
 * `notReadyExtra` when the model is UNAVAILABLE (the ready probes' `ready: false`).
 */
export const toHttpError = (error: unknown, notReadyExtra?: ProblemExtra): unknown => {
  if (error instanceof ModelLookupError) {
    const extra = oipExtra(error.message, error.code === 'MODEL_NOT_READY' ? notReadyExtra : undefined)
    return new HttpError(STATUS[error.code], error.code, error.message, { extra })
  }
  if (error instanceof RequestError) {
    const extra = oipExtra(error.message, error.input === undefined ? undefined : { input: error.input })
    return new HttpError(STATUS[error.code], error.code, error.message, { extra, cause: error })
  }
  if (error instanceof UpstreamError) return new HttpError(STATUS[error.code], error.code, error.message, { cause: error })
  if (error instanceof PredictionBusyError) {
    return new HttpError(503, error.code, error.message, { extra: oipExtra(error.message, { reason: error.reason }), headers: BUSY_HEADERS, cause: error })
  }
  return error
}

/** For a rejection handler: throws what toHttpError makes of `error`. */
export const rethrowAsHttp = (error: unknown): never => {
  throw toHttpError(error)
}
