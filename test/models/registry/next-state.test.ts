// The registry's decision, alone: state and snapshot in, state, log lines and builds to dispose
// out. No store, no runtime, no logger: every value is made here.
import t from 'tap'
import { failed, succeeded } from '../../../lib/core/result.js'
import { nextState } from '../../../lib/models/registry/next-state.js'
import { EMPTY, type ModelRead, type RegistryState, type ServedModel, type Snapshot, type VersionRead } from '../../../lib/models/registry/state.js'
import type { ModelVersion, Runtime } from '../../../lib/models/runtime.js'
import type { Manifest } from '../../../lib/models/store/manifest.js'

const runtime = (platform: string): Runtime => ({
  platform,
  files: ['model.json'],
  optional: [],
  read: () => t.fail('read') as never,
  load: () => t.fail('load') as never,
})
const SVC = runtime('svc')
const ONNX = runtime('onnx')

/** A build: only what the decision reads of it (names, sha256, platform) is real. */
const build = (name: string, version: string, sha256 = `${name}-${version}-a`, platform = 'svc'): ServedModel =>
  Object.freeze({
    name,
    version,
    model: { name, version, sha256, platform } as unknown as ModelVersion,
    predictor: { predict: () => t.fail('predict') as never, dispose: () => {} },
  })

const manifestOf = (defaultVersion: string, versions: readonly string[] = [defaultVersion]): Manifest => ({
  defaultVersion,
  versions,
  canary: undefined,
  shadow: undefined,
  logPercent: undefined,
  rolloutError: undefined,
})

const loaded = (served: ServedModel, etag = `"${served.model.sha256}"`): VersionRead => ({
  path: `${served.name}/${served.version}/model.json`,
  etag,
  outcome: succeeded(served),
  version: served.version,
  runtime: SVC,
})

const refusedVersion = (name: string, version: string, reason: string, options: { etag?: string; detail?: string; runtime?: Runtime } = {}): VersionRead => ({
  path: `${name}/${version}/model.json`,
  etag: options.etag,
  outcome: failed({ reason, detail: options.detail }),
  version,
  runtime: options.runtime ?? SVC,
})

const model = (name: string, manifest: Manifest, versions: readonly VersionRead[], etag = '"m1"'): ModelRead => ({
  name,
  manifest: { path: `${name}/manifest.json`, etag, outcome: succeeded(manifest) },
  versions,
  platform: 'svc',
})

const snapshot = (...models: ModelRead[]): Snapshot => succeeded(models)

/** The state a first pass over `models` publishes. */
const after = (...models: ModelRead[]): RegistryState => nextState(EMPTY, snapshot(...models)).state

const READY_1 = { version: '1', state: 'READY', reason: undefined }
const iris1 = build('iris', '1')
const cars1 = build('cars', '1')
const irisOnly = (): RegistryState => after(model('iris', manifestOf('1'), [loaded(iris1)]))

t.test('a first pass serves each default that loads, logs model_loaded, and remembers what the store answered', async (t) => {
  const { state, events, retired } = nextState(
    EMPTY,
    snapshot(model('cars', manifestOf('1'), [loaded(cars1)]), model('iris', manifestOf('1'), [loaded(iris1)])),
  )
  t.same(state.entries, [
    { name: 'cars', state: 'READY', reason: undefined, defaultVersion: '1', versions: ['1'], versionStates: [READY_1], platform: 'svc' },
    { name: 'iris', state: 'READY', reason: undefined, defaultVersion: '1', versions: ['1'], versionStates: [READY_1], platform: 'svc' },
  ])
  t.equal(state.isReady, true)
  t.equal(state.slots.get('iris')?.defaultModel, iris1)
  t.equal(state.slots.get('iris')?.served.get('1'), iris1)
  t.ok(Object.isFrozen(state) && Object.isFrozen(state.entries) && Object.isFrozen(state.slots.get('iris')?.entry))
  t.same(events, [
    { event: 'model_loaded', fields: { model: 'cars', version: '1', sha256: 'cars-1-a' } },
    { event: 'model_loaded', fields: { model: 'iris', version: '1', sha256: 'iris-1-a' } },
  ])
  t.same(retired, [])
  t.same([...state.manifests.keys()], ['cars/manifest.json', 'iris/manifest.json'])
  t.same(state.versions.get('iris/1/model.json'), { etag: '"iris-1-a"', outcome: { ok: true, value: iris1 } })
  t.equal(state.listFailure, undefined)
})

