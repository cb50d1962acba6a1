// The directory store's own rules: symlinks may point within the root and never out of it, a
// root that is a link is followed when swapped, and the etag sees a file replaced by rename.
import { mkdir, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { createDirectoryStore } from '../../../lib/models/store/directory.js'
import { tempTree } from '../../fixtures/model-store.js'

const MAX_BYTES = 1024

t.test('a link to a file outside the root is refused, for read and stat', async (t) => {
  const outside = await tempTree(t, { 'secret.txt': 'top secret' })
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  await mkdir(join(root, 'iris', '1'))
  await symlink(join(outside, 'secret.txt'), join(root, 'iris', '1', 'model.json'))
  const store = createDirectoryStore(root, { maxBytes: MAX_BYTES })
  await t.rejects(store.read('iris/1/model.json'), {
    code: 'INVALID_PATH',
    message: `${join(root, 'iris/1/model.json')} links to outside the store at ${root}`,
  })
  await t.rejects(store.stat('iris/1/model.json'), { code: 'INVALID_PATH' })
})

t.test('a model directory linked from outside the root is not listed and not read', async (t) => {
  const outside = await tempTree(t, { 'cars/manifest.json': '{}', 'cars/1/model.json': '{}' })
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  await symlink(join(outside, 'cars'), join(root, 'cars'))
  const store = createDirectoryStore(root, { maxBytes: MAX_BYTES })
  t.same(await store.list(), ['iris'])
  await t.rejects(store.read('cars/manifest.json'), { code: 'INVALID_PATH' })
})

t.test('links within the root are followed, a model directory included', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{"default_version":"current"}', 'iris/2/model.json': '{"v":2}' })
  await symlink('2', join(root, 'iris', 'current'))
  await symlink('iris', join(root, 'flowers'))
  const store = createDirectoryStore(root, { maxBytes: MAX_BYTES })
  t.same(await store.read('iris/current/model.json'), Buffer.from('{"v":2}'))
  t.same(await store.list(), ['flowers', 'iris'])
  t.equal((await store.stat('flowers/current/model.json')).etag, (await store.stat('iris/2/model.json')).etag, 'one file, one etag')
})

t.test('a root that is a link swapped on deploy is followed', async (t) => {
  const base = await tempTree(t, { 'releases/41/iris/manifest.json': '{"default_version":"1"}', 'releases/42/iris/manifest.json': '{"default_version":"2"}' })
  const current = join(base, 'current')
  await symlink(join(base, 'releases', '41'), current)
  const store = createDirectoryStore(current, { maxBytes: MAX_BYTES })
  t.same(await store.read('iris/manifest.json'), Buffer.from('{"default_version":"1"}'))
  // The atomic swap: a new link renamed over the old one.
  await symlink(join(base, 'releases', '42'), join(base, 'next'))
  await rename(join(base, 'next'), current)
  t.same(await store.read('iris/manifest.json'), Buffer.from('{"default_version":"2"}'))
})

t.test('a link loop is UNREADABLE, and list reports it rather than hide a model', async (t) => {
  const root = await tempTree(t, { 'iris/1/model.json': '{}' })
  await symlink('b', join(root, 'iris', 'a'))
  await symlink('a', join(root, 'iris', 'b'))
  await symlink('a', join(root, 'iris', 'manifest.json'))
  const store = createDirectoryStore(root, { maxBytes: MAX_BYTES })
  await t.rejects(store.read('iris/a'), { code: 'UNREADABLE', message: `${join(root, 'iris/a')} cannot be read: ELOOP` })
  await t.rejects(store.list(), { code: 'UNREADABLE' })
})

t.test('list skips entries that are not models', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}', 'a\\b/manifest.json': '{}', 'index.json': '{}', 'empty/.keep': '' })
  t.same(await createDirectoryStore(root, { maxBytes: MAX_BYTES }).list(), ['iris'])
})

t.test('a missing root is NOT_FOUND, and so is a root that is a file', async (t) => {
  const base = await tempTree(t, { 'file.json': '{}' })
  const missing = createDirectoryStore(join(base, 'nope'), { maxBytes: MAX_BYTES })
  await t.rejects(missing.list(), { code: 'NOT_FOUND', message: `${join(base, 'nope')} not found` })
  await t.rejects(missing.read('iris/manifest.json'), { code: 'NOT_FOUND', message: `${join(base, 'nope', 'iris/manifest.json')} not found` })
  await t.rejects(createDirectoryStore(join(base, 'file.json'), { maxBytes: MAX_BYTES }).list(), { code: 'NOT_FOUND' })
})

t.test('the etag changes when a file is replaced by rename, even with the same size and mtime', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{"default_version":"1"}', 'staging.json': '{"default_version":"2"}' })
  const store = createDirectoryStore(root, { maxBytes: MAX_BYTES })
  const manifest = join(root, 'iris', 'manifest.json')
  // Whole seconds, so both files carry exactly the same mtime (as `cp -p` or tar would set it).
  await utimes(manifest, 1_700_000_000, 1_700_000_000)
  await utimes(join(root, 'staging.json'), 1_700_000_000, 1_700_000_000)
  const before = await store.stat('iris/manifest.json')
  await rename(join(root, 'staging.json'), manifest)
  const after = await store.stat('iris/manifest.json')
  t.equal(after.size, before.size)
  t.equal(after.mtimeMs, before.mtimeMs)
  t.not(after.etag, before.etag)
})

t.test('stat reports the file system size and mtime', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{"default_version":"1"}' })
  await utimes(join(root, 'iris', 'manifest.json'), 1_700_000_000, 1_700_000_000)
  t.match(await createDirectoryStore(root, { maxBytes: MAX_BYTES }).stat('iris/manifest.json'), { size: 23, mtimeMs: 1_700_000_000_000 })
})

t.test('a file removed after listing is NOT_FOUND', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  const store = createDirectoryStore(root, { maxBytes: MAX_BYTES })
  t.same(await store.list(), ['iris'])
  await rm(join(root, 'iris', 'manifest.json'))
  await writeFile(join(root, 'iris', 'notes.txt'), '')
  t.same(await store.list(), [])
  await t.rejects(store.stat('iris/manifest.json'), { code: 'NOT_FOUND' })
})
