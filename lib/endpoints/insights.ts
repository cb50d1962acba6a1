// GET /api/insights?count=N&interval=S: a Server-Sent Events stream of `count` snapshots of the
// service's own telemetry, `interval` seconds apart, then the end of the stream (DESIGN §1).
// Parameters are checked before the stream exists, so a bad one is an ordinary 400 problem.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Ctx } from '../http/context.js'
import { HttpError } from '../http/errors.js'
import type { Figures } from '../insights/figures.js'
import type { Handler, Reply } from '../pipeline.js'

export const COUNT = Object.freeze({ min: 1, max: 20, default: 5 })
export const INTERVAL_S = Object.freeze({ min: 0, max: 10, default: 1 })
/** Seconds a refused client waits before retrying: streams last up to 200 s, slots free often. */
export const RETRY_AFTER_S = 5

/** Streams running now, bounded per process. */
export type StreamLimit = Readonly<{
  /** A release function (idempotent) when a slot is free, else undefined. */
  acquire(): (() => void) | undefined
  active(): number
}>

export const createStreamLimit = (max: number): StreamLimit => {
  let active = 0
  return {
    active: () => active,
    acquire: () => {
      if (active >= max) return undefined
      active++
      let isReleased = false
      return () => {
        if (isReleased) return
        isReleased = true
        active--
      }
    },
  }
}

// Each problem is constant, so each error is built once (as the server builds its 413).
const INVALID_COUNT = new HttpError(400, 'INVALID_PARAMETER', `count must be an integer from ${COUNT.min} to ${COUNT.max}`, { extra: { parameter: 'count' } })
const INVALID_INTERVAL = new HttpError(400, 'INVALID_PARAMETER', `interval must be a number of seconds from ${INTERVAL_S.min} to ${INTERVAL_S.max}, e.g. 0.5`, {
  extra: { parameter: 'interval' },
})
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/

export const parseCount = (raw: string | null): number => {
  if (raw === null) return COUNT.default
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (n >= COUNT.min && n <= COUNT.max) return n
  throw INVALID_COUNT
}

/** The interval in milliseconds. */
export const parseInterval = (raw: string | null): number => {
  if (raw === null) return INTERVAL_S.default * 1000
  const n = DECIMAL.test(raw) ? Number(raw) : Number.NaN
  if (n >= INTERVAL_S.min && n <= INTERVAL_S.max) return Math.round(n * 1000)
  throw INVALID_INTERVAL
}

const SSE_HEADERS = Object.freeze({ 'x-accel-buffering': 'no' })

/**
 * The events. The wait between two honours `ctx.signal`, which aborts when the response closes: a
 * client that leaves mid-wait ends the stream at once, leaving no timer behind (the server can
 * only call `return()` once a pending `next()` has settled).
 */
async function* insightEvents(ctx: Ctx, count: number, intervalMs: number, figures: Figures, release: () => void): AsyncGenerator<string> {
  try {
    for (let seq = 1; seq <= count; seq++) {
      if (seq > 1 && intervalMs > 0) await sleep(intervalMs, undefined, { signal: ctx.signal })
      const { metric, value, unit } = await figures.read(seq - 1)
      const event = { seq, count, timestamp: new Date().toISOString(), metric, value, unit, request_id: ctx.requestId }
      yield `data: ${JSON.stringify(event)}\n\n`
    }
  } catch (error: unknown) {
    // The response closed (the client left, or a drain timed out): the end of the stream, not a failure.
    if (!ctx.signal.aborted) throw error
  } finally {
    release()
  }
}

export type InsightsOptions = Readonly<{ figures: Figures; limit: StreamLimit }>

export const getInsights = ({ figures, limit }: InsightsOptions): Handler => {
  const tooMany = new HttpError(503, 'TOO_MANY_STREAMS', 'Too many insight streams are open; retry later', { headers: { 'retry-after': String(RETRY_AFTER_S) } })
  return (ctx): Reply => {
    const count = parseCount(ctx.query.get('count'))
    const intervalMs = parseInterval(ctx.query.get('interval'))
    const release = limit.acquire()
    if (release === undefined) throw tooMany
    // A generator that never starts (HEAD, a client gone before the first read) never runs its
    // `finally`; the response's close releases the slot then.
    ctx.signal.addEventListener('abort', release, { once: true })
    return { status: 200, headers: SSE_HEADERS, stream: insightEvents(ctx, count, intervalMs, figures, release) }
  }
}
