// Hot reload: a pass loads and checks the new version fully, then swaps it in whole; a broken one
// leaves the old serving; unchanged files are not read again; the cron job runs passes.
import t from 'tap'
import { setImmediate as turn } from 'node:timers/promises'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import { formatChecksums } from '../../../lib/models/store/checksums.js'
import { StoreError } from '../../../lib/models/store/error.js'
import { artifactFile, corrupted, harness, isConsistent, manifest, rebuilt, shippedFiles } from '../../fixtures/model-registry.js'

t.test('a pass over an unchanged store stats each file, reads none and logs nothing', async (t) => {
  const { registry, store, lines } = harness()
  await registry.load()
  const before = registry.resolve('iris')
  const logged = lines().length
  const reads = store.calls.read
  await registry.reload()
  t.equal(store.calls.read, reads, 'no file read again')
  t.equal(store.calls.stat, 12, 'two manifests, two artifacts and two checksums.json (absent), twice')
  t.equal(lines().length, logged)
  t.equal(registry.resolve('iris'), before, 'the very same model object')
})

t.test('a changed artifact is loaded, checked and swapped in', async (t) => {
  const { registry, files, events, readiness } = harness()
  await registry.load()
  const old = registry.resolve('iris') as ServedModel
  files.put('iris/1/model.json', rebuilt('iris'))
  await registry.reload()
  const next = registry.resolve('iris') as ServedModel
  t.not(next, old)
  t.not(next.model.sha256, old.model.sha256)
  t.ok(isConsistent(next))
  t.equal(registry.resolve('cars'), registry.resolve('cars'), 'cars untouched')
  t.match(events('model_loaded').at(-1), { model: 'iris', version: '1', sha256: next.model.sha256.slice(0, 12) })
  t.match(events('model_reloaded'), [{ level: 'info', model: 'iris', version: '1', versions: ['1'] }])
  t.same(await readiness(), { 'cars/1': 1, 'iris/1': 1 })
})

t.test('a broken new artifact leaves the old one serving, READY, and is logged once', async (t) => {
  const { registry, files, events } = harness()
  await registry.load()
  const old = registry.resolve('iris')
  files.put('iris/1/model.json', corrupted('iris'))
  await registry.reload()
  t.equal(registry.resolve('iris'), old)
  const refused =
    'iris/1/model.json: sha256: does not match the content: the file was changed or damaged after training; if it was edited on purpose, sign it: svc sign iris/1/model.json'
  t.match(registry.entry('iris'), { name: 'iris', state: 'READY', reason: undefined, defaultVersion: '1', versions: ['1'], platform: 'svc' })
  t.same(registry.entry('iris')?.versionStates, [{ version: '1', state: 'READY', reason: refused }], 'the old build serves on, the refusal shown')
  t.same(
    events('model_reload_failed').map(({ level, model, version, reason }) => ({ level, model, version, reason })),
    [
      {
        level: 'warning',
        model: 'iris',
        version: '1',
        reason:
          'iris/1/model.json: sha256: does not match the content: the file was changed or damaged after training; if it was edited on purpose, sign it: svc sign iris/1/model.json',
      },
    ],
  )
  t.equal(events('model_reload_failed')[0]?.['detail'], 'svc sign memory/iris/1/model.json', 'the log names the command and the file in the store')
  await registry.reload()
  t.equal(events('model_reload_failed').length, 1, 'the same failure is not logged on every pass')
  t.same(events('model_reloaded'), [])

  files.put('iris/1/model.json', rebuilt('iris'))
  await registry.reload()
  t.not(registry.resolve('iris'), old, 'the fixed artifact is served')
  t.equal(events('model_reloaded').length, 1)
  files.put('iris/1/model.json', corrupted('iris'))
  await registry.reload()
  t.equal(events('model_reload_failed').length, 2, 'a failure that comes back is logged again')
})

