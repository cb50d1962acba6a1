// A pass's reading of the store (readSnapshot), on a memory store that counts its calls: every
// model listed or served before, each version described by its runtime and checked against its
// path, failures in words a client may see, and nothing read again whose etags have not changed.
import t from 'tap'
import { kernelRuntime } from '../../../lib/models/kernel/runtime.js'
import { EMPTY, type ModelRead, type RegistryState, type Snapshot } from '../../../lib/models/registry/state.js'
import { modelNames, readSnapshot } from '../../../lib/models/registry/snapshot.js'
import { StoreError } from '../../../lib/models/store/error.js'
import { createMemoryStore } from '../../../lib/models/store/memory.js'
import { counting, manifest, shippedFiles } from '../../fixtures/model-registry.js'
import { artifactBytes } from '../../fixtures/models.js'

const RUNTIMES = [kernelRuntime]

const reads = (snapshot: Snapshot): readonly ModelRead[] => {
  if (!snapshot.ok) throw new Error(`the listing failed: ${snapshot.reason.message}`)
  return snapshot.value
}

/** The state a pass would leave for the next: each file's outcome kept by its etag. */
const after = (models: readonly ModelRead[]): RegistryState => ({
  ...EMPTY,
  manifests: new Map(models.flatMap(({ manifest: m }) => (m.etag === undefined ? [] : [[m.path, { etag: m.etag, outcome: m.outcome }] as const]))),
  versions: new Map(
    models.flatMap(({ versions }) => versions.flatMap((v) => (v.etag === undefined ? [] : [[v.path, { etag: v.etag, outcome: v.outcome }] as const]))),
  ),
})

t.test('every listed model, sorted, each version described and served by its runtime', async (t) => {
  const models = reads(await readSnapshot({ store: createMemoryStore(shippedFiles()), runtimes: RUNTIMES }, EMPTY))
  t.same(
    models.map(({ name, platform }) => [name, platform]),
    [
      ['cars', 'svc'],
      ['iris', 'svc'],
    ],
  )
  const [version] = (models[1] as ModelRead).versions
  t.match(version, { path: 'iris/1/model.json', version: '1', runtime: kernelRuntime, outcome: { ok: true, value: { name: 'iris', version: '1' } } })
  t.type(version?.etag, 'string')
})

t.test('a second pass over unchanged files reads nothing, keeping each outcome', async (t) => {
  const store = counting(createMemoryStore(shippedFiles()))
  const first = reads(await readSnapshot({ store, runtimes: RUNTIMES }, EMPTY))
  t.equal(store.calls.read, 4)
  const second = reads(await readSnapshot({ store, runtimes: RUNTIMES }, after(first)))
  t.equal(store.calls.read, 4, 'stat only')
  t.equal(second[1]?.versions[0]?.outcome, first[1]?.versions[0]?.outcome, 'the same outcome, the same build')
})

t.test('a model served before is read even when the listing misses it', async (t) => {
  const served = new Map([['gone', {}]]) as unknown as RegistryState['slots']
  t.same(modelNames(['iris', 'cars', 'iris'], { ...EMPTY, slots: served }), ['cars', 'gone', 'iris'])
  const models = reads(await readSnapshot({ store: createMemoryStore(shippedFiles()), runtimes: RUNTIMES }, { ...EMPTY, slots: served }))
  t.match(models[1], {
    name: 'gone',
    versions: [],
    manifest: { etag: undefined, outcome: { ok: false, reason: { reason: 'gone/manifest.json: not found in the model store' } } },
  })
})

t.test('a description of another version than its path is refused, naming both', async (t) => {
  const files = { 'iris/manifest.json': manifest('2'), 'iris/2/model.json': artifactBytes('iris') }
  const [iris] = reads(await readSnapshot({ store: createMemoryStore(files), runtimes: RUNTIMES }, EMPTY))
  t.match(iris?.versions[0]?.outcome, {
    ok: false,
    reason: { reason: 'iris/2/model.json: is model "iris" version "1", stored as model "iris" version "2"', detail: undefined },
  })
})

t.test("a version holding no runtime's file is NOT_FOUND; a broken manifest is refused with its member", async (t) => {
  const files = { 'iris/manifest.json': manifest('1'), 'cars/manifest.json': '{"default_version": 1}' }
  const [cars, iris] = reads(await readSnapshot({ store: createMemoryStore(files), runtimes: RUNTIMES }, EMPTY))
  t.match(iris?.versions[0], {
    path: 'iris/1/model.json',
    etag: undefined,
    outcome: { ok: false, reason: { reason: 'iris/1/model.json: not found in the model store' } },
  })
  t.match(cars, { versions: [], manifest: { outcome: { ok: false, reason: { reason: /^cars\/manifest\.json: / } } } })
})

t.test('a failed listing is the snapshot: the store, the code and its message', async (t) => {
  const store = counting(createMemoryStore(shippedFiles()))
  store.listError = new StoreError('UPSTREAM_ERROR', 'GET http://store/ answered 503')
  t.same(await readSnapshot({ store, runtimes: RUNTIMES }, EMPTY), {
    ok: false,
    reason: { store: store.description, code: 'UPSTREAM_ERROR', message: 'GET http://store/ answered 503' },
  })
})