t.test('a sha256 is shown by its first 12 characters', async (t) => {
  const long = build('iris', '1', '0123456789abcdef')
  const { events } = nextState(EMPTY, snapshot(model('iris', manifestOf('1'), [loaded(long)])))
  t.same(events[0]?.fields, { model: 'iris', version: '1', sha256: '0123456789ab' })
})

t.test('nothing is logged or disposed when a pass finds the same builds', async (t) => {
  const previous = irisOnly()
  const { state, events, retired } = nextState(previous, snapshot(model('iris', manifestOf('1'), [loaded(iris1)])))
  t.same(events, [])
  t.same(retired, [])
  t.equal(state.slots.get('iris')?.defaultModel, iris1)
  t.not(state, previous, 'a new state all the same')
})

t.test('a new build of the default is swapped in, logged as loaded and reloaded, and the old one retired', async (t) => {
  const next = build('iris', '1', 'iris-1-b')
  const { state, events, retired } = nextState(irisOnly(), snapshot(model('iris', manifestOf('1'), [loaded(next)])))
  t.equal(state.slots.get('iris')?.defaultModel, next)
  t.same(events, [
    { event: 'model_loaded', fields: { model: 'iris', version: '1', sha256: 'iris-1-b' } },
    { event: 'model_reloaded', fields: { model: 'iris', version: '1', versions: ['1'] } },
  ])
  t.same(retired, [iris1])
})

t.test('a version dropped from the manifest is reloaded away and retired', async (t) => {
  const iris2 = build('iris', '2')
  const previous = after(model('iris', manifestOf('2', ['1', '2']), [loaded(iris1), loaded(iris2)]))
  const { state, events, retired } = nextState(previous, snapshot(model('iris', manifestOf('2'), [loaded(iris2)])))
  t.same(state.slots.get('iris')?.entry.versions, ['2'])
  t.same(events, [{ event: 'model_reloaded', fields: { model: 'iris', version: '2', versions: ['2'] } }])
  t.same(retired, [iris1])
})

t.test('a READY model whose default fails keeps its slot; the failure is a warning, logged once', async (t) => {
  const previous = irisOnly()
  const broken = model('iris', manifestOf('1'), [refusedVersion('iris', '1', 'iris/1/model.json: sha256: does not match', { etag: '"x"' })])
  const first = nextState(previous, snapshot(broken))
  const slot = first.state.slots.get('iris')
  t.same(
    slot?.entry,
    { ...previous.slots.get('iris')?.entry, versionStates: [{ ...READY_1, reason: 'iris/1/model.json: sha256: does not match' }] },
    'the entry as it was, but for the failure shown on the version: READY, since its previous build serves on',
  )
  t.equal(slot?.defaultModel, iris1)
  t.same(first.events, [{ event: 'model_reload_failed', fields: { model: 'iris', version: '1', reason: 'iris/1/model.json: sha256: does not match' } }])
  t.same(first.retired, [], 'the old build still serves')
  t.same(first.state.versions.get('iris/1/model.json')?.outcome, {
    ok: false,
    reason: { reason: 'iris/1/model.json: sha256: does not match', detail: undefined },
  })

  const second = nextState(first.state, snapshot(broken))
  t.same(second.events, [], 'the same failure again is not logged')
  const fixed = nextState(second.state, snapshot(model('iris', manifestOf('1'), [loaded(iris1)])))
  t.same(fixed.events, [])
  t.same(nextState(fixed.state, snapshot(broken)).events.length, 1, 'a failure that comes back is logged again')
})

t.test('a new default that fails keeps the old default serving', async (t) => {
  const previous = irisOnly()
  const { state, events } = nextState(previous, snapshot(model('iris', manifestOf('2', ['1', '2']), [loaded(iris1), refusedVersion('iris', '2', 'bad')])))
  t.same(
    state.slots.get('iris')?.entry,
    {
      ...previous.slots.get('iris')?.entry,
      versionStates: [READY_1, { version: '2', state: 'FAILED', reason: 'bad' }],
    },
    'the entry it had, with the new version shown FAILED',
  )
  t.equal(state.slots.get('iris')?.defaultModel, iris1)
  t.same(events, [{ event: 'model_reload_failed', fields: { model: 'iris', version: '2', reason: 'bad' } }])
})

