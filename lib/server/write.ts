// A reply on the wire, written once, by the server (lib/README.md §1): JSON serialised here, text
// and problem bodies as they are, streams by stream.ts; the last-resort 500 when a layer failed or
// a body could not be serialised. The request's written hooks run once the last byte is out (handed
// to the kernel; for a body sent in slices, after the last slice), or once the connection ended
// before it, each on its own: one that throws is logged (`reply_hook_failed`) and counted, and the
// next still runs.
//
// By kind: `json` is `body` through `JSON.stringify`, or `json`, JSON text the endpoint made
// itself, sent as it is, with `Content-Type: application/json` and `Content-Length`; with neither,
// headers only (the 204 of OPTIONS, a 304). A body JSON cannot hold (a cycle, a BigInt) is the
// endpoint's failure: 500 and `request_failed`, never an exception inside Node. `text` is sent as
// it is, `text/plain; charset=utf-8` unless the reply sets `content-type`. `problem` is the problem
// body, to which the server adds `instance` and `request_id`; its `error` holds what was thrown,
// for the layers to log, count and record. The `error` member the model routes and every 413 add
// for Open Inference Protocol clients is `oipExtra`'s (lib/core/http/errors.ts), the one place it
// is built. Headers on every kind: `X-Request-ID`, `X-Content-Type-Options: nosniff`,
// `Cache-Control: no-store` (a reply's own headers, lower-case names, win). The written hooks get
// the context and the error, if any (a stream that broke, a reply the server had to replace with a
// 500).
import type { ServerResponse } from 'node:http'
import type { Ctx, HookFailed } from '../core/http/context.js'
import { PROBLEM_CONTENT_TYPE } from '../core/http/problem-body.js'
import { INTERNAL_PROBLEM, problemJson } from '../core/http/problem.js'
import type { Lifecycle } from '../core/lifecycle.js'
import type { Headers, Reply } from '../core/pipeline.js'
import type { HttpMetrics } from '../telemetry/metrics/http-metrics.js'
import { errorFields, type Logger } from '../telemetry/logger.js'
import { bodyHeaders, emptyHeaders, JSON_TYPE, TEXT_TYPE } from './headers.js'
import { closesConnection } from './inspect.js'
import { createStreamWriter } from './stream.js'

export type Writer = Readonly<{
  write(ctx: Ctx, res: ServerResponse, reply: Reply): void
  /** A layer itself failed, or a body could not be serialised: answer 500 and log it. */
  lastResort(ctx: Ctx, res: ServerResponse, error: unknown): void
}>

/** What the written hooks hear when a layer threw or rejected with undefined or null. */
const THROWN_NOTHING = new Error('a layer threw or rejected without an error')

/** What the written hooks hear when the reply stopped moving and its connection was closed. */
const STALLED = new Error('the client read none of the reply for the write timeout: the connection was closed')

/** How long a stream or a reply may stop moving before its connection is closed. */
export type WriteLimits = Readonly<{ streamStallMs: number; writeTimeoutMs: number }>

/** What follows a reply handed to the socket: the written hooks, and the watch on one that stops moving. */
type Finish = Readonly<{
  hookFailed: HookFailed
  writeTimeoutMs: number
  /** A reply whose client took none of it for writeTimeoutMs: logged, its connection closed; what the hooks hear. */
  stalled: (ctx: Ctx, res: ServerResponse) => Error
}>

/** `metrics`: where a failing hook is counted, in http_exceptions_total; uncounted without it. */
export const createWriter = (logger: Logger, lifecycle: Lifecycle, limits: WriteLimits, metrics: HttpMetrics | undefined): Writer => {
  // The answer is already out: what a hook threw is the layer's failure, logged and counted, never the process's.
  const hookFailed: HookFailed = (ctx, error) => {
    logger.error('reply_hook_failed', { method: ctx.method, path: ctx.path, error: errorFields(error) }, ctx)
    metrics?.countException(error)
  }
  const writeStream = createStreamWriter(logger, limits.streamStallMs, hookFailed)
  const { writeTimeoutMs } = limits
  const stalled = (ctx: Ctx, res: ServerResponse): Error => {
    logger.warning('reply_stalled', { path: ctx.path, stalled_ms: writeTimeoutMs }, ctx)
    res.destroy()
    return STALLED
  }
  const finish: Finish = { hookFailed, writeTimeoutMs, stalled }

  const lastResort = (ctx: Ctx, res: ServerResponse, error: unknown): void => {
    logger.error('request_failed', { method: ctx.method, path: ctx.path, error: errorFields(error) }, ctx)
    // The written hooks tell a replaced reply by the error they hear: `throw undefined` must not read as success.
    send(ctx, res, 500, PROBLEM_CONTENT_TYPE, problemJson(INTERNAL_PROBLEM, ctx), undefined, error ?? THROWN_NOTHING, finish)
  }

  // hot path: change with care
  const write = (ctx: Ctx, res: ServerResponse, reply: Reply): void => {
    // The keep-alive rules: lib/server/inspect.ts. Not `=== 'draining'`: the listeners share one
    // lifecycle, and the first to finish its drain sets `stopped` while the other still answers.
    if (closesConnection(ctx, lifecycle.state !== 'ready')) res.shouldKeepAlive = false
    switch (reply.kind) {
      case 'json': {
        if (reply.json !== undefined) return send(ctx, res, reply.status, JSON_TYPE, reply.json, reply.headers, undefined, finish)
        if (reply.body === undefined) return sendEmpty(ctx, res, reply.status, reply.headers, finish)
        // A body JSON cannot hold (a cycle, a BigInt, nesting deeper than the stack) is the
        // endpoint's failure: a 500, never an exception escaping into Node's request event.
        const json = serialise(reply.body)
        return typeof json === 'string' ? send(ctx, res, reply.status, JSON_TYPE, json, reply.headers, undefined, finish) : lastResort(ctx, res, json)
      }
      case 'text':
        return send(ctx, res, reply.status, TEXT_TYPE, reply.text, reply.headers, undefined, finish, reply.sent)
      case 'problem':
        return send(ctx, res, reply.status, PROBLEM_CONTENT_TYPE, problemJson(reply.problem, ctx), reply.headers, undefined, finish)
      case 'stream':
        return void writeStream(ctx, res, reply)
    }
  }

  return { write, lastResort }
}

