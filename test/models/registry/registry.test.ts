// Start-up loading: every model READY or UNAVAILABLE with a reason, versions and the default,
// svc_model_ready, and what the registry refuses when it is built.
import t from 'tap'
import { Registry } from 'prom-client'
import { createModelRegistry } from '../../../lib/models/registry/registry.js'
import { StoreError } from '../../../lib/models/store/error.js'
import { createMemoryStore } from '../../../lib/models/store/memory.js'
import { createLogger } from '../../../lib/telemetry/logger.js'
import { artifactFile, corrupted, harness, isConsistent, manifest, shippedFiles } from '../../fixtures/model-registry.js'

const READY = (version: string) => ({ version, state: 'READY', reason: undefined })

t.test('load serves every shipped model, each compiled from its own artifact', async (t) => {
  const { registry, events } = harness()
  t.equal(registry.isReady(), false, 'nothing is ready before load')
  await registry.load()
  t.equal(registry.isReady(), true)
  t.same(registry.entries(), [
    { name: 'cars', state: 'READY', reason: undefined, defaultVersion: '1', versions: ['1'], versionStates: [READY('1')], platform: 'svc' },
    { name: 'iris', state: 'READY', reason: undefined, defaultVersion: '1', versions: ['1'], versionStates: [READY('1')], platform: 'svc' },
  ])
  const iris = registry.resolve('iris')
  t.ok(iris)
  t.match(iris, { name: 'iris', version: '1', model: { task: 'classification', classes: ['setosa', 'versicolor', 'virginica'] } })
  t.ok(isConsistent(iris!))
  t.equal(registry.resolve('iris', '1'), iris, 'the default and the version named are one model')
  t.equal(registry.resolve('cars')?.model.task, 'regression')
  t.ok(Object.isFrozen(iris) && Object.isFrozen(registry.entries()) && Object.isFrozen(registry.entry('iris')))
  t.same(
    events('model_loaded').map(({ level, model, version, sha256 }) => ({ level, model, version, sha256 })),
    [
      { level: 'info', model: 'cars', version: '1', sha256: registry.resolve('cars')?.model.sha256.slice(0, 12) },
      { level: 'info', model: 'iris', version: '1', sha256: iris?.model.sha256.slice(0, 12) },
    ],
  )
  t.same(events('model_reloaded'), [], 'a first load is not a reload')
})

t.test('an empty store loads nothing and is not ready', async (t) => {
  const { registry } = harness({})
  await registry.load()
  t.equal(registry.isReady(), false)
  t.same(registry.entries(), [])
  t.equal(registry.resolve('iris'), undefined)
  t.equal(registry.entry('iris'), undefined)
})

t.test('a corrupted artifact (sha256 mismatch) makes its model UNAVAILABLE while the others serve', async (t) => {
  const { registry, events } = harness({ ...shippedFiles(), 'iris/1/model.json': corrupted('iris') })
  await registry.load()
  t.equal(registry.isReady(), true, 'one READY model is enough')
  t.same(registry.entry('iris'), {
    name: 'iris',
    state: 'UNAVAILABLE',
    reason:
      'default version 1: iris/1/model.json: sha256: does not match the content: the file was changed or damaged after training; if it was edited on purpose, sign it: svc sign iris/1/model.json',
    defaultVersion: '1',
    versions: [],
    versionStates: [
      {
        version: '1',
        state: 'FAILED',
        reason:
          'iris/1/model.json: sha256: does not match the content: the file was changed or damaged after training; if it was edited on purpose, sign it: svc sign iris/1/model.json',
      },
    ],
    platform: 'svc',
  })
  t.equal(registry.resolve('iris'), undefined)
  t.equal(registry.resolve('iris', '1'), undefined)
  t.equal(registry.entry('cars')?.state, 'READY')
  t.ok(registry.resolve('cars'))
  t.same(
    events('model_unavailable').map(({ level, model, reason }) => ({ level, model, reason })),
    [{ level: 'error', model: 'iris', reason: registry.entry('iris')?.reason }],
  )
})