t.test('another version that fails is left out and logged; the one it served before keeps serving', async (t) => {
  const iris2 = build('iris', '2')
  const fresh = nextState(EMPTY, snapshot(model('iris', manifestOf('2', ['1', '2']), [refusedVersion('iris', '1', 'bad one'), loaded(iris2)])))
  t.same(fresh.state.slots.get('iris')?.entry.versions, ['2'])
  t.same(fresh.events[0], { event: 'model_unavailable', fields: { model: 'iris', version: '1', reason: 'bad one' } })

  const previous = after(model('iris', manifestOf('2', ['1', '2']), [loaded(iris1), loaded(iris2)]))
  const { state, retired } = nextState(previous, snapshot(model('iris', manifestOf('2', ['1', '2']), [refusedVersion('iris', '1', 'bad one'), loaded(iris2)])))
  t.equal(state.slots.get('iris')?.served.get('1'), iris1)
  t.same(state.slots.get('iris')?.entry.versions, ['1', '2'])
  t.same(retired, [])
  t.same(
    fresh.state.slots.get('iris')?.entry.versionStates,
    [
      { version: '1', state: 'FAILED', reason: 'bad one' },
      { version: '2', state: 'READY', reason: undefined },
    ],
    'a version never loaded is FAILED, with its reason',
  )
  t.same(
    state.slots.get('iris')?.entry.versionStates,
    [
      { version: '1', state: 'READY', reason: 'bad one' },
      { version: '2', state: 'READY', reason: undefined },
    ],
    'one whose previous build serves on is READY, with the reason its new files were refused',
  )
  const healed = nextState(state, snapshot(model('iris', manifestOf('2', ['1', '2']), [loaded(iris1), loaded(iris2)])))
  t.same(healed.state.slots.get('iris')?.entry.versionStates, [READY_1, { version: '2', state: 'READY', reason: undefined }], 'fixed, the reason goes')
})

t.test('version states: every version the manifest names, and any other a kept slot still serves; a manifest that fails keeps the last', async (t) => {
  // The new manifest names 2 alone, as its default, and 2 fails: the previous slot, serving 1, serves on.
  const kept = nextState(irisOnly(), snapshot(model('iris', manifestOf('2'), [refusedVersion('iris', '2', 'bad two')]))).state
  t.same(kept.slots.get('iris')?.entry.versions, ['1'])
  t.same(kept.slots.get('iris')?.entry.versionStates, [READY_1, { version: '2', state: 'FAILED', reason: 'bad two' }])
  const unreadable: ModelRead = {
    name: 'iris',
    manifest: { path: 'iris/manifest.json', etag: '"m2"', outcome: failed({ reason: 'iris/manifest.json: is not UTF-8 JSON', detail: undefined }) },
    versions: [],
    platform: 'svc',
  }
  t.equal(nextState(kept, snapshot(unreadable)).state.slots.get('iris')?.entry, kept.slots.get('iris')?.entry, 'no manifest, no news of its versions')
  // A model whose default fails from the start serves nothing; a version that loaded is READY all the same.
  const unavailable = after(model('iris', manifestOf('2', ['1', '2']), [loaded(iris1), refusedVersion('iris', '2', 'bad two')]))
  t.match(unavailable.slots.get('iris')?.entry, {
    state: 'UNAVAILABLE',
    versions: [],
    versionStates: [READY_1, { version: '2', state: 'FAILED', reason: 'bad two' }],
  })
})

t.test('a model whose default fails and that was not READY is UNAVAILABLE, with the runtime it was for', async (t) => {
  const read = model('iris', manifestOf('1'), [
    refusedVersion('iris', '1', 'iris/1/model.onnx: the model store failed', { detail: 'GET … 503', runtime: ONNX }),
  ])
  const { state, events } = nextState(EMPTY, snapshot(read))
  t.same(state.entries, [
    {
      name: 'iris',
      state: 'UNAVAILABLE',
      reason: 'default version 1: iris/1/model.onnx: the model store failed',
      defaultVersion: '1',
      versions: [],
      versionStates: [{ version: '1', state: 'FAILED', reason: 'iris/1/model.onnx: the model store failed' }],
      platform: 'onnx',
    },
  ])
  t.equal(state.isReady, false)
  t.equal(state.slots.get('iris')?.defaultModel, undefined)
  t.same(events, [
    {
      event: 'model_unavailable',
      fields: { model: 'iris', reason: 'default version 1: iris/1/model.onnx: the model store failed', detail: 'GET … 503' },
    },
  ])
  t.equal(state.versions.size, 0, 'a store failure is not remembered: the next pass tries again')
  t.same(nextState(state, snapshot(read)).events, [], 'and is logged once')
})

