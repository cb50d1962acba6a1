// The registry's side of the runtime seam (lib/models/runtime.ts): which runtime a version is for,
// every file of it statted and read, loads that may be async or fail, and each build disposed once
// nothing serves or keeps it.
import { setImmediate as turn } from 'node:timers/promises'
import t from 'tap'
import { Registry } from 'prom-client'
import { createModelRegistry } from '../../../lib/models/registry/registry.js'
import type { Runtime } from '../../../lib/models/runtime.js'
import { kernelRuntime } from '../../../lib/models/kernel/runtime.js'
import { StoreError } from '../../../lib/models/store/error.js'
import { createMemoryStore } from '../../../lib/models/store/memory.js'
import { createLogger } from '../../../lib/telemetry/logger.js'
import { harness, manifest, rebuilt, shippedFiles } from '../../fixtures/model-registry.js'
import { FAKE_PLATFORM, fakeFiles, fakeRuntime } from '../../fixtures/model-runtime.js'
import { rawArtifact } from '../../fixtures/models.js'

const fakeIris = (): Record<string, string | Buffer> => ({ 'iris/manifest.json': manifest('1'), ...fakeFiles('iris') })

t.test('a version is served by the first runtime whose first file it holds, and says so as its platform', async (t) => {
  const fake = fakeRuntime()
  const { registry } = harness({ ...shippedFiles(), ...fakeFiles('iris'), ...fakeFiles('cars') }, { runtimes: [kernelRuntime, fake] })
  await registry.load()
  t.same(fake.loads, [], 'both versions hold model.json: the kernel, listed first, serves them')
  t.same(
    registry.entries().map(({ name, platform }) => [name, platform]),
    [
      ['cars', 'svc'],
      ['iris', 'svc'],
    ],
  )

  const other = harness({ ...shippedFiles(), ...fakeFiles('iris') }, { runtimes: [fake, kernelRuntime] })
  await other.registry.load()
  t.equal(other.registry.resolve('iris')?.model.platform, FAKE_PLATFORM)
  t.equal(other.registry.entry('iris')?.platform, FAKE_PLATFORM)
  t.equal(other.registry.entry('cars')?.platform, 'svc', 'cars holds no model.fake: the kernel serves it')
  t.match(fake.loads, [/^iris\/1 /])
})

t.test('a version that holds no runtime’s first file is not found under the first runtime’s', async (t) => {
  for (const [runtimes, path, platform] of [
    [[kernelRuntime, fakeRuntime()], 'iris/1/model.json', 'svc'],
    [[fakeRuntime(), kernelRuntime], 'iris/1/model.fake', FAKE_PLATFORM],
  ] as const) {
    const { registry } = harness({ 'iris/manifest.json': manifest('1') }, { runtimes })
    await registry.load()
    t.same(registry.entry('iris'), {
      name: 'iris',
      state: 'UNAVAILABLE',
      reason: `default version 1: ${path}: not found in the model store`,
      defaultVersion: '1',
      versions: [],
      platform,
      versionStates: [{ version: '1', state: 'FAILED', reason: `${path}: not found in the model store` }],
    })
  }
})

t.test('a store failure other than not found on a first file is the version’s failure: no other runtime is tried', async (t) => {
  const fake = fakeRuntime()
  const { registry, store, events } = harness({ ...shippedFiles(), ...fakeFiles('iris') }, { runtimes: [kernelRuntime, fake] })
  store.failures.set('iris/1/model.json', { method: 'stat', error: new StoreError('UPSTREAM_ERROR', 'HEAD http://models.example/iris/1/model.json timed out') })
  await registry.load()
  t.equal(registry.entry('iris')?.reason, 'default version 1: iris/1/model.json: the model store failed')
  t.same(fake.loads, [])
  t.match(events('model_unavailable'), [{ model: 'iris', detail: 'HEAD http://models.example/iris/1/model.json timed out' }])
})

t.test('a manifest that cannot be read names the first runtime as the model’s platform', async (t) => {
  const { registry } = harness({ 'iris/manifest.json': '{' }, { runtimes: [fakeRuntime(), kernelRuntime] })
  await registry.load()
  t.match(registry.entry('iris'), { state: 'UNAVAILABLE', defaultVersion: undefined, platform: FAKE_PLATFORM })
})

t.test('every file of a version is statted and read, and a failure names the file', async (t) => {
  const missing = harness(
    { 'iris/manifest.json': manifest('1'), 'iris/1/model.fake': fakeFiles('iris')['iris/1/model.fake'] as string },
    { runtimes: [fakeRuntime()] },
  )
  await missing.registry.load()
  t.equal(missing.registry.entry('iris')?.reason, 'default version 1: iris/1/meta.json: not found in the model store')

  const unreadable = harness(fakeIris(), { runtimes: [fakeRuntime()] })
  unreadable.store.failures.set('iris/1/meta.json', { method: 'read', error: new StoreError('UNREADABLE', 'iris/1/meta.json: permission denied') })
  await unreadable.registry.load()
  t.equal(unreadable.registry.entry('iris')?.reason, 'default version 1: iris/1/meta.json: cannot be read from the model store')
})

t.test('what a runtime refuses is reported against the version’s first file', async (t) => {
  const { registry } = harness({ ...fakeIris(), 'iris/1/meta.json': '{"note":' }, { runtimes: [fakeRuntime()] })
  await registry.load()
  t.match(registry.entry('iris')?.reason, /^default version 1: iris\/1\/model\.fake: .*JSON/)
})