t.test('only UNAVAILABLE models: loaded, but not ready', async (t) => {
  const { registry } = harness({ 'iris/manifest.json': manifest('1'), 'iris/1/model.json': corrupted('iris') })
  await registry.load()
  t.equal(registry.entries().length, 1)
  t.equal(registry.isReady(), false)
})

t.test('versions: every listed one is served by name, the default without one', async (t) => {
  const { registry } = harness({
    'iris/manifest.json': manifest('2', ['10', '1', '2']),
    'iris/1/model.json': artifactFile('iris', '1'),
    'iris/2/model.json': artifactFile('iris', '2'),
    'iris/10/model.json': artifactFile('iris', '10'),
  })
  await registry.load()
  t.same(registry.entry('iris'), {
    name: 'iris',
    state: 'READY',
    reason: undefined,
    defaultVersion: '2',
    versions: ['1', '2', '10'],
    versionStates: [READY('1'), READY('2'), READY('10')],
    platform: 'svc',
  })
  t.equal(registry.resolve('iris')?.version, '2')
  t.equal(registry.resolve('iris', '1')?.version, '1')
  t.equal(registry.resolve('iris', '10')?.version, '10')
  t.equal(registry.resolve('iris', '3'), undefined, 'a version not loaded')
  t.equal(registry.resolve('cars'), undefined, 'a model not in the store')
  for (const version of ['1', '2', '10']) t.ok(isConsistent(registry.resolve('iris', version)!))
})

t.test('the default version is loaded whether or not versions lists it', async (t) => {
  const { registry } = harness({
    'iris/manifest.json': manifest('2', ['1']),
    'iris/1/model.json': artifactFile('iris', '1'),
    'iris/2/model.json': artifactFile('iris', '2'),
  })
  await registry.load()
  t.same(registry.entry('iris')?.versions, ['1', '2'])
  t.equal(registry.resolve('iris')?.version, '2')
})

t.test('a default version that cannot be loaded makes the model UNAVAILABLE, saying why', async (t) => {
  const { registry, events } = harness({
    'iris/manifest.json': manifest('3', ['1']),
    'iris/1/model.json': artifactFile('iris', '1'),
  })
  await registry.load()
  t.same(registry.entry('iris'), {
    name: 'iris',
    state: 'UNAVAILABLE',
    reason: 'default version 3: iris/3/model.json: not found in the model store',
    defaultVersion: '3',
    versions: [],
    versionStates: [READY('1'), { version: '3', state: 'FAILED', reason: 'iris/3/model.json: not found in the model store' }],
    platform: 'svc',
  })
  t.equal(registry.resolve('iris', '1'), undefined, 'an UNAVAILABLE model serves no version')
  const [line] = events('model_unavailable')
  t.match(line, { level: 'error', model: 'iris', reason: registry.entry('iris')?.reason, detail: 'iris/3/model.json not found in memory' })
  t.notOk(line && 'version' in line, 'the failure is the model’s, not one version’s')
})

t.test('another version that cannot be loaded is left out and logged; the model serves', async (t) => {
  const { registry, events } = harness({
    'iris/manifest.json': manifest('1', ['2']),
    'iris/1/model.json': artifactFile('iris', '1'),
    'iris/2/model.json': corrupted('iris'),
  })
  await registry.load()
  t.same(registry.entry('iris'), {
    name: 'iris',
    state: 'READY',
    reason: undefined,
    defaultVersion: '1',
    versions: ['1'],
    versionStates: [
      READY('1'),
      {
        version: '2',
        state: 'FAILED',
        reason:
          'iris/2/model.json: sha256: does not match the content: the file was changed or damaged after training; if it was edited on purpose, sign it: svc sign iris/2/model.json',
      },
    ],
    platform: 'svc',
  })
  t.equal(registry.resolve('iris', '2'), undefined)
  t.match(events('model_unavailable'), [{ level: 'error', model: 'iris', version: '2', reason: /^iris\/2\/model\.json: sha256: does not match/ }])
})

