// GET /api/insights?count=N&interval=S: a Server-Sent Events stream of `count` snapshots of the
// service's own telemetry, `interval` seconds apart, then the end of the stream (lib/README.md §1).
// Parameters are checked before the stream exists, so a bad one is an ordinary 400 problem.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Ctx } from '../core/http/context.js'
import { HttpError } from '../core/http/errors.js'
import type { Figures } from '../insights/figures.js'
import { Type } from 'typebox'
import { HEADERS, named, nullable, openEnum, problem, problemExample, schemasOf, type BodyOf, type RouteDoc } from '../core/route-doc.js'
import type { Handler, Reply } from '../core/pipeline.js'

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

// Each problem is constant, so each error is built once (as lib/core/http/errors.ts builds its 413).
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
 * How soon a client told the server is going away reconnects (the SSE `retry` field). EventSource
 * waits this long after the stream ends, then connects again through the balancer, which routes
 * elsewhere by then; `eventsource` 4.1 retries a refused connection at the same pace, without
 * backing off, so 0 would spin on a client pointed at this instance alone.
 */
export const RECONNECT_MS = 250

/**
 * The last event of a stream open when the listener closes (`Lifecycle.closing`). Its own type, so
 * `onmessage` handlers that read an InsightEvent never see it; `retry` sets the client's
 * reconnection time, from EventSource's default of about 3 s down to RECONNECT_MS.
 */
export const SHUTDOWN_EVENT = `event: shutdown\nretry: ${RECONNECT_MS}\ndata: ${JSON.stringify({ reason: 'shutdown', retry_ms: RECONNECT_MS })}\n\n`

/** A wait cut short (the client left, or the listener closed) is no failure: the loop reads why. */
const ignore = (): void => {}

/**
 * The events. The wait between two ends early when the response closes (`ctx.signal`: the client
 * left, leaving no timer behind, since the server can only call `return()` once a pending `next()`
 * has settled) or when the listener closes (`closing`: the stream ends with SHUTDOWN_EVENT).
 */
async function* insightEvents(
  ctx: Ctx,
  count: number,
  intervalMs: number,
  figures: Figures,
  closing: AbortSignal,
  release: () => void,
): AsyncGenerator<string> {
  const wake = new AbortController()
  const stop = (): void => wake.abort()
  ctx.signal.addEventListener('abort', stop, { once: true })
  closing.addEventListener('abort', stop, { once: true })
  try {
    for (let seq = 1; seq <= count; seq++) {
      if (seq > 1 && intervalMs > 0) await sleep(intervalMs, undefined, { signal: wake.signal }).catch(ignore)
      if (ctx.signal.aborted) return
      if (closing.aborted) return yield SHUTDOWN_EVENT
      const { metric, value, unit } = await figures.read(seq - 1)
      const event: InsightEvent = { seq, count, timestamp: new Date().toISOString(), metric, value, unit, request_id: ctx.requestId }
      yield `data: ${JSON.stringify(event)}\n\n`
    }
  } finally {
    // `closing` lives as long as the process: a listener left on it would keep every stream.
    closing.removeEventListener('abort', stop)
    release()
  }
}

export type InsightsOptions = Readonly<{
  figures: Figures
  limit: StreamLimit
  /** `Lifecycle.closing`: aborts when the listener closes on shutdown. */
  closing: AbortSignal
}>

export const getInsights = ({ figures, limit, closing }: InsightsOptions): Handler => {
  const tooMany = new HttpError(503, 'TOO_MANY_STREAMS', 'Too many insight streams are open; retry later', {
    headers: { 'retry-after': String(RETRY_AFTER_S) },
  })
  return (ctx): Reply => {
    const count = parseCount(ctx.query.get('count'))
    const intervalMs = parseInterval(ctx.query.get('interval'))
    const release = limit.acquire()
    if (release === undefined) throw tooMany
    // A generator that never starts (HEAD, a client gone before the first read) never runs its
    // `finally`; the response's close releases the slot then.
    ctx.signal.addEventListener('abort', release, { once: true })
    return { kind: 'stream', status: 200, headers: SSE_HEADERS, stream: insightEvents(ctx, count, intervalMs, figures, closing, release) }
  }
}