t.test('a new default version that fails keeps the old default serving', async (t) => {
  const { registry, files, events, readiness } = harness()
  await registry.load()
  const old = registry.resolve('iris')
  files.put('iris/manifest.json', manifest('2'))
  files.put('iris/2/model.json', corrupted('iris'))
  await registry.reload()
  t.equal(registry.resolve('iris'), old)
  t.match(registry.entry('iris'), { name: 'iris', state: 'READY', reason: undefined, defaultVersion: '1', versions: ['1'], platform: 'svc' })
  t.match(registry.entry('iris')?.versionStates, [
    { version: '1', state: 'READY', reason: undefined },
    { version: '2', state: 'FAILED', reason: /^iris\/2\/model\.json: / },
  ])
  t.match(events('model_reload_failed'), [{ level: 'warning', model: 'iris', version: '2', reason: /^iris\/2\/model\.json: / }])
  t.same(await readiness(), { 'cars/1': 1, 'iris/1': 1 })

  files.put('iris/2/model.json', artifactFile('iris', '2'))
  await registry.reload()
  t.equal(registry.resolve('iris')?.version, '2')
  t.equal(registry.resolve('iris', '1'), undefined, 'the manifest no longer lists 1')
  t.same(await readiness(), { 'cars/1': 1, 'iris/2': 1 }, 'the series of the version dropped is removed')
})

t.test('a manifest that turns invalid, or goes missing from one listing, keeps the model serving; from two in a row, removes it', async (t) => {
  const { registry, files, events } = harness()
  await registry.load()
  const old = registry.resolve('iris')
  files.put('iris/manifest.json', '{"default_version":1}')
  await registry.reload()
  t.equal(registry.resolve('iris'), old)
  t.match(events('model_reload_failed'), [
    { model: 'iris', reason: 'iris/manifest.json: default_version: must be a version string matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/' },
  ])
  t.notOk('version' in events('model_reload_failed')[0]!)

  files.remove('iris/manifest.json') // the store no longer lists iris
  await registry.reload()
  t.equal(registry.resolve('iris'), old, 'a model once loaded is not dropped by one listing without it')
  t.match(events('model_reload_failed').at(-1), {
    model: 'iris',
    reason: 'iris/manifest.json: not found in the model store',
    detail: 'iris/manifest.json not found in memory',
  })
  t.same(events('model_removed'), [])
  await registry.reload()
  t.equal(events('model_reload_failed').length, 2)
  t.equal(registry.resolve('iris'), undefined, 'the second listing in a row without it removes it')
  t.equal(registry.entry('iris'), undefined)
  t.match(events('model_removed'), [{ level: 'info', model: 'iris' }])
  t.ok(registry.resolve('cars'), 'the other model serves on')

  files.put('iris/manifest.json', manifest('1'))
  await registry.reload()
  t.equal(registry.resolve('iris')?.model.sha256, old?.model.sha256, 'listed again: loaded afresh')
  t.equal(events('model_removed').length, 1)
})

t.test('an UNAVAILABLE model becomes READY once its artifact is fixed', async (t) => {
  const { registry, files, events } = harness({ ...shippedFiles(), 'iris/1/model.json': corrupted('iris') })
  await registry.load()
  t.equal(registry.entry('iris')?.state, 'UNAVAILABLE')
  await registry.reload()
  t.equal(events('model_unavailable').length, 1, 'logged when it became unavailable, not on every pass')
  files.put('iris/1/model.json', artifactFile('cars', '1'))
  await registry.reload()
  t.equal(events('model_unavailable').length, 2, 'a different reason is logged')
  t.match(registry.entry('iris')?.reason, /^default version 1: iris\/1\/model\.json: is model /)
  files.put('iris/1/model.json', artifactFile('iris', '1'))
  await registry.reload()
  t.same(registry.entry('iris'), {
    name: 'iris',
    state: 'READY',
    reason: undefined,
    defaultVersion: '1',
    versions: ['1'],
    platform: 'svc',
    versionStates: [{ version: '1', state: 'READY', reason: undefined }],
  })
  t.match(events('model_reloaded'), [{ model: 'iris', version: '1' }])
})

