// The prom-client registry behind GET /metrics: the HTTP series, Node/process defaults and
// svc_build_info, rendered as Prometheus text 0.0.4 or OpenMetrics as the scraper asks, by the
// exposition writer (./exposition.ts) rather than prom-client's `metrics()`, which formats the whole
// registry in one turn of the loop. One render is in flight per format: scrapes that arrive during
// it get its bytes.
//
// prom-client 15.1.3 facts relied on: `enableExemplars` is refused unless the metric's registry is
// OpenMetrics at construction; getMetricsAsArray() hands out the registered objects in registration
// order, each read through get() (getForPromString() for a histogram). The event-loop lag histogram
// cannot be shared with the insights figure: prom-client resets it on every scrape, the insights
// figure on every reading.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import { createExpositionWriter, type ExpositionWriter } from './exposition.js'
import { HttpMetrics } from './http-metrics.js'

const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const

export type Exposition = Readonly<{
  contentType: string
  /** The exposition as the endpoint sends it, UTF-8. */
  body: Buffer
  /** The same, decoded (on each read): for readers that want a string, not for the endpoint. */
  readonly text: string
  /** Called once `body` is all sent: its buffer serves the next scrape (ExpositionWriter.release). */
  release(): void
}>

/**
 * One render's body, as each scrape that shares it gets it: the buffer goes back to the writer once
 * every one of them has called `release` (once each). A scrape whose connection failed never does,
 * and the buffer is then left to the collector (ExpositionWriter).
 */
const shared = (render: Render, body: Buffer, writer: ExpositionWriter): Exposition => {
  let isReleased = false
  return {
    contentType: render.contentType,
    body,
    get text() {
      return body.toString('utf8')
    },
    release: () => {
      if (isReleased) return
      isReleased = true
      if (--render.scrapes === 0) writer.release(body)
    },
  }
}

/** A render in flight, and how many scrapes wait for its body (then, how many have yet to release it). */
type Render = { scrapes: number; readonly body: Promise<Buffer>; readonly contentType: string }

export type MetricsRegistry = Readonly<{
  /** The prom-client registry every series of the service registers in. */
  prom: Registry
  http: HttpMetrics
  /** Renders every series in the format the `Accept` header prefers. */
  render(accept: string | undefined): Promise<Exposition>
}>

export type MetricsRegistryOptions = Readonly<{
  environment: string
  version: string
  /**
   * Log lines lost so far because stdout or stderr went away (the line writers' `dropped()`),
   * exposed as svc_log_lines_dropped_total; without it the series is not exported.
   */
  droppedLogLines?: (() => number) | undefined
}>

export const createMetricsRegistry = (options: MetricsRegistryOptions): MetricsRegistry => {
  const registry = new Registry()
  const defaultLabels = Object.freeze({ environment: options.environment })
  registry.setDefaultLabels(defaultLabels)
  const http = new HttpMetrics(options.environment)
  http.registerIn(registry)
  // Among the defaults, nodejs_eventloop_lag_* come from a monitorEventLoopDelay histogram on a 10 ms
  // timer (prom-client 15.1.3). The insights figures' histogram (lib/insights/figures.ts) has the same
  // period and is enabled in the same synchronous run of createApp, so both fire in one libuv pass: an
  // idle instance wakes ~100 times a second, not ~200. Keep it so; test/integration/idle-wakeups.test.ts
  // holds the idle rate.
  collectDefaultMetrics({ register: registry })
  // These gauges end in `_total`, which promtool's lint rejects for non-counters; the per-type
  // gauges (nodejs_active_handles{type} …) remain, and sum() over them gives the same totals.
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name)
  new Gauge({
    name: 'svc_build_info',
    help: 'Build information; the value is always 1.',
    labelNames: ['version', 'node_version'],
    registers: [registry],
  }).set({ version: options.version, node_version: process.version }, 1)
  if (options.droppedLogLines !== undefined) followCount(registry, options.droppedLogLines)

  // One render in flight per format, and the scrapes that arrive meanwhile get its bytes: at 500
  // models a render takes ~40 ms and its body ~4 MiB, so scrapes queued one render each (several
  // Prometheus servers, a retry, a dashboard) held a body apiece and took the loop's slices one
  // after the other, without bound. Renders of the two formats are serialised: interleaved, they
  // would hold two texts and share the loop's slices, each taking twice as long.
  const writer = createExpositionWriter(defaultLabels)
  let previous: Promise<unknown> = Promise.resolve()
  const pending: [Render | undefined, Render | undefined] = [undefined, undefined]
  const start = (openMetrics: boolean, format: 0 | 1): Render => {
    const body = previous
      .then(() => writer.render(registry.getMetricsAsArray(), openMetrics))
      // Scrapes from here on get a render of their own, of the series as they are then.
      .finally(() => (pending[format] = undefined))
    previous = body.catch(() => undefined)
    return { scrapes: 0, body, contentType: openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE }
  }
  const render = (accept: string | undefined): Promise<Exposition> => {
    const openMetrics = prefersOpenMetrics(accept)
    const format = openMetrics ? 1 : 0
    const joined = (pending[format] ??= start(openMetrics, format))
    joined.scrapes++
    return joined.body.then((body) => shared(joined, body, writer))
  }
  return { prom: registry, http, render }
}

/**
 * svc_log_lines_dropped_total follows the writers' own count: nothing is added on the logging path,
 * and each scrape brings the counter up to the count read then.
 */
const followCount = (registry: Registry, read: () => number): void => {
  let reported = 0
  new Counter({
    name: 'svc_log_lines_dropped_total',
    help: 'Log lines lost because their reader went away (stdout or stderr closed: EPIPE, EBADF).',
    registers: [registry],
    collect() {
      const count = read()
      this.inc(count - reported)
      reported = count
    },
  })
}

/** True when `Accept` ranks OpenMetrics above the classic text format (q-values honoured). */
export const prefersOpenMetrics = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  let openMetrics = 0
  let text = 0
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase())
    const qParam = params.find((p) => p.startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2)) || 0
    if (type === 'application/openmetrics-text') openMetrics = Math.max(openMetrics, q)
    else if (type === 'text/plain' || type === '*/*' || type === 'text/*') text = Math.max(text, q)
  }
  return openMetrics > 0 && openMetrics >= text
}
