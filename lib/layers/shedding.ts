// Load shedding: past SVC_MAX_IN_FLIGHT requests in flight, or while the event loop lags more than
// SVC_MAX_EVENT_LOOP_DELAY_MS, a request is answered 503 with Retry-After at once, before its
// endpoint runs, so the requests already admitted keep their latency instead of all of them
// slowing down together. Operational routes (probes, /metrics) are never shed: a load balancer
// must see the truth and a scrape must show the overload. Shed requests are counted in
// svc_requests_shed_total{reason} (and, like any answer, logged and counted by the outer layers).
//
// A stream counts while its endpoint prepares it, not while it streams: SVC_MAX_STREAMS bounds
// those, and an idle stream holds no CPU.
import { Counter, type Registry } from 'prom-client'
import { toProblemReply } from '../core/http/problem.js'
import { HttpError } from '../core/http/errors.js'
import type { Layer, Reply } from '../core/pipeline.js'

export const SHED_REASONS = ['max_in_flight', 'event_loop_delay'] as const
export type ShedReason = (typeof SHED_REASONS)[number]

/** Seconds a shed client is asked to wait: overload passes in moments or needs more capacity. */
export const RETRY_AFTER_S = 1

/** How often the event loop's lag is sampled. */
export const LAG_SAMPLE_MS = 20

export type SheddingOptions = Readonly<{
  /** Most requests in flight at once; 0 for no limit. */
  maxInFlight: number
  /** Event-loop lag in ms past which requests are shed; 0 for no limit. */
  maxEventLoopDelayMs: number
  metrics: Registry
}>

export type Shedding = Readonly<{
  /** The layer, or undefined when neither limit is set (nothing to wrap). */
  layer: Layer | undefined
  /**
   * Half way to shedding: at least half SVC_MAX_IN_FLIGHT in flight, or the last lag sample over half
   * SVC_MAX_EVENT_LOOP_DELAY_MS. Work that may wait or go (shadow copies) is dropped first, so it never
   * brings a real request to be shed. Always false without limits.
   */
  isUnderPressure(): boolean
  /** Stops the lag sampler (shutdown): from then on lag sheds nothing, SVC_MAX_IN_FLIGHT still does. */
  stop(): void
}>

const shedReply = (reason: ShedReason): Reply =>
  Object.freeze(
    toProblemReply(
      new HttpError(
        503,
        'OVERLOADED',
        reason === 'max_in_flight'
          ? 'Too many requests are in progress; retry after the time in Retry-After'
          : 'The server is too busy to answer in time; retry after the time in Retry-After',
        { headers: { 'retry-after': String(RETRY_AFTER_S) }, extra: { reason } },
      ),
    ),
  )

/**
 * The lag sampler: a timer that should fire every LAG_SAMPLE_MS; how late it fires is how long
 * the loop was blocked. `isLagging` holds from one sample to the next, so a loop blocked by long
 * tasks sheds until a sample comes in on time. Stopped, it reads 0: no later sample could lift a
 * lag kept from before, and shutdown stops it while the balancer still routes here for the delay.
 */
const lagSampler = (limitMs: number): { isLagging: () => boolean; isHalfWay: () => boolean; stop: () => void } => {
  let lagMs = 0
  let expected = performance.now() + LAG_SAMPLE_MS
  const timer = setInterval(() => {
    const now = performance.now()
    lagMs = now - expected
    expected = now + LAG_SAMPLE_MS
  }, LAG_SAMPLE_MS)
  timer.unref()
  const stop = (): void => {
    clearInterval(timer)
    lagMs = 0
  }
  return { isLagging: () => lagMs > limitMs, isHalfWay: () => lagMs > limitMs / 2, stop }
}

/** One value per reason, made in SHED_REASONS' order (the series' order); the type checks that none is missing. */
const byReason = <V>(make: (reason: ShedReason) => V): Readonly<Record<ShedReason, V>> => ({
  max_in_flight: make('max_in_flight'),
  event_loop_delay: make('event_loop_delay'),
})

export const createShedding = ({ maxInFlight, maxEventLoopDelayMs, metrics }: SheddingOptions): Shedding => {
  if (maxInFlight === 0 && maxEventLoopDelayMs === 0) return { layer: undefined, isUnderPressure: () => false, stop: () => {} }
  const shed = new Counter({
    name: 'svc_requests_shed_total',
    help: 'Requests answered 503 before their endpoint ran, because the service was overloaded, by reason.',
    labelNames: ['reason'] as const,
    registers: [metrics],
  })
  const cells = byReason((reason) => shed.labels({ reason }))
  for (const cell of Object.values(cells)) cell.inc(0)
  const replies = byReason(shedReply)
  const lag = maxEventLoopDelayMs === 0 ? undefined : lagSampler(maxEventLoopDelayMs)
  const limit = maxInFlight === 0 ? Number.POSITIVE_INFINITY : maxInFlight
  let inFlight = 0
  const done = (reply: Reply): Reply => {
    inFlight--
    return reply
  }
  const failed = (error: unknown): never => {
    inFlight--
    throw error
  }

  const layer: Layer = (next, route) => {
    if (route.isOperational) return next
    return (ctx) => {
      if (inFlight >= limit) {
        cells.max_in_flight.inc()
        return replies.max_in_flight
      }
      if (lag?.isLagging() === true) {
        cells.event_loop_delay.inc()
        return replies.event_loop_delay
      }
      inFlight++
      let reply: Reply | Promise<Reply>
      try {
        reply = next(ctx)
      } catch (error: unknown) {
        return failed(error)
      }
      return reply instanceof Promise ? reply.then(done, failed) : done(reply)
    }
  }
  const isUnderPressure = (): boolean => inFlight * 2 >= limit || lag?.isHalfWay() === true
  return { layer, isUnderPressure, stop: () => lag?.stop() }
}