t.test('versions added to and dropped from the manifest are served and unserved', async (t) => {
  const { registry, files, readiness } = harness()
  await registry.load()
  files.put('iris/2/model.json', artifactFile('iris', '2'))
  files.put('iris/3/model.json', artifactFile('iris', '3'))
  files.put('iris/manifest.json', manifest('1', ['2', '3']))
  await registry.reload()
  t.same(registry.entry('iris')?.versions, ['1', '2', '3'])
  t.same(await readiness(), { 'cars/1': 1, 'iris/1': 1, 'iris/2': 0, 'iris/3': 0 })
  files.put('iris/manifest.json', manifest('1', ['3']))
  await registry.reload()
  t.same(registry.entry('iris')?.versions, ['1', '3'])
  t.equal(registry.resolve('iris', '2'), undefined)
  t.same(await readiness(), { 'cars/1': 1, 'iris/1': 1, 'iris/3': 0 })
  files.put('iris/manifest.json', manifest('1', ['2']))
  await registry.reload()
  t.same(registry.entry('iris')?.versions, ['1', '2'], 'the same number of versions, another set')
})

t.test('a model added to the store is loaded by the next pass', async (t) => {
  const { registry, files, events } = harness({ 'iris/manifest.json': manifest('1'), 'iris/1/model.json': artifactFile('iris', '1') })
  await registry.load()
  files.put('cars/1/model.json', artifactFile('cars', '1'))
  files.put('cars/manifest.json', manifest('1'))
  await registry.reload()
  t.same(
    registry.entries().map((entry) => entry.name),
    ['cars', 'iris'],
  )
  t.equal(registry.entry('cars')?.state, 'READY')
  t.same(events('model_reloaded'), [], 'new, not reloaded')
})

t.test('a store that fails to list keeps everything serving, and the failure is logged once', async (t) => {
  const { registry, store, events } = harness()
  await registry.load()
  const entries = registry.entries()
  store.listError = new StoreError('UPSTREAM_ERROR', 'GET http://models.example/index.json answered HTTP 503')
  await registry.reload()
  await registry.reload()
  t.equal(registry.entries(), entries)
  t.equal(registry.isReady(), true)
  t.equal(events('model_store_failed').length, 1)
  store.listError = undefined
  await registry.reload()
  store.listError = new StoreError('UPSTREAM_ERROR', 'GET http://models.example/index.json answered HTTP 503')
  await registry.reload()
  t.equal(events('model_store_failed').length, 2, 'logged again after a pass that listed')
})

t.test('concurrent reloads share one pass', async (t) => {
  const { registry, store } = harness()
  await registry.load()
  const first = registry.reload()
  t.equal(registry.reload(), first)
  await first
  t.equal(store.calls.list, 2)
  const next = registry.reload()
  t.not(next, first, 'a new pass once the last one ended')
  await next
})

t.test('hot reload swaps atomically: concurrent requests see the old model or the new, whole', async (t) => {
  const { registry, files, store } = harness({
    'iris/manifest.json': manifest('1', ['2']),
    'iris/1/model.json': artifactFile('iris', '1'),
    'iris/2/model.json': artifactFile('iris', '2'),
    'cars/manifest.json': manifest('1'),
    'cars/1/model.json': artifactFile('cars', '1'),
  })
  await registry.load()
  const old = { default: registry.resolve('iris'), 2: registry.resolve('iris', '2'), cars: registry.resolve('cars') }
  // Every file changes, the default moves to 2, and each read takes a while: the pass spans many turns.
  files.put('iris/manifest.json', manifest('2', ['1']))
  files.put('iris/1/model.json', rebuilt('iris', '1', 1))
  files.put('iris/2/model.json', rebuilt('iris', '2', 2))
  files.put('cars/1/model.json', rebuilt('cars', '1', 3))
  store.readDelayMs = 5
  const pass = registry.reload()
  let isDone = false
  void pass.then(() => (isDone = true))
  const seen = new Set<string>()
  const problems: string[] = []
  let observations = 0
  while (!isDone) {
    // One request's view, read in one turn: the entry and the models it resolves.
    const entry = registry.entry('iris')
    const served = registry.resolve('iris') as ServedModel
    const cars = registry.resolve('cars') as ServedModel
    if (!isConsistent(served) || !isConsistent(cars)) problems.push('a model is not whole')
    if (served.version !== entry?.defaultVersion) problems.push(`the entry names default ${entry?.defaultVersion}, ${served.version} is served`)
    const isOld = served === old.default
    const isNew = served.version === '2' && served !== old[2]
    if (isOld === isNew) problems.push('the default is neither the old model nor the new')
    // Both models change in the same assignment: never one new and the other old.
    if ((cars === old.cars) !== isOld) problems.push('iris and cars come from different passes')
    seen.add(isOld ? 'old' : 'new')
    observations++
    await turn()
  }
  t.same(problems, [])
  t.ok(observations > 10, `many requests during the pass (${observations})`)
  t.ok(seen.has('old'), 'requests saw the old models while the new ones loaded')
  t.equal(registry.resolve('iris')?.model.sha256, JSON.parse(rebuilt('iris', '2', 2)).sha256, 'and the new default after')
  t.equal(registry.resolve('iris', '1')?.model.sha256, JSON.parse(rebuilt('iris', '1', 1)).sha256)
})