t.test('a load may be async; one that rejects or throws refuses the version as a parse error would', async (t) => {
  const fake = fakeRuntime()
  const { registry } = harness(fakeIris(), { runtimes: [fake] })
  fake.behaviour.loadError = new Error('the session could not be created')
  await registry.load()
  t.equal(registry.entry('iris')?.reason, 'default version 1: iris/1/model.fake: the session could not be created')

  fake.behaviour.isLoadThrowing = true
  fake.behaviour.loadError = new Error('no such operator')
  const again = harness(fakeIris(), { runtimes: [fake] })
  await again.registry.load()
  t.equal(again.registry.entry('iris')?.reason, 'default version 1: iris/1/model.fake: no such operator')

  fake.behaviour.isLoadThrowing = false
  fake.behaviour.loadError = undefined
  const fine = harness(fakeIris(), { runtimes: [fake] })
  await fine.registry.load()
  t.equal(fine.registry.entry('iris')?.state, 'READY')
})

t.test('a change to any file of a version reads it again; the same build is not loaded again', async (t) => {
  const fake = fakeRuntime()
  const { registry, files, store } = harness(fakeIris(), { runtimes: [fake] })
  await registry.load()
  const first = registry.resolve('iris')
  const reads = store.calls.read
  await registry.reload()
  t.equal(store.calls.read, reads, 'unchanged: nothing read')

  files.put('iris/1/meta.json', '{"note":"another note"}')
  await registry.reload()
  t.equal(store.calls.read, reads + 2, 'a changed second file reads the version again')
  t.equal(registry.resolve('iris'), first, 'the same sha256: the build already served')
  t.equal(fake.loads.length, 1, 'and not loaded again')

  files.put('iris/1/model.fake', rebuilt('iris'))
  await registry.reload()
  t.not(registry.resolve('iris'), first)
  t.equal(fake.loads.length, 2)
})

t.test('an optional file is read when present; its coming, changing or going reads the version again', async (t) => {
  const fake = fakeRuntime()
  const { registry, files, store } = harness(fakeIris(), { runtimes: [fake] })
  await registry.load()
  const without = registry.resolve('iris')
  t.equal(without?.model.sha256, rawArtifact('iris').sha256, 'served without note.txt: the artifact’s own sha256')
  files.put('iris/1/note.txt', 'ab')
  await registry.reload()
  const noted = registry.resolve('iris')
  t.equal(noted?.model.sha256.slice(56), Buffer.from('ab').toString('hex').padEnd(8, '0'), 'the note reached the runtime')
  t.equal(fake.loads.length, 2, 'a new build')
  const reads = store.calls.read
  await registry.reload()
  t.equal(store.calls.read, reads, 'unchanged, the optional file included: nothing read')
  files.remove('iris/1/note.txt')
  await registry.reload()
  t.equal(registry.resolve('iris')?.model.sha256, without?.model.sha256, 'gone again: the build without it')
})

t.test('a store failure on an optional file other than not found is the version’s failure', async (t) => {
  const fake = fakeRuntime()
  const { registry, store } = harness(fakeIris(), { runtimes: [fake] })
  store.failures.set('iris/1/note.txt', { method: 'stat', error: new StoreError('UPSTREAM_ERROR', 'HEAD timed out') })
  await registry.load()
  t.equal(registry.entry('iris')?.reason, 'default version 1: iris/1/note.txt: the model store failed')
})

t.test('a build is disposed once the pass that stops serving it has published, and only then', async (t) => {
  const fake = fakeRuntime()
  const { registry, files } = harness({ ...fakeIris(), 'iris/manifest.json': manifest('1', ['2']), ...fakeFiles('iris', '2') }, { runtimes: [fake] })
  await registry.load()
  await registry.reload()
  await turn()
  t.same(fake.disposals, [], 'nothing replaced, nothing disposed')

  const old = registry.resolve('iris') as NonNullable<ReturnType<typeof registry.resolve>>
  files.put('iris/1/model.fake', rebuilt('iris'))
  await registry.reload()
  await turn()
  t.same(fake.disposals, [`iris/1 ${old.model.sha256.slice(0, 8)}`], 'the replaced build')
  t.not(registry.resolve('iris'), old)

  files.put('iris/manifest.json', manifest('1'))
  await registry.reload()
  await turn()
  t.equal(fake.disposals.length, 2, 'a version the manifest no longer lists')
  t.match(fake.disposals[1], /^iris\/2 /)
})

t.test('a dispose that throws or rejects is logged, and the pass goes on', async (t) => {
  for (const isDisposeThrowing of [true, false]) {
    const fake = fakeRuntime()
    const { registry, files, events } = harness(fakeIris(), { runtimes: [fake] })
    await registry.load()
    fake.behaviour.disposeError = new Error('release failed')
    fake.behaviour.isDisposeThrowing = isDisposeThrowing
    files.put('iris/1/model.fake', rebuilt('iris'))
    await registry.reload()
    await turn()
    t.equal(registry.entry('iris')?.state, 'READY')
    t.match(events('model_dispose_failed'), [{ level: 'warning', model: 'iris', version: '1', type: 'Error', message: 'release failed' }])
  }
})

t.test('the runtimes are checked when the registry is built', async (t) => {
  const build = (runtimes: readonly Runtime[]) => () =>
    createModelRegistry({
      store: createMemoryStore(),
      logger: createLogger({ name: 'svc', level: 'error', format: 'json', write: () => {} }),
      metrics: new Registry(),
      reloadIntervalS: 0,
      runtimes,
    })
  t.throws(build([]), { name: 'RangeError', message: /at least one runtime/ })
  t.throws(build([kernelRuntime, { ...kernelRuntime, files: [] }]), { name: 'RangeError', message: /each with at least one file/ })
  t.doesNotThrow(build([kernelRuntime]))
})
