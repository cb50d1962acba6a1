// The gauges set from each published state: which version a model serves by default, the share
// each role takes, and the series of what is no longer served dropped.
import { Registry } from 'prom-client'
import t from 'tap'
import { createReadyGauge } from '../../../lib/models/registry/ready-gauge.js'
import { type ModelSlot, NO_ROLLOUT, type Rollout, type ServedModel } from '../../../lib/models/registry/state.js'
import { sample } from '../../fixtures/metrics-text.js'

// Only name and version are read here: the rest of a build is the registry's.
const build = (name: string, version: string): ServedModel => ({ name, version }) as ServedModel

const slot = (builds: readonly ServedModel[], defaultModel: ServedModel | undefined, rollout: Rollout = NO_ROLLOUT): ModelSlot =>
  ({ served: new Map(builds.map((b) => [b.version, b])), defaultModel, rollout }) as unknown as ModelSlot

t.test('1 for the default version, 0 for the other loaded ones; the default takes 100 %', async (t) => {
  const registry = new Registry()
  const publish = createReadyGauge(registry)
  const v1 = build('iris', '1')
  const v2 = build('iris', '2')
  t.same(publish(new Map([['iris', slot([v1, v2], v2)]])), [v1, v2])
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_model_ready', { model: 'iris', version: '1' }), 0)
  t.equal(sample(text, 'svc_model_ready', { model: 'iris', version: '2' }), 1)
  t.equal(sample(text, 'svc_model_rollout_percent', { model: 'iris', version: '2', role: 'default' }), 100)
})

t.test('a canary takes its share from the default; a shadow has its own', async (t) => {
  const registry = new Registry()
  const publish = createReadyGauge(registry)
  const [v1, v2, v3] = [build('iris', '1'), build('iris', '2'), build('iris', '3')]
  const rollout: Rollout = { canary: { served: v2, percent: 10 }, shadow: { served: v3, percent: 50 }, logPercent: undefined }
  publish(new Map([['iris', slot([v1, v2, v3], v1, rollout)]]))
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_model_rollout_percent', { model: 'iris', version: '1', role: 'default' }), 90)
  t.equal(sample(text, 'svc_model_rollout_percent', { model: 'iris', version: '2', role: 'canary' }), 10)
  t.equal(sample(text, 'svc_model_rollout_percent', { model: 'iris', version: '3', role: 'shadow' }), 50)
})

t.test('a version no longer served and a role no longer declared lose their series', async (t) => {
  const registry = new Registry()
  const publish = createReadyGauge(registry)
  const [v1, v2] = [build('iris', '1'), build('iris', '2')]
  publish(new Map([['iris', slot([v1, v2], v1, { canary: { served: v2, percent: 5 }, shadow: undefined, logPercent: undefined })]]))
  publish(new Map([['iris', slot([v1], v1)]]))
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_model_ready', { model: 'iris', version: '2' }), undefined)
  t.equal(sample(text, 'svc_model_rollout_percent', { model: 'iris', version: '2', role: 'canary' }), undefined)
  t.equal(sample(text, 'svc_model_rollout_percent', { model: 'iris', version: '1', role: 'default' }), 100)
})

t.test('a model with no default (UNAVAILABLE) has no rollout series', async (t) => {
  const registry = new Registry()
  const publish = createReadyGauge(registry)
  t.same(publish(new Map([['iris', slot([], undefined)]])), [])
  t.notMatch(await registry.metrics(), /svc_model_rollout_percent\{/)
})
