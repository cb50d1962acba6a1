// The memory store's own surface: put and remove stage what a hot reload must notice.
import t from 'tap'
import { createMemoryStore } from '../../../lib/models/store/memory.js'

t.test('put adds and replaces files; the etag follows the content, mtime the clock', async (t) => {
  let now = 1000
  const store = createMemoryStore({ 'iris/manifest.json': '{"default_version":"1"}' }, { now: () => now })
  t.equal(store.description, 'memory')
  const first = await store.stat('iris/manifest.json')
  t.same(first, { size: 23, mtimeMs: 1000, etag: first.etag })
  now = 2000
  store.put('iris/manifest.json', '{"default_version":"1"}')
  const same = await store.stat('iris/manifest.json')
  t.equal(same.etag, first.etag, 'the same content, the same etag')
  t.equal(same.mtimeMs, 2000)
  store.put('iris/manifest.json', Buffer.from('{"default_version":"2"}'))
  t.not((await store.stat('iris/manifest.json')).etag, first.etag)
  t.same(await store.read('iris/manifest.json'), Buffer.from('{"default_version":"2"}'))
})

t.test('remove deletes a file, and a missing one is left alone', async (t) => {
  const store = createMemoryStore({ 'iris/manifest.json': '{}', 'cars/manifest.json': '{}' })
  t.same(await store.list(), ['cars', 'iris'])
  store.remove('cars/manifest.json')
  store.remove('cars/manifest.json')
  t.same(await store.list(), ['iris'])
  await t.rejects(store.read('cars/manifest.json'), { code: 'NOT_FOUND', message: 'cars/manifest.json not found in memory' })
})

t.test('put keeps a copy: changing the Buffer given changes nothing stored', async (t) => {
  const bytes = Buffer.from('{"v":1}')
  const store = createMemoryStore({ 'iris/1/model.json': bytes })
  bytes.fill(0)
  t.same(await store.read('iris/1/model.json'), Buffer.from('{"v":1}'))
})

t.test('an invalid path is refused when the store is built and on put', async (t) => {
  t.throws(() => createMemoryStore({ '../iris/manifest.json': '{}' }), { code: 'INVALID_PATH' })
  t.throws(() => createMemoryStore().put('/iris', '{}'), { code: 'INVALID_PATH' })
})

t.test('with no maxBytes, any size is read', async (t) => {
  t.equal((await createMemoryStore({ 'big/1/model.json': Buffer.alloc(1 << 20) }).read('big/1/model.json')).length, 1 << 20)
})

t.test('write lands only while its condition holds, and answers the new stat', async (t) => {
  const store = createMemoryStore({ 'iris/manifest.json': '{"default_version":"1"}' })
  const first = await store.stat('iris/manifest.json')
  const written = await store.write('iris/manifest.json', Buffer.from('{"default_version":"2"}'), { ifMatch: first.etag })
  t.not(written.etag, first.etag)
  t.same(written, await store.stat('iris/manifest.json'))
  t.equal((await store.read('iris/manifest.json')).toString(), '{"default_version":"2"}')
  await t.rejects(store.write('iris/manifest.json', Buffer.from('stale'), { ifMatch: first.etag }), {
    code: 'PRECONDITION_FAILED',
    message: `iris/manifest.json in memory changed: its etag is ${written.etag}, not ${first.etag}`,
  })
  await t.rejects(store.write('iris/manifest.json', Buffer.from('new'), { ifNoneMatch: '*' }), { code: 'PRECONDITION_FAILED', message: /is already there/ })
  await t.rejects(store.write('cars/manifest.json', Buffer.from('x'), { ifMatch: first.etag }), { code: 'PRECONDITION_FAILED', message: /is not there/ })
  const created = await store.write('cars/manifest.json', Buffer.from('{}'), { ifNoneMatch: '*' })
  t.equal(created.size, 2)
  t.same(await store.list(), ['cars', 'iris'])
  await t.rejects(store.write('../x', Buffer.from('x'), { ifNoneMatch: '*' }), { code: 'INVALID_PATH' })
})
