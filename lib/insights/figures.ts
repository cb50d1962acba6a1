// The service's own live telemetry as single figures, for the /api/insights stream: requests in
// flight, request rate, p95 latency, event-loop lag and heap used. Read when an event is produced,
// from the same sources /metrics shows, so every figure is real.
import type { Metric, Registry } from 'prom-client'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { DURATION_BUCKETS } from '../telemetry/metrics/http-metrics.js'
import type { MetricsRegistry } from '../telemetry/metrics/registry.js'

export type Figure = Readonly<{ metric: string; value: number | null; unit: string }>

export type Figures = Readonly<{
  /** The figure at `index`, cycling through them all. */
  read(index: number): Promise<Figure>
}>

export type FiguresOptions = Readonly<{
  metrics: MetricsRegistry
  /** Monotonic milliseconds, for the request rate's window. */
  now?: () => number
  heapUsed?: () => number
}>

/**
 * The event-loop monitor's sampling period: each sample is this long plus the lag. Kept at
 * prom-client's 10 ms (its `eventLoopMonitoringPrecision` default), so both histograms wake the loop
 * in the same passes; see createFigures.
 */
export const LAG_RESOLUTION_MS = 10
/** A request rate over a shorter window is mostly noise; readings within it repeat the last rate. */
export const RATE_WINDOW_MS = 1000

type Sample = Readonly<{ labels: Readonly<Partial<Record<string, string | number>>>; value: number; metricName?: string }>

const round = (value: number, digits: number): number => {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

// `a[i]` for an index in range (one per bound, plus the total), which noUncheckedIndexedAccess
// cannot see: this module's numeric assertion.
const at = (a: readonly number[], i: number): number => a[i] as number

/**
 * The q-quantile of a histogram, as Prometheus' histogram_quantile() estimates it: linear within
 * the bucket the rank falls in, the highest finite bound when it falls in +Inf, and null with no
 * observations. `cumulative` has one count per bound plus the +Inf count (the total).
 */
export const quantile = (q: number, bounds: readonly number[], cumulative: readonly number[]): number | null => {
  const total = at(cumulative, bounds.length)
  if (total === 0) return null
  const rank = q * total
  let i = 0
  while (at(cumulative, i) < rank) i++
  if (i === bounds.length) return at(bounds, i - 1)
  const lower = i === 0 ? 0 : at(bounds, i - 1)
  const below = i === 0 ? 0 : at(cumulative, i - 1)
  return lower + ((at(bounds, i) - lower) * (rank - below)) / (at(cumulative, i) - below)
}

/** Samples of one metric as the registry renders them (the HTTP series are synchronous collectors). */
const samples = async (metric: Metric): Promise<Iterable<Sample>> => (await metric.get()).values

/** A series the registry holds from its start (lib/telemetry/metrics/registry.ts); without it the figures have no source. */
const registered = (registry: Registry, name: string): Metric => {
  const metric = registry.getSingleMetric(name)
  if (metric === undefined) throw new TypeError(`the metrics registry holds no ${name}`)
  return metric
}

export const createFigures = ({ metrics, now = () => performance.now(), heapUsed = () => process.memoryUsage().heapUsed }: FiguresOptions): Figures => {
  // The HTTP series are read through the registry's public interface, as a scrape reads them.
  const requests = registered(metrics.prom, 'http_requests_total')
  const durations = registered(metrics.prom, 'http_request_duration_seconds')
  const bucketIndex = new Map<string, number>([...DURATION_BUCKETS.map((le, i) => [String(le), i] as const), ['+Inf', DURATION_BUCKETS.length]])
  // Created once: its timer is unref'd, so it never holds the process open. Its period is
  // prom-client's (nodejs_eventloop_lag_*, lib/telemetry/metrics/registry.ts) and both are enabled in one
  // synchronous run of createApp, so libuv arms their timers from one cached loop time and fires them
  // in one pass; it re-arms a repeating timer from the loop time of the pass that ran it, so they stay
  // together (one armed at another phase joins within ~1 s). An idle instance wakes ~100 times a
  // second, not ~200: main-thread voluntary context switches, idle, Node 20.20: 100/s with both, 99
  // with one, 1–2 with neither, ~220 with a 7 ms period here. test/integration/idle-wakeups.test.ts holds it.
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS })
  lag.enable()

  let mark = { at: now(), total: 0 }
  let rate = 0
  const requestRate = async (): Promise<number> => {
    const at = now()
    if (at - mark.at < RATE_WINDOW_MS) return rate
    let total = 0
    for (const sample of await samples(requests)) total += sample.value
    rate = round((total - mark.total) / ((at - mark.at) / 1000), 3)
    mark = { at, total }
    return rate
  }

  const p95 = async (): Promise<number | null> => {
    const cumulative = new Array<number>(DURATION_BUCKETS.length + 1).fill(0)
    for (const sample of await samples(durations)) {
      const i = sample.metricName?.endsWith('_bucket') === true ? bucketIndex.get(String(sample.labels['le'])) : undefined
      if (i !== undefined) cumulative[i] = at(cumulative, i) + sample.value
    }
    const value = quantile(0.95, DURATION_BUCKETS, cumulative)
    return value === null ? null : round(value, 4)
  }

  /** p99 of the lag since the previous reading; null before the first sample. */
  const eventLoopLag = (): number | null => {
    if (lag.count === 0) return null
    const value = Math.max(0, lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS)
    lag.reset()
    return round(value, 3)
  }

  const readers: ReadonlyArray<() => Promise<Figure> | Figure> = [
    () => ({ metric: 'http_requests_in_flight', value: metrics.http.inFlight, unit: 'requests' }),
    async () => ({ metric: 'http_request_rate', value: await requestRate(), unit: 'requests_per_second' }),
    async () => ({ metric: 'http_request_duration_p95', value: await p95(), unit: 'seconds' }),
    () => ({ metric: 'event_loop_lag_p99', value: eventLoopLag(), unit: 'milliseconds' }),
    () => ({ metric: 'heap_used', value: heapUsed(), unit: 'bytes' }),
  ]
  return { read: async (index) => (readers[index % readers.length] as () => Promise<Figure> | Figure)() }
}
