// The payload log's series: made at 0 when built, the queue depth read at scrape, the cells it
// returns being the ones scraped.
import { Registry } from 'prom-client'
import t from 'tap'
import { createPayloadMetrics, DROP_REASONS, PAYLOAD_OUTCOMES, WRITE_DURATION_BUCKETS } from '../../../lib/serving/payload/metrics.js'
import { count, observe } from '../../../lib/telemetry/metrics/cells.js'
import { sample } from '../../fixtures/metrics-text.js'

t.test('every outcome at 0, the depth as the callback says, before anything is written', async (t) => {
  const registry = new Registry()
  createPayloadMetrics(registry, () => 7)
  const text = await registry.metrics()
  for (const outcome of PAYLOAD_OUTCOMES) t.equal(sample(text, 'svc_payload_log_events_total', { outcome }), 0, outcome)
  for (const reason of DROP_REASONS) t.equal(sample(text, 'svc_payload_log_dropped_total', { reason }), 0, reason)
  t.equal(sample(text, 'svc_payload_log_queue_depth', {}), 7)
  t.equal(sample(text, 'svc_payload_log_write_duration_seconds_count', {}), 0)
  t.match(text, '# TYPE svc_payload_log_events_total counter')
  t.match(text, '# TYPE svc_payload_log_queue_depth gauge')
  t.match(text, '# TYPE svc_payload_log_write_duration_seconds histogram')
})

t.test('the returned cells are what the scrape reads', async (t) => {
  const registry = new Registry()
  let depth = 0
  const cells = createPayloadMetrics(registry, () => depth)
  t.ok(Object.isFrozen(cells.outcomes))
  count(cells.outcomes.written, undefined)
  count(cells.outcomes.written, undefined)
  count(cells.outcomes.failed, undefined)
  observe(cells.duration, 0.003, undefined)
  depth = 2
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_payload_log_events_total', { outcome: 'written' }), 2)
  t.equal(sample(text, 'svc_payload_log_events_total', { outcome: 'dropped' }), 0)
  t.equal(sample(text, 'svc_payload_log_events_total', { outcome: 'failed' }), 1)
  t.equal(sample(text, 'svc_payload_log_queue_depth', {}), 2)
  t.equal(sample(text, 'svc_payload_log_write_duration_seconds_bucket', { le: '0.001' }), 0)
  t.equal(sample(text, 'svc_payload_log_write_duration_seconds_bucket', { le: '0.005' }), 1)
  t.equal(sample(text, 'svc_payload_log_write_duration_seconds_count', {}), 1)
})

t.test('the buckets run from half a millisecond to ten seconds', async (t) => {
  t.same(WRITE_DURATION_BUCKETS, [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10])
})