t.test('an artifact whose name or version is not that of its path is refused', async (t) => {
  const { registry } = harness({
    'iris/manifest.json': manifest('1'),
    'iris/1/model.json': artifactFile('cars', '1'),
    'cars/manifest.json': manifest('2'),
    'cars/2/model.json': artifactFile('cars', '1'),
  })
  await registry.load()
  t.same(
    registry.entries().map(({ name, state, reason }) => ({ name, state, reason })),
    [
      { name: 'cars', state: 'UNAVAILABLE', reason: 'default version 2: cars/2/model.json: is model "cars" version "1", stored as model "cars" version "2"' },
      { name: 'iris', state: 'UNAVAILABLE', reason: 'default version 1: iris/1/model.json: is model "cars" version "1", stored as model "iris" version "1"' },
    ],
  )
})

t.test('a manifest that is not valid makes the model UNAVAILABLE with the manifest’s problem', async (t) => {
  const { registry, events } = harness({ ...shippedFiles(), 'iris/manifest.json': '{"default_version":"1","versoins":["2"]}' })
  await registry.load()
  t.same(registry.entry('iris'), {
    name: 'iris',
    state: 'UNAVAILABLE',
    reason: 'iris/manifest.json: versoins: is not a member of a manifest (default_version, versions, canary, shadow, log)',
    defaultVersion: undefined,
    versions: [],
    versionStates: [],
    platform: 'svc',
  })
  t.match(events('model_unavailable'), [{ model: 'iris', reason: registry.entry('iris')?.reason }])
  t.notOk(events('model_unavailable')[0] && 'detail' in events('model_unavailable')[0]!, 'no store error to detail')
})

t.test('a store failure is reported in words a client may see, the store’s message only in the log', async (t) => {
  const files = { 'iris/manifest.json': manifest('1'), 'iris/1/model.json': artifactFile('iris', '1') }
  const { registry, events } = harness(files, { maxBytes: 100 })
  await registry.load()
  t.equal(registry.entry('iris')?.reason, 'default version 1: iris/1/model.json: is larger than the model store allows')
  t.match(events('model_unavailable'), [{ detail: /^iris\/1\/model\.json in memory is \d+ bytes, over the limit of 100$/ }])
})

t.test('a store that cannot list its models leaves the registry empty and says so', async (t) => {
  const { registry, store, events } = harness()
  store.listError = new StoreError('UPSTREAM_ERROR', 'GET http://models.example/index.json timed out after 5000 ms')
  await registry.load()
  t.equal(registry.isReady(), false)
  t.same(registry.entries(), [])
  t.match(events('model_store_failed'), [
    { level: 'error', store: 'memory', code: 'UPSTREAM_ERROR', detail: 'GET http://models.example/index.json timed out after 5000 ms' },
  ])
})

t.test('svc_model_ready: 1 for the version served by default, 0 for the others, none for UNAVAILABLE models', async (t) => {
  const { registry, metrics, readiness } = harness({
    'iris/manifest.json': manifest('2', ['1']),
    'iris/1/model.json': artifactFile('iris', '1'),
    'iris/2/model.json': artifactFile('iris', '2'),
    'cars/manifest.json': manifest('1'),
    'cars/1/model.json': corrupted('cars'),
  })
  t.same(await readiness(), {}, 'no series before load')
  await registry.load()
  t.same(await readiness(), { 'iris/1': 0, 'iris/2': 1 })
  const text = await metrics.metrics()
  t.match(text, '# TYPE svc_model_ready gauge')
  t.match(text, 'svc_model_ready{model="iris",version="2",environment="test"} 1')
})

t.test('the reload interval is checked when the registry is built', async (t) => {
  const build = (reloadIntervalS: number) => () =>
    createModelRegistry({
      store: createMemoryStore(),
      logger: createLogger({ name: 'svc', level: 'error', format: 'json', write: () => {} }),
      metrics: new Registry(),
      reloadIntervalS,
    })
  for (const bad of [-1, 1.5, 86_401, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(build(bad), { name: 'RangeError', message: /^reloadIntervalS must be 0 \(no reload\) or a whole number of seconds from 1 to 86400/ }, String(bad))
  }
  for (const good of [0, 1, 7, 86_400]) t.doesNotThrow(build(good), String(good))
})
