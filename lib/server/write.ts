// A reply on the wire, written once, by the server (lib/README.md §1): JSON serialised here, text
// and problem bodies as they are, streams by stream.ts; the last-resort 500 when a layer failed or
// a body could not be serialised. The request's written hooks run once the last byte is out.
import type { ServerResponse } from 'node:http'
import type { Ctx } from '../http/context.js'
import { PROBLEM_CONTENT_TYPE } from '../http/problem-body.js'
import { INTERNAL_PROBLEM, problemJson } from '../http/problem.js'
import type { Lifecycle } from '../lifecycle.js'
import type { Headers, Reply } from '../pipeline.js'
import { errorFields, type Logger } from '../telemetry/logger.js'
import { JSON_TYPE, TEXT_TYPE, withExtra } from './headers.js'
import { closesConnection } from './inspect.js'
import { createStreamWriter } from './stream.js'

export type Writer = Readonly<{
  write(ctx: Ctx, res: ServerResponse, reply: Reply): void
  /** A layer itself failed, or a body could not be serialised: answer 500 and log it. */
  lastResort(ctx: Ctx, res: ServerResponse, error: unknown): void
}>

export const createWriter = (logger: Logger, lifecycle: Lifecycle, streamStallMs: number): Writer => {
  const writeStream = createStreamWriter(logger, streamStallMs)

  const lastResort = (ctx: Ctx, res: ServerResponse, error: unknown): void => {
    logger.error('request_failed', { method: ctx.method, path: ctx.path, error: errorFields(error) }, ctx)
    send(ctx, res, 500, PROBLEM_CONTENT_TYPE, problemJson(INTERNAL_PROBLEM, ctx), undefined, error)
  }

  // hot path: change with care
  const write = (ctx: Ctx, res: ServerResponse, reply: Reply): void => {
    // The keep-alive rules: lib/server/inspect.ts.
    if (closesConnection(ctx, lifecycle.state === 'draining')) res.shouldKeepAlive = false
    switch (reply.kind) {
      case 'json': {
        if (reply.json !== undefined) return send(ctx, res, reply.status, JSON_TYPE, reply.json, reply.headers, undefined)
        if (reply.body === undefined) return sendEmpty(ctx, res, reply.status, reply.headers)
        // A body JSON cannot hold (a cycle, a BigInt, nesting deeper than the stack) is the
        // endpoint's failure: a 500, never an exception escaping into Node's request event.
        const json = serialise(reply.body)
        return typeof json === 'string' ? send(ctx, res, reply.status, JSON_TYPE, json, reply.headers, undefined) : lastResort(ctx, res, json)
      }
      case 'text':
        return send(ctx, res, reply.status, TEXT_TYPE, reply.text, reply.headers, undefined)
      case 'problem':
        return send(ctx, res, reply.status, PROBLEM_CONTENT_TYPE, problemJson(reply.problem, ctx), reply.headers, undefined)
      case 'stream':
        return void writeStream(ctx, res, reply)
    }
  }

  return { write, lastResort }
}

/** A body in one writeHead() and one end(): Node's fast path. `error` is what the written hooks hear. */
const send = (ctx: Ctx, res: ServerResponse, status: number, type: string, payload: string, extra: Headers | undefined, error: unknown): void => {
  const headers = {
    'content-type': type,
    'content-length': Buffer.byteLength(payload),
    'x-request-id': ctx.requestId,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  }
  res.writeHead(status, withExtra(headers, extra))
  res.end(payload)
  ctx.replyWritten(error)
}

const sendEmpty = (ctx: Ctx, res: ServerResponse, status: number, extra: Headers | undefined): void => {
  res.writeHead(status, withExtra({ 'x-request-id': ctx.requestId, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }, extra))
  res.end()
  ctx.replyWritten(undefined)
}

/** JSON text, or what JSON.stringify threw; a body it cannot represent at all (a function) is an error too. */
const serialise = (body: unknown): string | unknown => {
  try {
    return JSON.stringify(body) ?? new TypeError(`a reply body of type ${typeof body} is not JSON`)
  } catch (error: unknown) {
    return error
  }
}
