// A stream reply on the wire: pulled as the client reads it, paused while the client's buffer is
// full (backpressure), cut when the client reads nothing for streamStallMs, and stopped (`return()`)
// when the client leaves, so the endpoint's generator runs its cleanup.
//
// The stream is `text/event-stream; charset=utf-8` with `Cache-Control: no-cache`. A client that
// reads nothing for 30 s is dropped (`stream_stalled`); HEAD sends the headers only. The layers
// that close a request wrap the stream (lib/layers/stream-end.ts) so they close at its end. The
// endpoint must end its stream when `Lifecycle.closing` aborts on shutdown, or the stream holds the
// drain to its timeout: `/api/insights` then sends `event: shutdown`, `retry: 250` (the SSE
// reconnection time, EventSource's default being ~3 s) and `data:
// {"reason":"shutdown","retry_ms":250}`, an event of its own type that `onmessage` never sees, and
// ends.
import type { ServerResponse } from 'node:http'
import type { Ctx, HookFailed } from '../core/http/context.js'
import type { StreamReply } from '../core/pipeline.js'
import { errorFields, type Logger } from '../telemetry/logger.js'
import { streamHeaders } from './headers.js'

/** Resolves once the stream has ended and the request's written hooks have run; never rejects (a hook that throws goes to `hookFailed`). */
export type StreamWriter = (ctx: Ctx, res: ServerResponse, reply: StreamReply) => Promise<void>

/** What the written hooks hear when the client read none of the stream for its stall time and was dropped. */
const STREAM_STALLED = new Error('the client read none of the stream for its stall time: the connection was closed')

export const createStreamWriter = (logger: Logger, stallMs: number, hookFailed: HookFailed): StreamWriter => {
  const stalled = (ctx: Ctx, res: ServerResponse): Error => {
    logger.warning('stream_stalled', { path: ctx.path, stalled_ms: stallMs }, ctx)
    res.destroy()
    return STREAM_STALLED
  }
  return async (ctx, res, reply) => {
    res.writeHead(reply.status, streamHeaders(ctx.requestId, reply.headers))
    const iterator = reply.stream[Symbol.asyncIterator]()
    let failure: unknown
    // HEAD sends the headers only; the finally below still stops the stream, so layers close it.
    const isHead = ctx.method === 'HEAD'
    try {
      if (!isHead) res.flushHeaders()
      while (!isHead && !res.destroyed) {
        const item = await iterator.next()
        if (item.done === true || res.destroyed) break
        // Backpressure: a slow reader pauses the stream instead of growing our buffer, and one
        // that reads nothing at all is dropped after stallMs.
        if (!res.write(item.value) && !(await drained(res, stallMs))) failure = stalled(ctx, res)
      }
    } catch (error: unknown) {
      failure = error
      logger.error('stream_failed', { path: ctx.path, error: errorFields(error) }, ctx)
    } finally {
      // Stops a generator that is still running because the client left. Its cleanup may throw
      // too: that is this stream's failure, never the process's.
      try {
        await iterator.return?.()
      } catch (error: unknown) {
        failure ??= error
        logger.error('stream_failed', { path: ctx.path, error: errorFields(error) }, ctx)
      }
      res.end()
      // The hooks run once the last byte is out: the end of a stream may still wait in Node's buffers.
      if (res.writableLength > 0 && !res.destroyed && !(await drained(res, stallMs, 'finish'))) failure ??= stalled(ctx, res)
      ctx.replyWritten(failure, hookFailed)
    }
  }
}

/**
 * Waits until what is buffered has gone to the socket: `'drain'` mid-stream, `'finish'` after end().
 * True then (or when the client left), false if it read nothing for `stallMs`.
 */
const drained = (res: ServerResponse, stallMs: number, event: 'drain' | 'finish' = 'drain'): Promise<boolean> =>
  new Promise((resolve) => {
    const settle = (isDrained: boolean): void => {
      clearTimeout(timer)
      res.off(event, onDrain)
      res.off('close', onDrain)
      resolve(isDrained)
    }
    const onDrain = (): void => settle(true)
    const timer = setTimeout(settle, stallMs, false)
    res.on(event, onDrain)
    res.on('close', onDrain)
  })