/** A body in one writeHead() and one end(), Node's fast path (a large one in slices). `error` is what the written hooks hear. */
const send = (
  ctx: Ctx,
  res: ServerResponse,
  status: number,
  type: string,
  payload: string | Buffer,
  extra: Headers | undefined,
  error: unknown,
  finish: Finish,
  sent?: () => void,
): void => {
  res.writeHead(status, bodyHeaders(type, Buffer.byteLength(payload), ctx.requestId, extra))
  // end()'s callback runs on 'finish': the last byte handed to the socket.
  if (typeof payload === 'string' || payload.length <= BODY_SLICE_BYTES) {
    res.end(payload, sent)
    afterLastByte(ctx, res, error, finish)
  } else {
    endInSlices(res, payload, sent)
    whenOut(ctx, res, error, finish)
  }
}

/**
 * Runs the written hooks once the last byte is out. end() hands the reply to the socket in its own
 * call (it uncorks before returning), and the kernel takes a small one whole: nothing is left in
 * Node's buffers then, and the hooks run at once, with no listener or closure made (the hot path).
 * What the kernel did not take (a client that reads slowly, or not at all; a pipelined reply
 * waiting its turn) is still in `res.writableLength`: the hooks wait for the response's 'close'.
 */
const afterLastByte = (ctx: Ctx, res: ServerResponse, error: unknown, finish: Finish): void => {
  if (res.writableLength === 0) ctx.replyWritten(error, finish.hookFailed)
  else whenOut(ctx, res, error, finish)
}

/**
 * A reply not yet out. Its hooks run on the response's 'close': emitted after 'finish' (the last
 * byte handed to the kernel), or when the connection ends before that, so they run once either way.
 * Meanwhile the socket's timeout watches it: Node's is 0 (none), and the keep-alive timeout starts
 * only once a reply is out, so a client that reads none of it held its socket and the body for as
 * long as it liked. Any byte the socket writes or reads restarts the timeout, so a slow reader is
 * left to read; once the reply is out, the server sets the keep-alive timeout in its place.
 */
const whenOut = (ctx: Ctx, res: ServerResponse, error: unknown, finish: Finish): void => {
  let heard = error
  res.once('close', () => ctx.replyWritten(heard, finish.hookFailed))
  res.setTimeout(finish.writeTimeoutMs, () => {
    heard ??= finish.stalled(ctx, res)
  })
}

/**
 * A body larger than this goes to the socket a slice a turn of the loop. One write of a /metrics
 * body (4 MiB at 500 models) copied all of it through loopback in one system call: 0.8 ms during
 * which no request was read.
 */
const BODY_SLICE_BYTES = 256 * 1024

/** `body` a slice at a time, each once the last is flushed and a turn has passed; none after the connection fails. */
const endInSlices = (res: ServerResponse, body: Buffer, sent: (() => void) | undefined): void => {
  let offset = 0
  const next = (): void => {
    const end = offset + BODY_SLICE_BYTES
    if (end >= body.length) return void res.end(body.subarray(offset), sent)
    res.write(body.subarray(offset, end), written)
    offset = end
  }
  // A failed write ends the body: the socket is gone, and `sent` never runs.
  const written = (error: Error | null | undefined): void => void (error ? undefined : setImmediate(next))
  next()
}

const sendEmpty = (ctx: Ctx, res: ServerResponse, status: number, extra: Headers | undefined, finish: Finish): void => {
  res.writeHead(status, emptyHeaders(ctx.requestId, extra))
  res.end()
  afterLastByte(ctx, res, undefined, finish)
}

/** JSON text, or what JSON.stringify threw; a body it cannot represent at all (a function) is an error too. */
const serialise = (body: unknown): string | unknown => {
  try {
    return JSON.stringify(body) ?? new TypeError(`a reply body of type ${typeof body} is not JSON`)
  } catch (error: unknown) {
    return error
  }
}
