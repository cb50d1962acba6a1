// A pushed version listed in its model's manifest by compare-and-swap, on the memory store: a first
// manifest made, a version added with every other member kept in its order, a listed version left
// alone, an invalid manifest never overwritten, and writers racing: both land, or, when the manifest
// keeps changing, a bounded number of tries and a clear failure.
import t from 'tap'
import { StoreError } from '../../../lib/models/store/error.js'
import { parseManifest } from '../../../lib/models/store/manifest.js'
import { createMemoryStore, type MemoryStore } from '../../../lib/models/store/memory.js'
import type { Store } from '../../../lib/models/store/store.js'
import { PushError } from '../../../lib/tools/push/errors.js'
import { DEFAULT_RETRY, listVersion, type RetryOptions } from '../../../lib/tools/push/manifest.js'
import { counting } from '../../fixtures/model-registry.js'

const PATH = 'iris/manifest.json'
const NO_WAIT: RetryOptions = { ...DEFAULT_RETRY, sleep: async () => {} }
const json = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`

/** The memory store, `before` run ahead of each write: another writer's change landing first. */
const racing = (inner: MemoryStore, before: (path: string) => void): Store => ({
  ...inner,
  write: async (path, bytes, condition) => {
    before(path)
    return inner.write(path, bytes, condition)
  },
})

const text = async (store: Store, path = PATH): Promise<string> => (await store.read(path)).toString()

t.test("a model's first version makes its manifest, that version its default", async (t) => {
  const store = createMemoryStore()
  const { isAdded, manifest } = await listVersion(store, 'iris', '3', NO_WAIT)
  t.ok(isAdded)
  t.same(manifest.versions, ['3'])
  t.equal(manifest.defaultVersion, '3')
  t.equal(await text(store), '{\n  "default_version": "3",\n  "versions": [\n    "3"\n  ]\n}\n')
})

t.test('a version is added to versions, every other member kept where it was; the default is not changed', async (t) => {
  const before = { log: { percent: 10 }, default_version: '2', versions: ['1', '2', '10'], canary: { version: '10', percent: 5 } }
  const store = createMemoryStore({ [PATH]: JSON.stringify(before) })
  const { isAdded, manifest } = await listVersion(store, 'iris', '3', NO_WAIT)
  t.ok(isAdded)
  t.equal(await text(store), json({ ...before, versions: ['1', '2', '3', '10'] }), 'in numeric order, before 10')
  t.same(manifest.versions, ['1', '2', '3', '10'])
  t.equal(manifest.defaultVersion, '2')
  t.same(manifest.canary, { version: '10', percent: 5 })
  await listVersion(store, 'iris', '11', NO_WAIT)
  t.same(JSON.parse(await text(store)).versions, ['1', '2', '3', '10', '11'], 'after the last')
})

t.test('a list in an order of its own keeps it: the version goes before the first listed after it', async (t) => {
  const store = createMemoryStore({ [PATH]: JSON.stringify({ default_version: '1', versions: ['5', '1'] }) })
  await listVersion(store, 'iris', '2', NO_WAIT)
  t.same(JSON.parse(await text(store)).versions, ['2', '5', '1'])
})

t.test('a manifest without versions gains them after default_version, the default listed too', async (t) => {
  const store = createMemoryStore({ [PATH]: JSON.stringify({ default_version: '7', log: { percent: 1 } }) })
  const { manifest } = await listVersion(store, 'iris', '10', NO_WAIT)
  t.equal(await text(store), json({ default_version: '7', versions: ['7', '10'], log: { percent: 1 } }))
  t.same(manifest.versions, ['7', '10'])
})

t.test('a version already served, listed or the default, leaves the manifest unwritten', async (t) => {
  const original = JSON.stringify({ default_version: '1', versions: ['2'] })
  const store = createMemoryStore({ [PATH]: original })
  const { etag } = await store.stat(PATH)
  for (const version of ['1', '2']) {
    const { isAdded, manifest } = await listVersion(store, 'iris', version, NO_WAIT)
    t.notOk(isAdded, version)
    t.same(manifest.versions, ['1', '2'])
  }
  t.equal((await store.stat(PATH)).etag, etag)
  t.equal(await text(store), original, 'byte for byte')
})

t.test('a manifest svc would refuse is named and never overwritten', async (t) => {
  for (const [bad, why] of [
    ['{"default_version": "1", ', /is not UTF-8 JSON/],
    ['{"default_version": "1", "versoins": ["2"]}', /versoins: is not a member of a manifest/],
    ['{"versions": ["2"]}', /default_version: is missing/],
  ] as const) {
    const store = createMemoryStore({ [PATH]: bad })
    const error = await listVersion(store, 'iris', '3', NO_WAIT).catch((caught: unknown) => caught)
    t.ok(error instanceof PushError && error.code === 'INVALID_MANIFEST', bad)
    t.match(error, { message: /^iris\/manifest\.json in memory is not a manifest svc serves, so push leaves it alone: / })
    t.match(error, { message: why })
    t.equal(await text(store), bad)
  }
})

t.test('two pushes racing from one manifest both land: the one whose swap fails reads again and retries', async (t) => {
  const inner = createMemoryStore({ [PATH]: JSON.stringify({ default_version: '1', versions: ['1'] }) })
  // Both read the manifest before either writes, so both swap from the same etag.
  let waiting: (() => void) | undefined
  const bothRead = new Promise<void>((resolve) => void (waiting = resolve))
  let reads = 0
  const refused: string[] = []
  const store: Store = {
    ...inner,
    read: async (path) => {
      const bytes = await inner.read(path)
      if (++reads === 2) waiting?.()
      if (reads <= 2) await bothRead
      return bytes
    },
    write: async (path, bytes, condition) => {
      try {
        return await inner.write(path, bytes, condition)
      } catch (error: unknown) {
        if (error instanceof StoreError) refused.push(error.code)
        throw error
      }
    },
  }
  const [two, three] = await Promise.all([listVersion(store, 'iris', '2'), listVersion(store, 'iris', '3')])
  t.same(refused, ['PRECONDITION_FAILED'], 'one swap failed, once')
  t.ok(two.isAdded && three.isAdded)
  t.same(parseManifest(await inner.read(PATH)).versions, ['1', '2', '3'])
})

t.test('a manifest made by another writer between the look and the write is read and added to', async (t) => {
  const inner = createMemoryStore()
  let isFirst = true
  const store = racing(inner, (path) => {
    if (isFirst) inner.put(path, JSON.stringify({ default_version: '1' }))
    isFirst = false
  })
  const { manifest } = await listVersion(store, 'iris', '2', NO_WAIT)
  t.same(manifest.versions, ['1', '2'])
  t.equal(manifest.defaultVersion, '1', "the other writer's default")
})

t.test('a manifest that changes before every write: a bounded number of tries, with growing jittered waits, then a failure saying what to do', async (t) => {
  const inner = createMemoryStore({ [PATH]: JSON.stringify({ default_version: '1' }) })
  let changes = 0
  const store = racing(inner, (path) => inner.put(path, JSON.stringify({ default_version: '1', log: { percent: ++changes } })))
  const waits: number[] = []
  const randoms = [0, 0.999, 0.5, 0, 0.999, 0, 0]
  const retry: RetryOptions = { tries: 8, sleep: async (ms) => void waits.push(ms), random: () => randoms[waits.length] ?? 0 }
  const error = await listVersion(store, 'iris', '2', retry).catch((caught: unknown) => caught)
  t.ok(error instanceof PushError && error.code === 'MANIFEST_CONTENDED')
  t.match(error, {
    message: "iris/manifest.json in memory changed before each of 8 writes: other writers keep changing it; push again (the version's files are in place)",
    cause: { code: 'PRECONDITION_FAILED' },
  })
  t.equal(changes, 8, 'eight tries')
  t.equal(waits.length, 7, 'a wait between each two')
  t.same(
    waits.map((ms) => Math.round(ms)),
    [20, 80, 120, 100, 200, 100, 100],
    'from 20-40 ms, doubling to 100-200 ms',
  )
  t.same(parseManifest(await inner.read(PATH)).versions, ['1'], "only the other writer's changes")
  await t.rejects(
    listVersion(store, 'iris', '2', { ...retry, tries: 1 }),
    { code: 'MANIFEST_CONTENDED', message: /changed before each of 1 writes/ },
    'one try: no wait',
  )
  t.equal(waits.length, 7)
})

t.test("a store's failure is its own error, not retried", async (t) => {
  const store = counting(createMemoryStore({ [PATH]: JSON.stringify({ default_version: '1' }) }))
  store.failures.set(PATH, { method: 'stat', error: new StoreError('UNREADABLE', 'iris/manifest.json cannot be read: EACCES') })
  await t.rejects(listVersion(store, 'iris', '2', NO_WAIT), { name: 'StoreError', code: 'UNREADABLE' })
  t.equal(store.calls.stat, 1)
})
