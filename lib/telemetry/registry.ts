// The prom-client registry behind GET /metrics: the HTTP series, Node/process defaults and
// svc_build_info, rendered as Prometheus text 0.0.4 or OpenMetrics as the scraper asks.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import { HttpMetrics } from './http-metrics.js'

export type Exposition = Readonly<{ contentType: string; text: string }>

export type MetricsRegistry = Readonly<{
  registry: Registry
  http: HttpMetrics
  /** Renders every series in the format the `Accept` header prefers. */
  render(accept: string | undefined): Promise<Exposition>
}>

export const createMetricsRegistry = (options: Readonly<{ environment: string; version: string }>): MetricsRegistry => {
  const registry = new Registry()
  registry.setDefaultLabels({ environment: options.environment })
  const http = new HttpMetrics(options.environment)
  http.registerIn(registry)
  collectDefaultMetrics({ register: registry })
  new Gauge({
    name: 'svc_build_info',
    help: 'Build information; the value is always 1.',
    labelNames: ['version', 'node_version'],
    registers: [registry],
  }).set({ version: options.version, node_version: process.version }, 1)

  // One registry renders both formats by switching its content type for the scrape; metrics() is
  // async, so scrapes are serialised to keep one scrape's switch from leaking into another's.
  let previous: Promise<unknown> = Promise.resolve()
  const render = (accept: string | undefined): Promise<Exposition> => {
    const contentType = prefersOpenMetrics(accept) ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE
    const next = previous.then(async () => {
      registry.setContentType(contentType as typeof Registry.PROMETHEUS_CONTENT_TYPE)
      return { contentType, text: await registry.metrics() }
    })
    previous = next.catch(() => undefined)
    return next
  }
  return { registry, http, render }
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
