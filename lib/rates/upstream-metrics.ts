// svc_upstream_requests_total{upstream,outcome} and svc_upstream_request_duration_seconds{upstream},
// created once per app. Label children are resolved here, at start-up: prom-client's `labels()`
// hashes and allocates on every call, so an attempt only calls `inc()` and `observe()`.
import { Counter, Histogram, type Registry } from 'prom-client'

export const OUTCOMES = ['success', 'error', 'timeout'] as const
export type Outcome = (typeof OUTCOMES)[number]

/** Bounds around the 2 s default timeout: a timed-out attempt lands in the 2 s bucket or just above. */
export const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 5, 10] as const

/** One upstream's series, resolved once. */
export type UpstreamCells = Readonly<{
  outcomes: Readonly<Record<Outcome, Readonly<{ inc(): void }>>>
  duration: Readonly<{ observe(seconds: number): void }>
}>

/** Label values come from configuration (the provider names), never from a request. */
export const createUpstreamMetrics = (registry: Registry, upstreams: readonly string[]): ReadonlyMap<string, UpstreamCells> => {
  const requests = new Counter({
    name: 'svc_upstream_requests_total',
    help: 'Requests to third-party upstreams, by outcome (success, error, timeout).',
    labelNames: ['upstream', 'outcome'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'svc_upstream_request_duration_seconds',
    help: 'Duration of requests to third-party upstreams in seconds, body included.',
    labelNames: ['upstream'] as const,
    buckets: [...UPSTREAM_BUCKETS],
    registers: [registry],
  })
  return new Map(
    upstreams.map((upstream) => {
      const outcome = (name: Outcome): { inc(): void } => {
        const child = requests.labels(upstream, name)
        // Every series exists from start-up at 0, so rate() sees the first failure as an increase.
        child.inc(0)
        return child
      }
      duration.zero({ upstream })
      return [
        upstream,
        { outcomes: { success: outcome('success'), error: outcome('error'), timeout: outcome('timeout') }, duration: duration.labels(upstream) },
      ]
    }),
  )
}
