import t from 'tap'
import { modelsCheck } from '../../lib/health/models.js'
import type { ModelEntry } from '../../lib/models/registry/registry.js'

const entry = (name: string): ModelEntry => ({
  name,
  state: 'UNAVAILABLE',
  reason: 'sha256 mismatch',
  defaultVersion: '1',
  versions: [],
  versionStates: [{ version: '1', state: 'FAILED', reason: 'sha256 mismatch' }],
  platform: 'svc',
  canary: undefined,
  shadow: undefined,
  rolloutError: undefined,
})

t.test('the models component: ok while one model serves, failed and saying why otherwise', async (t) => {
  t.same(await modelsCheck({ isReady: () => true, entries: () => [] })(), { status: 'ok', latency_ms: 0 })
  t.same(await modelsCheck({ isReady: () => false, entries: () => [] })(), { status: 'fail', latency_ms: 0, error: 'no model in the store' })
  t.same(await modelsCheck({ isReady: () => false, entries: () => [entry('iris'), entry('cars')] })(), {
    status: 'fail',
    latency_ms: 0,
    error: 'none of 2 models could be loaded',
  })
})