t.test('a manifest that fails makes a new model UNAVAILABLE with the platform read gives it', async (t) => {
  const read: ModelRead = {
    name: 'iris',
    manifest: { path: 'iris/manifest.json', etag: '"m"', outcome: failed({ reason: 'iris/manifest.json: default_version: is missing', detail: undefined }) },
    versions: [],
    platform: 'first',
  }
  const { state, events } = nextState(EMPTY, snapshot(read))
  t.same(state.slots.get('iris')?.entry, {
    name: 'iris',
    state: 'UNAVAILABLE',
    reason: 'iris/manifest.json: default_version: is missing',
    defaultVersion: undefined,
    versions: [],
    versionStates: [],
    platform: 'first',
  })
  t.same(events, [{ event: 'model_unavailable', fields: { model: 'iris', reason: 'iris/manifest.json: default_version: is missing' } }])
  t.ok(state.manifests.has('iris/manifest.json'), 'a manifest refused for its content is remembered for its etag')

  const ready = nextState(irisOnly(), snapshot(read))
  t.equal(ready.state.slots.get('iris')?.defaultModel, iris1, 'a READY model keeps serving')
  t.equal(ready.events[0]?.event, 'model_reload_failed', "a READY model's failure is a reload failure")
})

t.test('a listing that fails changes nothing served and is logged when its message is new', async (t) => {
  const previous = irisOnly()
  const failure = failed({ store: '/srv/models', code: 'UNREADABLE' as const, message: 'EACCES' })
  const first = nextState(previous, failure)
  t.equal(first.state.slots, previous.slots)
  t.equal(first.state.versions, previous.versions)
  t.equal(first.state.listFailure, 'EACCES')
  t.same(first.events, [{ event: 'model_store_failed', fields: { store: '/srv/models', code: 'UNREADABLE', detail: 'EACCES' } }])
  t.same(first.retired, [])
  t.same(nextState(first.state, failure).events, [])
  const recovered = nextState(first.state, snapshot(model('iris', manifestOf('1'), [loaded(iris1)])))
  t.equal(recovered.state.listFailure, undefined)
  t.same(nextState(recovered.state, failure).events.length, 1, 'a failure after a recovery is new again')
})

t.test('a build kept only for its etags is held until a later pass drops it too', async (t) => {
  // Version 2 loaded but the manifest's default, 1, did not: UNAVAILABLE, yet its build is kept.
  const iris2 = build('iris', '2')
  const previous = after(model('iris', manifestOf('1', ['1', '2']), [refusedVersion('iris', '1', 'bad'), loaded(iris2)]))
  t.equal(previous.slots.get('iris')?.entry.state, 'UNAVAILABLE')
  t.equal(previous.versions.get('iris/2/model.json')?.outcome.ok, true)
  t.same(nextState(previous, snapshot(model('iris', manifestOf('1', ['1', '2']), [refusedVersion('iris', '1', 'bad'), loaded(iris2)]))).retired, [])
  t.same(nextState(previous, snapshot(model('iris', manifestOf('1'), [refusedVersion('iris', '1', 'bad')]))).retired, [iris2])
})

const iris2 = build('iris', '2')
const rolloutManifest = (rollout: Partial<Pick<Manifest, 'canary' | 'shadow' | 'logPercent' | 'rolloutError'>>, defaultVersion = '1'): Manifest => ({
  ...manifestOf(defaultVersion, ['1', '2']),
  ...rollout,
})

t.test('a canary and a shadow are served as declared, on the entry and the slot, and a change of share is a reload', async (t) => {
  const first = nextState(
    EMPTY,
    snapshot(model('iris', rolloutManifest({ canary: { version: '2', percent: 5 }, shadow: { version: '2', percent: 100 } }), [loaded(iris1), loaded(iris2)])),
  )
  const slot = first.state.slots.get('iris')
  t.same(slot?.rollout, { canary: { served: iris2, percent: 5 }, shadow: { served: iris2, percent: 100 } })
  t.match(slot?.entry, { canary: { version: '2', percent: 5 }, shadow: { version: '2', percent: 100 }, rolloutError: undefined })
  const raised = nextState(
    first.state,
    snapshot(model('iris', rolloutManifest({ canary: { version: '2', percent: 25 } }), [loaded(iris1), loaded(iris2)], '"m2"')),
  )
  t.same(raised.events, [{ event: 'model_reloaded', fields: { model: 'iris', version: '1', versions: ['1', '2'], canary: { version: '2', percent: 25 } } }])
  t.equal(raised.state.slots.get('iris')?.entry.shadow, undefined, 'a shadow no longer declared is gone')
  const same = nextState(
    raised.state,
    snapshot(model('iris', rolloutManifest({ canary: { version: '2', percent: 25 } }), [loaded(iris1), loaded(iris2)], '"m3"')),
  )
  t.same(same.events, [], 'the same split again changes nothing')
  t.equal(same.state.slots.get('iris')?.rollout.canary?.served, iris2)
})

