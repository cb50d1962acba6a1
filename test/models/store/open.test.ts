// The store contract, run against every implementation through one table (as the router's cases
// are): list, read, stat, missing files, directories, size limits, invalid paths, and a change
// seen by stat and read. Then the spec parser, the default root and createStore.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { createStore } from '../../../lib/models/store/open.js'
import type { Store } from '../../../lib/models/store/store.js'
import { createDirectoryStore } from '../../../lib/models/store/directory.js'
import { StoreError, storeErrorOf, type StoreErrorCode } from '../../../lib/models/store/error.js'
import { createHttpStore } from '../../../lib/models/store/http.js'
import { createMemoryStore } from '../../../lib/models/store/memory.js'
import { checkPath } from '../../../lib/models/store/path.js'
import { DEFAULT_STORE_ROOT, parseStoreSpec, type StoreSpec } from '../../../lib/config/model-store.js'
import { artifactServer, ensureDir, tempTree, type Files } from '../../fixtures/model-store.js'

const IRIS_2 = '{"name":"iris","version":"2","weights":[0.5,-1.25]}'
const ODD = 'cars/1 final?#%/model.json'
const FILES: Files = {
  'index.json': '{"models":["iris","cars"]}',
  'iris/manifest.json': '{"default_version":"2"}',
  'iris/1/model.json': '{"name":"iris","version":"1"}',
  'iris/2/model.json': IRIS_2,
  'cars/manifest.json': '{"default_version":"1"}',
  'cars/1/model.json': Buffer.from('{"name":"cars"}'),
  [ODD]: '{"odd":true}',
  // No manifest: a version being uploaded, not yet a model.
  'drafts/1/model.json': '{}',
  'big/1/model.json': 'x'.repeat(100),
}
const MAX_BYTES = 64

type Variant = Readonly<{
  name: string
  make(t: Test, files: Files): Promise<Readonly<{ store: Store; write(path: string, content: string): Promise<void> }>>
}>

const VARIANTS: readonly Variant[] = [
  {
    name: 'directory',
    make: async (t, files) => {
      const root = await tempTree(t, files)
      return {
        store: createDirectoryStore(root, { maxBytes: MAX_BYTES }),
        write: async (path, content) => writeFile(await ensureDir(join(root, path)), content),
      }
    },
  },
  {
    name: 'http',
    make: async (t, files) => {
      const root = await tempTree(t, files)
      const server = await artifactServer(t, root)
      return {
        store: createHttpStore(new URL(server.url), { timeoutMs: 2000, maxBytes: MAX_BYTES }),
        write: async (path, content) => writeFile(await ensureDir(join(root, path)), content),
      }
    },
  },
  {
    name: 'memory',
    make: async (_, files) => {
      const store = createMemoryStore(files, { maxBytes: MAX_BYTES })
      return { store, write: async (path, content) => store.put(path, content) }
    },
  },
]

type Case = Readonly<{ name: string; op: 'list' | 'read' | 'stat'; path?: string; expect: Readonly<{ value: unknown }> | Readonly<{ code: StoreErrorCode }> }>

const INVALID_PATHS = [
  '',
  '/iris/manifest.json',
  '../iris/manifest.json',
  'iris/../cars/manifest.json',
  'iris//manifest.json',
  'iris/',
  './iris/manifest.json',
  'iris/./manifest.json',
  'iris\\manifest.json',
  'iris/manifest.json\0',
  'iris/\n/manifest.json',
  'iris/\ud800/manifest.json',
  'iris/\udc00/manifest.json',
]

const CASES: readonly Case[] = [
  { name: 'list names the models with a manifest, sorted', op: 'list', expect: { value: ['cars', 'iris'] } },
  { name: 'read returns a model.json', op: 'read', path: 'iris/2/model.json', expect: { value: Buffer.from(IRIS_2) } },
  { name: 'read returns a manifest', op: 'read', path: 'iris/manifest.json', expect: { value: Buffer.from('{"default_version":"2"}') } },
  { name: 'a name with a space, ?, # and % is one literal segment', op: 'read', path: ODD, expect: { value: Buffer.from('{"odd":true}') } },
  { name: 'an encoded dot-dot is a literal name, not a way up', op: 'read', path: 'iris/1/%2e%2e/manifest.json', expect: { code: 'NOT_FOUND' } },
  { name: 'read of a missing version is NOT_FOUND', op: 'read', path: 'iris/3/model.json', expect: { code: 'NOT_FOUND' } },
  { name: 'read of a missing model is NOT_FOUND', op: 'read', path: 'nope/manifest.json', expect: { code: 'NOT_FOUND' } },
  { name: 'stat of a missing file is NOT_FOUND', op: 'stat', path: 'iris/3/model.json', expect: { code: 'NOT_FOUND' } },
  { name: 'read of a directory is NOT_FOUND', op: 'read', path: 'iris/2', expect: { code: 'NOT_FOUND' } },
  { name: 'stat of a directory is NOT_FOUND', op: 'stat', path: 'iris', expect: { code: 'NOT_FOUND' } },
  { name: 'read of a file over maxBytes is TOO_LARGE', op: 'read', path: 'big/1/model.json', expect: { code: 'TOO_LARGE' } },
  ...INVALID_PATHS.flatMap((path): Case[] => [
    { name: `read refuses ${JSON.stringify(path)}`, op: 'read', path, expect: { code: 'INVALID_PATH' } },
    { name: `stat refuses ${JSON.stringify(path)}`, op: 'stat', path, expect: { code: 'INVALID_PATH' } },
  ]),
]

