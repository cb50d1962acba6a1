// The one place where a thrown value becomes an RFC 9457 answer (lib/README.md §7).
//
// Every 4xx and 5xx body is `application/problem+json`:
// `{"type","title","status","detail","instance","request_id"}` plus any extra members. `type` is
// `urn:svc:problem:<code in kebab case>` and stable; `title` is the status text; every text member
// is clipped at 1 KiB, so a problem never echoes much of a request. Anything else thrown becomes
// one constant 500 `INTERNAL_ERROR` whose detail says to quote the `request_id`: 5xx bodies never
// carry internals. Refusals before routing are pre-built bytes and have no `instance`.
//
// The codes by status: 400 `BAD_REQUEST`, `INVALID_FRAMING`, `INVALID_HOST`, `INVALID_TARGET`,
// `INVALID_PATH_PARAMETER`, `INVALID_JSON`, `INCOMPLETE_BODY`, `INVALID_PARAMETER` (+`parameter`),
// `INVALID_REQUEST`, `INVALID_INPUT`, `BATCH_TOO_LARGE`; 401 `UNAUTHORIZED`, with
// `WWW-Authenticate: Bearer realm="svc"` (`error="invalid_token"` for a wrong token); 404
// `NOT_FOUND`, `ASSET_NOT_FOUND`, `UNSUPPORTED_CURRENCY`, `MODEL_NOT_FOUND`, `FEEDBACK_DISABLED`
// (no SVC_FEEDBACK_SECRET); 405 `METHOD_NOT_ALLOWED`, with `Allow`; 408 `REQUEST_TIMEOUT`, 413
// `PAYLOAD_TOO_LARGE`, 414 `URI_TOO_LONG`, 415 `UNSUPPORTED_MEDIA_TYPE`, 417 `EXPECTATION_FAILED`,
// 431 `HEADERS_TOO_LARGE`; 500 `INTERNAL_ERROR`; 502 `BAD_UPSTREAM`, 504 `UPSTREAM_TIMEOUT` (rate
// upstreams); 503 `OVERLOADED` (+`reason`), `TOO_MANY_CONNECTIONS`, `TOO_MANY_STREAMS`,
// `MODEL_NOT_READY`, `SERVER_NOT_READY`, each with `Retry-After` except the model ones.
//
// On the model routes every problem also carries `error` (the detail again, what Open Inference
// Protocol clients read), as does every 413, on any route; the OIP readiness problems carry `ready:
// false`. The probes are the exception to problem+json: `/ready` and `/startup` answer 503 with the
// health document. A framing or Host problem, an unsupported `Expect`, a body over the limit, a
// chunked body still arriving, or a drain ends the connection after the answer.
import type { Ctx } from './context.js'
import { HttpError } from './errors.js'
import { problem, type Problem } from './problem-body.js'
import type { Handler, ProblemReply, Reply } from '../pipeline.js'

// 5xx bodies never carry what went wrong inside: the request id leads an operator to the log line.
export const INTERNAL_PROBLEM: Problem = Object.freeze(
  problem(500, 'INTERNAL_ERROR', 'The server failed to handle the request; quote the request_id when reporting it'),
)

export const toProblemReply = (error: unknown): ProblemReply => {
  if (error instanceof HttpError) {
    const body = problem(error.status, error.code, error.message, error.extra)
    return error.headers === undefined
      ? { kind: 'problem', status: error.status, problem: body }
      : { kind: 'problem', status: error.status, headers: error.headers, problem: body }
  }
  // `throw undefined` is still a failure to count and log: it gets a value the layers can see.
  return { kind: 'problem', status: 500, problem: INTERNAL_PROBLEM, error: error === undefined ? new TypeError('an endpoint threw undefined') : error }
}

/** The problem body as sent: the endpoint's members plus where and which request. */
export const problemJson = (p: Problem, ctx: Ctx): string => JSON.stringify({ ...p, instance: ctx.path, request_id: ctx.requestId })

/**
 * Innermost wrapper of every pipeline: answers a rejection decided before routing finished, and
 * turns anything an endpoint throws or rejects with into a problem reply, so the layers outside
 * always see a final status and never an exception.
 */
export const guard =
  (endpoint: Handler): Handler =>
  (ctx) => {
    if (ctx.rejection !== undefined) return toProblemReply(ctx.rejection)
    let reply: Reply | Promise<Reply>
    try {
      reply = endpoint(ctx)
    } catch (error: unknown) {
      return toProblemReply(error)
    }
    return reply instanceof Promise ? reply.catch(toProblemReply) : reply
  }
