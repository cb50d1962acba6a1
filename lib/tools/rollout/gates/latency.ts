// The latency gates, P95 and P99: the share of the canary's requests slower than T = D + max(D/2,
// 1 ms), D the default version's P95 (or P99) over the same window, against 5 % (or 1 %), by its
// Wilson interval. The margin is SvcCanaryLatencyHigh's (ops/prometheus/rules/rollout.yml): more
// than 1.5 times the default's and more than 1 ms above it.
//
// Why a share and not the canary's own quantile: a quantile from histogram_quantile() is an
// interpolation within a bucket, with no interval; the share of requests above an edge is a count,
// which has one. T is seldom an edge, so the edge nearest T stands for it (the higher on a tie,
// the canary's benefit of the doubt): the histogram knows no finer, and the reason names the edge.
// Above the highest finite edge, that edge.
//
// Minimums: 400 canary requests for P95 and 2 000 for P99 (issue 50), 20 requests above the edge at
// the limit either way; below them the gate is inconclusive, with no early confident breach: a
// slow canary harms no answer. Bucket counts are cumulative, as Prometheus's `le`; a count below
// the one before (rounding in increase()) is raised to it, as histogram_quantile() does.
import { shareCheck, shareValues } from './share.js'
import { badFigure, combine, type GateResult, type GateValues, noData, percent } from './verdict.js'

/** One histogram bucket of the canary over the window: requests at or under `le` seconds, +Inf last. */
export type Bucket = Readonly<{ le: number; count: number }>

export type LatencyInput = Readonly<{
  /** The canary's buckets, `le` ascending, the last +Inf. */
  buckets: readonly Bucket[]
  /** D: the default version's P95 (or P99) in seconds over the same window. */
  defaultQuantile: number
}>

export type LatencyGateOptions = Readonly<{
  minRequests: number
  /** The share of canary requests above the edge that fails. */
  limit: number
  /** The least margin over D, in seconds: 1 ms. */
  floor: number
}>

export const LATENCY_QUANTILES = ['p95', 'p99'] as const
export type LatencyQuantile = (typeof LATENCY_QUANTILES)[number]

export const LATENCY_GATE_DEFAULTS: Readonly<Record<LatencyQuantile, LatencyGateOptions>> = Object.freeze({
  p95: Object.freeze({ minRequests: 400, limit: 0.05, floor: 0.001 }),
  p99: Object.freeze({ minRequests: 2000, limit: 0.01, floor: 0.001 }),
})

/** Seconds as a person reads them, in milliseconds: 0.0015 → "1.5 ms". */
const ms = (seconds: number): string => `${Number((1000 * seconds).toPrecision(3))} ms`

/** Why the buckets cannot be read, or undefined: le ascending, finite and ≥ 0 but the last, +Inf. */
const badBuckets = (buckets: readonly Bucket[]): string | undefined => {
  const last = buckets.at(-1)
  if (last === undefined) return 'the canary has no histogram buckets'
  if (last.le !== Number.POSITIVE_INFINITY) return `the last bucket is le=${last.le}, not le=+Inf`
  let previous: number | undefined
  for (const { le, count } of buckets) {
    const bad = badFigure({ [`bucket le=${le} count`]: count })
    if (bad !== undefined) return bad
    if (!(le >= 0)) return `bucket edge le=${le} is no duration (0 s or more)`
    if (previous !== undefined && !(le > previous)) return `bucket edges must ascend: le=${le} follows le=${previous}`
    previous = le
  }
  return undefined
}

/** The finite edge nearest `target` (the higher on a tie), undefined with none, and the cumulative count at it. */
const nearestEdge = (buckets: readonly Bucket[], target: number): Readonly<{ le: number; count: number }> | undefined => {
  let best: { le: number; count: number } | undefined
  let running = 0
  for (const { le, count } of buckets.slice(0, -1)) {
    running = Math.max(running, count)
    if (best === undefined || Math.abs(le - target) <= Math.abs(best.le - target)) best = { le, count: running }
  }
  return best
}

/** The canary's P95 (or P99) latency against the default's. */
export const latencyGate = (quantile: LatencyQuantile, input: LatencyInput, options: Partial<LatencyGateOptions> = {}): GateResult => {
  const gate = quantile === 'p95' ? 'latency_p95' : 'latency_p99'
  const { minRequests, limit, floor } = { ...LATENCY_GATE_DEFAULTS[quantile], ...options }
  const d = input.defaultQuantile
  const given: GateValues = { [`default_${quantile}`]: d }
  const bad = badFigure(given) ?? badBuckets(input.buckets)
  if (bad !== undefined) return noData(gate, bad, given)
  const threshold = d + Math.max(d / 2, floor)
  const edge = nearestEdge(input.buckets, threshold)
  if (edge === undefined) return noData(gate, 'the canary has only the +Inf bucket, no edge to compare with', given)
  const requests = Math.max(...input.buckets.map((bucket) => bucket.count))
  const above = requests - edge.count
  const { check, figures } = shareCheck({
    count: above,
    total: requests,
    limit,
    minRows: minRequests,
    criticalFrom: minRequests,
    what: `canary share of requests slower than ${ms(edge.le)}`,
    limitText:
      `the limit ${percent(limit)} (${ms(edge.le)} is the bucket edge nearest ${ms(threshold)}, ` +
      `the default's ${quantile.toUpperCase()} ${ms(d)} plus the larger of half of it and ${ms(floor)})`,
    unit: 'requests',
  })
  return combine(gate, [check], {
    ...given,
    threshold,
    edge: edge.le,
    canary_requests: requests,
    canary_above: above,
    limit,
    min_requests: minRequests,
    ...shareValues('canary', figures),
  })
}
