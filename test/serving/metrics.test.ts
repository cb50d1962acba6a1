// The ML series: children resolved once per served version, shared across reloads of the same one.
import { Registry } from 'prom-client'
import t from 'tap'
import { createModelMetrics } from '../../lib/serving/metrics.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import { sample } from '../fixtures/metrics-text.js'

const served = (name: string, version: string): ServedModel => ({ name, version }) as unknown as ServedModel

t.test('cellsFor returns one cached object per served version, and a reload reuses its series', async (t) => {
  const registry = new Registry()
  const metrics = createModelMetrics(registry)
  const first = served('iris', '1')
  const cells = metrics.cellsFor(first)
  t.equal(metrics.cellsFor(first), cells, 'the same object on every call')
  t.equal(metrics.cellsFor(served('iris', '1')), cells, 'a reloaded build of the same version shares the series')
  const v2 = metrics.cellsFor(served('iris', '2'))
  t.not(v2, cells)
  t.equal(v2.batchSize, cells.batchSize, 'batch size is per model')
})

t.test("a version's series exist at 0 from the publish that serves it, before any request", async (t) => {
  const registry = new Registry()
  const metrics = createModelMetrics(registry)
  const [v1, v2] = [served('iris', '1'), served('iris', '2')]
  metrics.track([v1, v2])
  const text = await registry.metrics()
  for (const version of ['1', '2']) {
    for (const outcome of ['success', 'client_error', 'server_error'])
      t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version, outcome }), 0, `version ${version} ${outcome}`)
    t.equal(sample(text, 'svc_model_predictions_total', { model: 'iris', version }), 0)
    t.equal(sample(text, 'svc_model_prediction_duration_seconds_bucket', { model: 'iris', version, le: '0.0001' }), 0)
    t.equal(sample(text, 'svc_model_prediction_duration_seconds_count', { model: 'iris', version }), 0)
  }
  t.equal(sample(text, 'svc_model_prediction_batch_size_count', { model: 'iris' }), 0)
  metrics.cellsFor(v1).outcomes.success.inc()
  metrics.cellsFor(v1).predictions.inc(2)
  const after = await registry.metrics()
  t.equal(sample(after, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }), 1, 'a request counts into them')
  t.equal(sample(after, 'svc_model_predictions_total', { model: 'iris', version: '1' }), 2)
})

t.test('a version no longer served loses its series at the next publish; the others keep theirs', async (t) => {
  const registry = new Registry()
  const metrics = createModelMetrics(registry)
  const [v1, v2] = [served('iris', '1'), served('iris', '2')]
  metrics.cellsFor(v1).outcomes.success.inc()
  metrics.cellsFor(v2).predictions.inc(3)
  metrics.track([v1, v2])
  t.equal(sample(await registry.metrics(), 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }), 1, 'kept while served')
  metrics.track([v2])
  const text = await registry.metrics()
  t.notMatch(text, /version="1"/, 'every series of version 1 is gone')
  t.equal(sample(text, 'svc_model_predictions_total', { model: 'iris', version: '2' }), 3)
  t.equal(sample(text, 'svc_model_prediction_batch_size_count', { model: 'iris' }), 0, 'the per-model series stay')
  metrics.cellsFor(v1).outcomes.success.inc()
  t.notMatch(await registry.metrics(), /version="1"/, 'a request still running on the retired build counts where no scrape reads')
  const back = served('iris', '1')
  metrics.cellsFor(back).outcomes.success.inc()
  t.equal(
    sample(await registry.metrics(), 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }),
    1,
    'listed again, a new build starts from 0',
  )
})