t.test('the cron job runs a pass on every `every`-th tick of its plan', async (t) => {
  const jobs: Array<{ expression: string; tick: () => void; isStopped: boolean }> = []
  const scheduler = (expression: string, tick: () => void) => {
    const job = { expression, tick, isStopped: false }
    jobs.push(job)
    return () => void (job.isStopped = true)
  }
  const { registry, store } = harness(shippedFiles(), { reloadIntervalS: 90, scheduler })
  await registry.load()
  registry.start()
  registry.start()
  t.equal(jobs.length, 1, 'started once')
  const [job] = jobs
  t.equal(job?.expression, '*/30 * * * * *')
  job?.tick()
  job?.tick()
  t.equal(store.calls.list, 1, 'no pass before the third tick')
  job?.tick()
  await registry.reload() // joins the pass the tick started
  t.equal(store.calls.list, 2)
  for (let i = 0; i < 3; i++) job?.tick()
  await registry.reload()
  t.equal(store.calls.list, 3, 'the count starts again after a pass')
  registry.stop()
  t.equal(job?.isStopped, true)
  registry.stop()
  registry.start()
  t.equal(jobs.length, 2, 'started again after a stop')
  registry.stop()
})

t.test('with an interval of 0 there is no job', async (t) => {
  let scheduled = 0
  const { registry } = harness(shippedFiles(), {
    scheduler: () => {
      scheduled++
      return () => {}
    },
  })
  registry.start()
  registry.stop()
  t.equal(scheduled, 0)
})

t.test('node-cron runs the job: a 1 s interval reloads on its own, and stop ends it', async (t) => {
  const { registry, store } = harness(shippedFiles(), { reloadIntervalS: 1 })
  await registry.load()
  registry.start()
  t.teardown(registry.stop)
  // Waits for a pass rather than expecting one in a second or two: a loaded machine may miss a
  // tick, and node-cron does not make one up. 15 s only says the job runs at all.
  const deadline = Date.now() + 15_000
  while (store.calls.list < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(store.calls.list >= 2, 'a scheduled pass ran')
  registry.stop()
  const after = store.calls.list
  // A sleep only overshoots: at least one more tick would have come in it.
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal(store.calls.list, after, 'no pass after stop')
})

t.test('a version whose files differ from its checksums.json fails as a wrong sha256 does, and is not read again until one changes', async (t) => {
  const { registry, files, store, events } = harness()
  await registry.load()
  const served = registry.resolve('iris') as ServedModel
  const good = Buffer.from(artifactFile('iris', '2'))
  files.put('iris/manifest.json', manifest('1', ['2']))
  files.put('iris/2/model.json', good)
  files.put('iris/2/checksums.json', formatChecksums(new Map([['model.json', Buffer.from(`${good.toString()} `)]])))
  await registry.reload()
  t.equal(registry.resolve('iris'), served, 'version 1 keeps serving')
  t.equal(registry.resolve('iris', '2'), undefined)
  t.match(registry.entry('iris')?.versionStates?.[1], { version: '2', state: 'FAILED' })
  t.match(events('model_reload_failed').at(-1), {
    model: 'iris',
    version: '2',
    reason: /^iris\/2\/model\.json hashes to sha256 [0-9a-f]{64}, not the [0-9a-f]{64} recorded in iris\/2\/checksums\.json/,
  })
  const reads = store.calls.read
  await registry.reload()
  t.equal(store.calls.read, reads, 'the same files are not read again')
  files.put('iris/2/checksums.json', formatChecksums(new Map([['model.json', good]])))
  await registry.reload()
  t.ok(registry.resolve('iris', '2'), 'served once checksums.json matches')
})
