// The shadow series alone: every one at 0 from the publish that makes a version a model's shadow,
// its cells read as they are at a scrape, and gone with the publish that ends the role.
import { Registry } from 'prom-client'
import t from 'tap'
import { PREDICTION_DURATION_BUCKETS } from '../../../lib/models/inference/duration-buckets.js'
import { createShadowMetrics, SHADOW_OUTCOMES } from '../../../lib/serving/shadow/metrics.js'
import { sample } from '../../fixtures/metrics-text.js'

const V2 = { model: 'iris', version: '2' }

t.test("a version's every shadow series is at 0 once a publish makes it the shadow", async (t) => {
  const registry = new Registry()
  const metrics = createShadowMetrics(registry)
  t.notMatch(await registry.metrics(), /^svc_model_shadow/m, 'no shadow, no samples')
  const cells = metrics.track([{ name: 'iris', version: '2' }])
  t.same([...cells.keys()], ['iris/2'])
  const text = await registry.metrics()
  t.same(SHADOW_OUTCOMES, ['success', 'error', 'timeout'])
  for (const outcome of SHADOW_OUTCOMES) t.equal(sample(text, 'svc_model_shadow_predictions_total', { ...V2, outcome }), 0, outcome)
  for (const name of [
    'svc_model_shadow_rows_total',
    'svc_model_shadow_disagreements_total',
    'svc_model_shadow_dropped_total',
    'svc_model_shadow_duration_seconds_count',
  ])
    t.equal(sample(text, name, V2), 0, name)
  for (const le of PREDICTION_DURATION_BUCKETS) t.equal(sample(text, 'svc_model_shadow_duration_seconds_bucket', { ...V2, le: String(le) }), 0, `le=${le}`)
  t.match(text, /^# TYPE svc_model_shadow_duration_seconds histogram$/m)
  t.match(text, /^# HELP svc_model_shadow_dropped_total Shadow copies dropped because the shadow queue was full/m)
})

t.test('a scrape reads the cells as they are; the same version tracked again keeps them', async (t) => {
  const registry = new Registry()
  const metrics = createShadowMetrics(registry)
  const cells = metrics.track([{ name: 'iris', version: '2' }]).get('iris/2')
  if (cells === undefined) throw new Error('no cells for iris/2')
  cells.outcomes.error.value += 2
  cells.rows.value += 5
  cells.disagreements.value += 1
  cells.dropped.value += 3
  t.equal(metrics.track([{ name: 'iris', version: '2' }]).get('iris/2'), cells, 'a publish that keeps the shadow keeps its cells')
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_model_shadow_predictions_total', { ...V2, outcome: 'error' }), 2)
  t.equal(sample(text, 'svc_model_shadow_rows_total', V2), 5)
  t.equal(sample(text, 'svc_model_shadow_disagreements_total', V2), 1)
  t.equal(sample(text, 'svc_model_shadow_dropped_total', V2), 3)
})

t.test("a version that stops being the shadow loses its series at that publish; another model's stay", async (t) => {
  const registry = new Registry()
  const metrics = createShadowMetrics(registry)
  const before = metrics.track([
    { name: 'iris', version: '2' },
    { name: 'cars', version: '3' },
  ])
  ;(before.get('iris/2')?.rows as { value: number }).value = 7
  const after = metrics.track([
    { name: 'iris', version: '4' },
    { name: 'cars', version: '3' },
  ])
  t.same([...after.keys()].sort(), ['cars/3', 'iris/4'])
  const text = await registry.metrics()
  t.notMatch(text, /version="2"/, 'every series of iris 2 is gone')
  t.equal(sample(text, 'svc_model_shadow_rows_total', { model: 'iris', version: '4' }), 0, 'the new shadow starts at 0')
  t.equal(sample(text, 'svc_model_shadow_rows_total', { model: 'cars', version: '3' }), 0)
  const back = metrics.track([{ name: 'iris', version: '2' }]).get('iris/2')
  t.equal(back?.rows.value, 0, 'taken again, a version starts from 0')
})