t.test("a manifest's log percent is served with the split; a new one is a reload, a refused one keeps the last", async (t) => {
  const first = nextState(EMPTY, snapshot(model('iris', rolloutManifest({ logPercent: 10 }), [loaded(iris1), loaded(iris2)])))
  t.same(first.state.slots.get('iris')?.rollout, { canary: undefined, shadow: undefined, logPercent: 10 })
  const lowered = nextState(first.state, snapshot(model('iris', rolloutManifest({ logPercent: 1 }), [loaded(iris1), loaded(iris2)], '"m2"')))
  t.same(lowered.events, [{ event: 'model_reloaded', fields: { model: 'iris', version: '1', versions: ['1', '2'] } }])
  t.equal(lowered.state.slots.get('iris')?.rollout.logPercent, 1)
  const bad = rolloutManifest({ rolloutError: 'log.percent: must be a number from 0 to 100, is 150' })
  const refused = nextState(lowered.state, snapshot(model('iris', bad, [loaded(iris1), loaded(iris2)], '"m3"')))
  t.equal(refused.state.slots.get('iris')?.rollout.logPercent, 1, 'the percent served before')
  t.match(refused.state.slots.get('iris')?.entry, { state: 'READY', rolloutError: 'log.percent: must be a number from 0 to 100, is 150' })
})

t.test('a refused rollout keeps the previous slot serving, says why on the entry, and is logged once', async (t) => {
  const before = after(model('iris', rolloutManifest({ canary: { version: '2', percent: 5 } }), [loaded(iris1), loaded(iris2)]))
  const bad = rolloutManifest({ rolloutError: 'canary.percent: must be a number from 0 to 100, is 150' })
  const refused = nextState(before, snapshot(model('iris', bad, [loaded(iris1), loaded(iris2)], '"m2"')))
  const slot = refused.state.slots.get('iris')
  t.equal(slot?.rollout, before.slots.get('iris')?.rollout, 'the split served before')
  t.match(slot?.entry, {
    state: 'READY',
    reason: undefined,
    canary: { version: '2', percent: 5 },
    rolloutError: 'canary.percent: must be a number from 0 to 100, is 150',
  })
  t.same(refused.events, [{ event: 'model_rollout_refused', fields: { model: 'iris', reason: 'canary.percent: must be a number from 0 to 100, is 150' } }])
  const again = nextState(refused.state, snapshot(model('iris', bad, [loaded(iris1), loaded(iris2)], '"m2"')))
  t.same(again.events, [], 'not logged again while the reason is the same')

  // A version that did not load (and never served: a broken new build of a served one leaves the old serving): the refusal carries why.
  const broken = rolloutManifest({ canary: { version: '2', percent: 5 } })
  const unloaded = nextState(irisOnly(), snapshot(model('iris', broken, [loaded(iris1), refusedVersion('iris', '2', 'sha256 mismatch')], '"m2"')))
  t.equal(unloaded.state.slots.get('iris')?.entry.rolloutError, 'canary.version: "2" is not loaded: sha256 mismatch')
  const fresh = nextState(EMPTY, snapshot(model('iris', rolloutManifest({ shadow: { version: '2', percent: 5 } }), [loaded(iris1)])))
  t.equal(fresh.state.slots.get('iris')?.entry.rolloutError, 'shadow.version: "2" is not loaded', 'a version never read has no reason to add')
})

t.test('a rollout refused on a first pass serves the default alone', async (t) => {
  const { state, events } = nextState(
    EMPTY,
    snapshot(model('iris', rolloutManifest({ rolloutError: 'shadow.version: is missing' }), [loaded(iris1), loaded(iris2)])),
  )
  const slot = state.slots.get('iris')
  t.match(slot?.entry, { state: 'READY', canary: undefined, shadow: undefined, rolloutError: 'shadow.version: is missing' })
  t.same(slot?.rollout, { canary: undefined, shadow: undefined })
  t.equal(slot?.defaultModel, iris1)
  t.same(
    events.map((e) => e.event),
    ['model_rollout_refused', 'model_loaded', 'model_loaded'],
  )
})
