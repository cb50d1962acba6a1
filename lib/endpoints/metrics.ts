// GET /metrics: Prometheus text 0.0.4, or OpenMetrics when the scraper's Accept asks for it.
//
// OpenMetrics 1.0 when `Accept` prefers it (q-values honoured), with `Cache-Control: no-store`. In
// OpenMetrics, `http_requests_total` and the duration buckets carry the `trace_id` of the latest
// sampled request as an exemplar; the text format never does.
import { Registry } from 'prom-client'
import type { RouteDoc } from '../core/route-doc.js'
import type { Handler } from '../core/pipeline.js'
import type { MetricsRegistry } from '../telemetry/metrics/registry.js'

export const getMetrics =
  (metrics: MetricsRegistry): Handler =>
  async (ctx) => {
    const { contentType, body, release } = await metrics.render(ctx.header('accept'))
    return { kind: 'text', status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, text: body, sent: release }
  }

const EXPOSITION = { schema: { type: 'string' } }

export const METRICS_DOC: RouteDoc = {
  operationId: 'getMetrics',
  summary: 'Prometheus metrics',
  description:
    'The HTTP series (`http_requests_total`, `http_request_duration_seconds`, `http_requests_in_flight`, `http_exceptions_total`), ' +
    'the model, drift, upstream and health-check series, and the process defaults. Prometheus text 0.0.4, or OpenMetrics 1.0 ' +
    '(with exemplars) when the `Accept` header prefers `application/openmetrics-text`. Scrapes are not counted in the HTTP series.',
  tags: ['metrics'],
  responses: {
    '200': {
      description: 'The exposition; `Cache-Control: no-store`',
      content: {
        [Registry.PROMETHEUS_CONTENT_TYPE]: { ...EXPOSITION, example: 'http_requests_in_flight{environment="dev"} 1\n' },
        [Registry.OPENMETRICS_CONTENT_TYPE]: EXPOSITION,
      },
    },
  },
}
