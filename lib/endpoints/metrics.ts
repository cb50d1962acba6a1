// GET /metrics: Prometheus text 0.0.4, or OpenMetrics when the scraper's Accept asks for it.
import type { Handler } from '../pipeline.js'
import type { MetricsRegistry } from '../telemetry/registry.js'

export const getMetrics = (metrics: MetricsRegistry): Handler => async (ctx) => {
  const { contentType, text } = await metrics.render(ctx.header('accept'))
  return { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, text }
}