const PATH = '/api/insights'
const FIGURES = ['http_requests_in_flight', 'http_request_rate', 'http_request_duration_p95', 'event_loop_lag_p99', 'heap_used']
const UNITS = ['requests', 'requests_per_second', 'seconds', 'milliseconds', 'bytes']
const EVENT = {
  seq: 1,
  count: 5,
  timestamp: '2026-11-22T06:00:00.125Z',
  metric: 'http_requests_in_flight',
  value: 3,
  unit: 'requests',
  request_id: '5a0c2f4e-8d1b-4c3a-9e6f-7b2d1a0c9e8f',
}

// The figures and their units are named by lib/insights/figures.ts, which types them as strings.
const INSIGHT_EVENT = named(
  'InsightEvent',
  Type.Object(
    {
      seq: Type.Integer({ minimum: 1, description: 'From 1 to `count`' }),
      count: Type.Integer({ minimum: COUNT.min, maximum: COUNT.max }),
      timestamp: Type.String({ format: 'date-time' }),
      metric: openEnum(FIGURES),
      value: nullable(Type.Number({ description: 'null before there is anything to measure (no request completed yet, no event-loop sample)' })),
      unit: openEnum(UNITS),
      request_id: Type.String({ format: 'uuid', description: "The stream's own request id" }),
    },
    { description: 'One event of GET /api/insights, the JSON after `data: `', examples: [EVENT] },
  ),
)
/** One event of the stream, the JSON after `data: `. */
export type InsightEvent = BodyOf<typeof INSIGHT_EVENT.schema>

export const INSIGHTS_DOC: RouteDoc = {
  operationId: 'getInsights',
  summary: "A live stream of the service's own telemetry",
  description:
    `A Server-Sent Events stream of \`count\` events, \`interval\` seconds apart, then the end of the stream. Each event is ` +
    '`data: <InsightEvent as JSON>` and a blank line; the figures cycle through ' +
    `${FIGURES.map((f) => `\`${f}\``).join(', ')}. A stream holds one of SVC_MAX_STREAMS slots until it ends; a client that leaves stops it at once. ` +
    `When the server shuts down, a stream still open once its listener closes ends early with one last event, \`event: shutdown\`, ` +
    `\`retry: ${RECONNECT_MS}\` and \`data: {"reason":"shutdown","retry_ms":${RECONNECT_MS}}\`: ` +
    `an EventSource client reconnects after ${RECONNECT_MS} ms, to another instance.`,
  tags: ['insights'],
  parameters: [
    {
      name: 'count',
      in: 'query',
      description: 'How many events to send',
      schema: { type: 'integer', minimum: COUNT.min, maximum: COUNT.max, default: COUNT.default },
      example: 3,
    },
    {
      name: 'interval',
      in: 'query',
      description: 'Seconds between two events, fractions allowed; 0 sends them back to back',
      schema: { type: 'number', minimum: INTERVAL_S.min, maximum: INTERVAL_S.max, default: INTERVAL_S.default },
      example: 0.5,
    },
  ],
  responses: {
    '200': {
      description: 'The stream (`Cache-Control: no-cache`, `X-Accel-Buffering: no`)',
      content: {
        'text/event-stream; charset=utf-8': {
          // One event of the stream, as OpenAPI 3.2 describes a stream's items (`itemSchema`): 3.1 has
          // no way to say "a sequence of", so the schema is that of each event, as SSE clients parse it.
          schema: {
            type: 'object',
            description:
              'Each event of the stream, `count` of them: a `data:` line holding an InsightEvent as JSON, then a blank line ' +
              '(a stream ended by a shutdown has one `event: shutdown` last instead)',
            required: ['data'],
            properties: { data: { type: 'string', contentMediaType: 'application/json', contentSchema: INSIGHT_EVENT.ref } },
          },
          example: { data: JSON.stringify(EVENT) },
        },
      },
    },
    '400': problem('`count` or `interval` out of range or not a number; sent before any stream starts', {
      count: problemExample('count out of range', 400, 'INVALID_PARAMETER', INVALID_COUNT.message, PATH, { parameter: 'count' }),
      interval: problemExample('interval not a number', 400, 'INVALID_PARAMETER', INVALID_INTERVAL.message, PATH, { parameter: 'interval' }),
    }),
    '503': problem(
      'SVC_MAX_STREAMS streams are already open',
      { full: problemExample('Every slot taken', 503, 'TOO_MANY_STREAMS', 'Too many insight streams are open; retry later', PATH) },
      { 'Retry-After': HEADERS.retryAfter },
    ),
  },
  schemas: schemasOf([INSIGHT_EVENT]),
}
