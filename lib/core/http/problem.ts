// The one place where a thrown value becomes an RFC 9457 answer (lib/README.md §7).
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
