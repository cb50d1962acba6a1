// The drift checks' series: names, help and labels as declared, and the window's rows read at scrape.
import { Registry } from 'prom-client'
import t from 'tap'
import { ALERT_KINDS, createDriftMetrics } from '../../lib/drift/metrics.js'
import { sample } from '../fixtures/metrics-text.js'

t.test('the series, in the order declared, each with its TYPE', async (t) => {
  const registry = new Registry()
  createDriftMetrics(registry, () => [])
  const types = (await registry.metrics()).split('\n').filter((line) => line.startsWith('# TYPE '))
  t.same(types, [
    '# TYPE svc_drift_psi gauge',
    '# TYPE svc_drift_alerts_total counter',
    '# TYPE svc_drift_checks_total counter',
    '# TYPE svc_drift_prediction_psi gauge',
    '# TYPE svc_drift_prediction_alerts_total counter',
    '# TYPE svc_drift_last_check_timestamp_seconds gauge',
    '# TYPE svc_drift_window_samples gauge',
  ])
  t.same(ALERT_KINDS, ['moderate', 'severe', 'spike'])
})

t.test('the help lines name the closed sets their labels take', async (t) => {
  const registry = new Registry()
  createDriftMetrics(registry, () => [])
  const text = await registry.metrics()
  t.match(text, '# HELP svc_drift_alerts_total Drift checks that found a feature at or above a threshold, by severity (moderate, severe, spike).')
  t.match(text, '# HELP svc_drift_checks_total Drift checks per model, by result (ok, insufficient_data, no_reference, error).')
})

t.test('the series written through what it returns', async (t) => {
  const registry = new Registry()
  const drift = createDriftMetrics(registry, () => [])
  drift.features.psi.set({ model: 'iris', feature: 'sepal_length' }, 0.3)
  drift.features.alerts.inc({ model: 'iris', feature: 'sepal_length', severity: 'severe' })
  drift.predictions.psi.set({ model: 'iris', output: 'label' }, 0.1)
  drift.predictions.alerts.inc({ model: 'iris', output: 'label', severity: 'moderate' })
  drift.checks.inc({ model: 'iris', result: 'ok' })
  drift.lastCheck.set({ model: 'iris' }, 1700000000)
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_drift_psi', { model: 'iris', feature: 'sepal_length' }), 0.3)
  t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'sepal_length', severity: 'severe' }), 1)
  t.equal(sample(text, 'svc_drift_prediction_psi', { model: 'iris', output: 'label' }), 0.1)
  t.equal(sample(text, 'svc_drift_prediction_alerts_total', { model: 'iris', output: 'label', severity: 'moderate' }), 1)
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'iris', result: 'ok' }), 1)
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris' }), 1700000000)
})

t.test("the window's rows are read at each scrape, and a model gone from them loses its series", async (t) => {
  const registry = new Registry()
  let windows: Array<readonly [string, number]> = [
    ['iris', 12],
    ['cars', 3],
  ]
  createDriftMetrics(registry, () => windows)
  let text = await registry.metrics()
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'iris' }), 12)
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'cars' }), 3)
  windows = [['iris', 20]]
  text = await registry.metrics()
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'iris' }), 20)
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'cars' }), undefined)
})