const run = (store: Store, { op, path = '' }: Case): Promise<unknown> => (op === 'list' ? store.list() : store[op](path))

for (const variant of VARIANTS) {
  t.test(`${variant.name} store`, async (t) => {
    const { store, write } = await variant.make(t, FILES)

    t.test('store cases', async (t) => {
      for (const c of CASES) {
        t.test(c.name, async (t) => {
          if ('value' in c.expect) t.same(await run(store, c), c.expect.value)
          else await t.rejects(run(store, c), { name: 'StoreError', code: c.expect.code }, c.expect.code)
        })
      }
    })

    t.test('stat gives the size, a time and a quoted etag, the same while the file is unchanged', async (t) => {
      const first = await store.stat('iris/2/model.json')
      t.equal(first.size, Buffer.byteLength(IRIS_2))
      t.type(first.mtimeMs, 'number')
      t.match(first.etag, /^(?:W\/)?"[^"]+"$/)
      t.same(await store.stat('iris/2/model.json'), first)
      t.equal((await store.stat('big/1/model.json')).size, 100, 'stat does not read, so no limit applies')
    })

    t.test('a changed file has a new etag and reads as its new bytes', async (t) => {
      const before = await store.stat('iris/1/model.json')
      t.same(await store.read('iris/1/model.json'), Buffer.from('{"name":"iris","version":"1"}'))
      await write('iris/1/model.json', '{"name":"iris","version":"1","retrained":true}')
      t.not((await store.stat('iris/1/model.json')).etag, before.etag)
      t.same(await store.read('iris/1/model.json'), Buffer.from('{"name":"iris","version":"1","retrained":true}'))
    })

    t.test('a model whose manifest appears is listed', async (t) => {
      await write('drafts/manifest.json', '{"default_version":"1"}')
      await write('index.json', '{"models":["iris","cars","drafts"]}')
      t.same(await store.list(), ['cars', 'drafts', 'iris'])
    })

    t.test('read returns a copy: changing it changes nothing stored', async (t) => {
      const bytes = await store.read('cars/1/model.json')
      bytes.fill(0)
      t.same(await store.read('cars/1/model.json'), Buffer.from('{"name":"cars"}'))
    })
  })
}

t.test('checkPath returns the segments of a valid path', async (t) => {
  t.same(checkPath('iris/2/model.json'), ['iris', '2', 'model.json'])
  t.same(checkPath('.hidden/..x/model.json'), ['.hidden', '..x', 'model.json'], 'dots inside a name are fine')
  t.throws(() => checkPath('a/../b'), { name: 'StoreError', code: 'INVALID_PATH', message: /invalid store path "a\/..\/b"/ })
})

t.test('the default store lists the shipped artifacts, each with its default version', async (t) => {
  const spec = parseStoreSpec(undefined)
  t.same(spec, { kind: 'directory', root: DEFAULT_STORE_ROOT })
  const store = createStore(spec as StoreSpec)
  const models = await store.list()
  t.ok(models.includes('iris'), 'iris is shipped')
  for (const model of models) {
    const manifest = JSON.parse((await store.read(`${model}/manifest.json`)).toString('utf8')) as { default_version: string }
    t.ok((await store.stat(`${model}/${manifest.default_version}/model.json`)).size > 0, `${model} ${manifest.default_version}`)
  }
})

t.test('createStore builds the store a spec names', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}', 'iris/1/model.json': 'x'.repeat(10) })
  const server = await artifactServer(t, root)
  const stores = [
    createStore({ kind: 'directory', root }),
    createStore({ kind: 'http', url: new URL(`${server.url}/`) }),
    createStore({ kind: 'memory', files: { 'iris/manifest.json': '{}', 'iris/1/model.json': 'x'.repeat(10) } }, { now: () => 1234 }),
  ]
  t.same(
    stores.map((s) => s.description),
    [root, `${server.url}/`, 'memory'],
  )
  t.equal((await stores[2]?.stat('iris/1/model.json'))?.mtimeMs, 1234, 'options reach the store')
  for (const store of stores) t.equal((await store.read('iris/1/model.json')).length, 10, store.description)
  const small = [
    createStore({ kind: 'directory', root }, { maxBytes: 5 }),
    createStore({ kind: 'http', url: new URL(server.url) }, { maxBytes: 5, timeoutMs: 1000 }),
  ]
  for (const store of small) await t.rejects(store.read('iris/1/model.json'), { code: 'TOO_LARGE' }, store.description)
})

t.test('storeErrorOf keeps a StoreError and reads anything else a store rejects with as UNREADABLE, its message kept', async (t) => {
  const stored = new StoreError('NOT_FOUND', 'iris/1/model.json not found')
  t.equal(storeErrorOf(stored), stored)
  const other = new TypeError('a store bug')
  t.match(storeErrorOf(other), { name: 'StoreError', code: 'UNREADABLE', message: 'a store bug', cause: other })
  t.match(storeErrorOf('thrown text'), { code: 'UNREADABLE', message: 'thrown text' })
})
