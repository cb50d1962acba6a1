// The directory store's conditional write (lib/models/store/directory-write.ts): the condition under
// the file's lock, the bytes renamed into place whole, never through a link out of the store, and of
// writers racing from one etag, in one process or several, exactly one lands.
import { execFile } from 'node:child_process'
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import t from 'tap'
import { acquireLock } from '../../../lib/models/store/directory-lock.js'
import { createDirectoryStore } from '../../../lib/models/store/directory.js'
import type { DirectoryWriteOptions } from '../../../lib/models/store/directory-write.js'
import type { StoreError } from '../../../lib/models/store/error.js'
import type { StoreStat } from '../../../lib/models/store/store.js'
import { tempTree } from '../../fixtures/model-store.js'
import { ROOT, UNTAPPED_ENV } from '../../fixtures/spawn.js'

const MAX_BYTES = 8 << 20
const WRITER = 'test/fixtures/directory-writer.ts'
const run = promisify(execFile)

const storeAt = (root: string, lock: DirectoryWriteOptions['lock'] = {}) => createDirectoryStore(root, { maxBytes: MAX_BYTES, lock })

const codeOf = (result: PromiseSettledResult<unknown>): string => (result.status === 'fulfilled' ? 'written' : (result.reason as StoreError).code)

/** Every file and directory under `dir`, relative, sorted: what a write left behind. */
const tree = async (dir: string): Promise<string[]> => (await readdir(dir, { recursive: true })).sort()

t.test('ifNoneMatch creates a file, its missing parent directories too, and returns its stat', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  const store = storeAt(root)
  const written = await store.write('iris/3/model.onnx', Buffer.from('onnx'), { ifNoneMatch: '*' })
  t.same(written, await store.stat('iris/3/model.onnx'))
  t.equal(written.size, 4)
  t.same(await store.read('iris/3/model.onnx'), Buffer.from('onnx'))
  t.same(await tree(root), ['iris', 'iris/3', 'iris/3/model.onnx', 'iris/manifest.json'], 'no lock or temporary file left')
})

t.test('ifMatch with the current etag replaces the file, with a new etag; a stale etag is PRECONDITION_FAILED', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{"default_version":"1"}' })
  const store = storeAt(root)
  const before = await store.stat('iris/manifest.json')
  const after = await store.write('iris/manifest.json', Buffer.from('{"default_version":"2"}'), { ifMatch: before.etag })
  t.not(after.etag, before.etag, 'same size, a new inode')
  t.same(after, await store.stat('iris/manifest.json'))
  await t.rejects(store.write('iris/manifest.json', Buffer.from('{"default_version":"3"}'), { ifMatch: before.etag }), {
    code: 'PRECONDITION_FAILED',
    message: `${join(root, 'iris/manifest.json')} changed: its etag is ${after.etag}, not ${before.etag}`,
  })
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), '{"default_version":"2"}')
  t.same(await tree(root), ['iris', 'iris/manifest.json'])
})

t.test('ifNoneMatch on a file that is there, and ifMatch on one that is not, are PRECONDITION_FAILED', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  const store = storeAt(root)
  await t.rejects(store.write('iris/manifest.json', Buffer.from('x'), { ifNoneMatch: '*' }), {
    code: 'PRECONDITION_FAILED',
    message: `${join(root, 'iris/manifest.json')} is already there`,
  })
  await t.rejects(store.write('cars/manifest.json', Buffer.from('x'), { ifMatch: '"1-2-3"' }), {
    code: 'PRECONDITION_FAILED',
    message: `${join(root, 'cars/manifest.json')} is not there, so it cannot match "1-2-3"`,
  })
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), '{}')
})

t.test('an invalid path is refused before anything is made', async (t) => {
  const root = await tempTree(t, {})
  const store = storeAt(root)
  for (const path of ['../escape.json', 'iris//manifest.json', '/etc/passwd', 'iris/./manifest.json']) {
    await t.rejects(store.write(path, Buffer.from('x'), { ifNoneMatch: '*' }), { code: 'INVALID_PATH' }, path)
  }
  t.same(await tree(root), [])
})

t.test('a write never goes through a link out of the store', async (t) => {
  const outside = await tempTree(t, { 'cars/manifest.json': 'theirs', 'secret.txt': 'top secret' })
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  await symlink(join(outside, 'cars'), join(root, 'cars'))
  await symlink(join(outside, 'secret.txt'), join(root, 'iris', 'secret.txt'))
  await symlink(join(outside, 'made'), join(root, 'iris', 'nowhere.json'))
  const store = storeAt(root)
  const condition = { ifNoneMatch: '*' } as const
  await t.rejects(store.write('cars/manifest.json', Buffer.from('x'), condition), {
    code: 'INVALID_PATH',
    message: `${join(root, 'cars/manifest.json')} links to outside the store at ${root}`,
  })
  await t.rejects(store.write('cars/2/model.json', Buffer.from('x'), condition), { code: 'INVALID_PATH' })
  await t.rejects(store.write('iris/secret.txt', Buffer.from('x'), condition), { code: 'INVALID_PATH' })
  // A link pointing nowhere is no file, so nothing to match: replaced by the file, never followed.
  await store.write('iris/nowhere.json', Buffer.from('in the store'), condition)
  t.equal(await readFile(join(root, 'iris', 'nowhere.json'), 'utf8'), 'in the store')
  t.same(await tree(outside), ['cars', 'cars/manifest.json', 'secret.txt'], 'nothing made or changed outside')
  t.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'top secret')
})

t.test('a link within the store is written where it points, as stat reads it', async (t) => {
  const root = await tempTree(t, { 'iris/2/model.json': '{"v":2}', 'iris/default.json': '{}' })
  await symlink('2', join(root, 'iris', 'current'))
  await symlink('default.json', join(root, 'iris', 'manifest.json'))
  const store = storeAt(root)
  const { etag } = await store.stat('iris/current/model.json')
  const written = await store.write('iris/current/model.json', Buffer.from('{"v":3}'), { ifMatch: etag })
  t.same(written, await store.stat('iris/2/model.json'))
  await store.write('iris/manifest.json', Buffer.from('{"default_version":"2"}'), { ifMatch: (await store.stat('iris/manifest.json')).etag })
  t.equal(await readFile(join(root, 'iris', 'default.json'), 'utf8'), '{"default_version":"2"}')
  t.ok((await lstat(join(root, 'iris', 'manifest.json'))).isSymbolicLink(), 'the link is kept')
  // Recursive readdir lists through the link to a directory.
  t.same(await tree(root), ['iris', 'iris/2', 'iris/2/model.json', 'iris/current', 'iris/current/model.json', 'iris/default.json', 'iris/manifest.json'])
})

t.test('what cannot be written is UNREADABLE naming the path, and leaves no temporary file', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}', 'iris/2/model.json': '{}' })
  await symlink('a', join(root, 'iris', 'b'))
  await symlink('b', join(root, 'iris', 'a'))
  const store = storeAt(root)
  const condition = { ifNoneMatch: '*' } as const
  await t.rejects(store.write('iris/2', Buffer.from('x'), condition), {
    code: 'UNREADABLE',
    message: `${join(root, 'iris/2')} cannot be written: EISDIR`,
  })
  await t.rejects(store.write('iris/2', Buffer.from('x'), { ifMatch: '"1-2-3"' }), { code: 'PRECONDITION_FAILED', message: /is not there/ })
  await t.rejects(store.write('iris/manifest.json/1', Buffer.from('x'), condition), {
    code: 'UNREADABLE',
    message: /iris\/manifest\.json\/1 cannot be written/,
  })
  await t.rejects(store.write('iris/a', Buffer.from('x'), condition), { code: 'UNREADABLE', message: `${join(root, 'iris/a')} cannot be written: ELOOP` })
  await t.rejects(storeAt(join(root, 'missing')).write('iris/manifest.json', Buffer.from('x'), condition), { code: 'UNREADABLE' })
  t.same(await tree(root), ['iris', 'iris/2', 'iris/2/model.json', 'iris/a', 'iris/b', 'iris/manifest.json'])
})

t.test('a reader sees the old file or the new, whole, never a mix', async (t) => {
  const size = 4 << 20
  const versions = [Buffer.alloc(size, 'a'), Buffer.alloc(size, 'b')]
  const root = await tempTree(t, { 'iris/1/model.onnx': versions[0] as Buffer })
  const store = storeAt(root)
  let isWriting = true
  let reads = 0
  const reader = (async () => {
    while (isWriting) {
      const bytes = await store.read('iris/1/model.onnx')
      reads++
      if (!versions.some((version) => version.equals(bytes))) return `a read of ${bytes.length} bytes is neither version`
    }
    return undefined
  })()
  for (let i = 1; i <= 10; i++) {
    const { etag } = await store.stat('iris/1/model.onnx')
    await store.write('iris/1/model.onnx', versions[i % 2] as Buffer, { ifMatch: etag })
  }
  isWriting = false
  t.equal(await reader, undefined)
  t.ok(reads > 0, `${reads} reads`)
})

t.test('of 20 concurrent writes from one etag exactly one lands; the others are PRECONDITION_FAILED', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{"default_version":"1"}' })
  const store = storeAt(root)
  const { etag } = await store.stat('iris/manifest.json')
  const contents = Array.from({ length: 20 }, (_, i) => `{"default_version":"${i + 2}"}`)
  const results = await Promise.allSettled(contents.map((content) => store.write('iris/manifest.json', Buffer.from(content), { ifMatch: etag })))
  const codes = results.map(codeOf)
  t.equal(codes.filter((code) => code === 'written').length, 1, codes.join(' '))
  t.equal(codes.filter((code) => code === 'PRECONDITION_FAILED').length, 19)
  const winner = results.findIndex((result) => result.status === 'fulfilled')
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), contents[winner])
  t.same((results[winner] as PromiseFulfilledResult<StoreStat>).value, await store.stat('iris/manifest.json'))
  t.same(await tree(root), ['iris', 'iris/manifest.json'])
})

t.test('of writers in separate processes racing from one etag exactly one lands', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{"default_version":"1"}' })
  const signals = await tempTree(t, {})
  const { etag } = await storeAt(root).stat('iris/manifest.json')
  const contents = Array.from({ length: 6 }, (_, i) => `{"default_version":"${i + 2}"}`)
  // Plain node with its own type stripping, not tap's loader: a child starts in a tenth of the time.
  // No coverage from it (tap would add its own): its modules, stripped rather than transpiled as in
  // this process, would not merge, and what it runs is covered here.
  const env = { ...UNTAPPED_ENV, TAP_TYPE_STRIP_ONLY: '1', _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  const runs = contents.map((content, i) =>
    run(process.execPath, ['--import=./test/strip-types.js', WRITER, root, 'iris/manifest.json', content, etag, signals, `w${i}`], { cwd: ROOT, env }),
  )
  while ((await readdir(signals)).length < contents.length) await sleep(5)
  await writeFile(join(signals, 'go'), '')
  const outcomes = (await Promise.all(runs)).map(({ stdout }) => JSON.parse(stdout) as Record<string, unknown>)
  const written = outcomes.flatMap((outcome, i) => (outcome['event'] === 'written' ? [i] : []))
  t.equal(written.length, 1, JSON.stringify(outcomes))
  t.same(
    outcomes.filter((outcome) => outcome['event'] === 'refused').map((outcome) => outcome['code']),
    Array(5).fill('PRECONDITION_FAILED'),
  )
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), contents[written[0] as number])
  t.same(await tree(root), ['iris', 'iris/manifest.json'])
})

t.test('a writer whose lock runs out before it commits writes nothing, and leaves nothing', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  let taken = false
  // The clock's first reading dates the lock; the writer has been stalled 25 s by the next.
  const now = (): number => {
    const time = Date.now() + (taken ? 25_000 : 0)
    taken = true
    return time
  }
  const store = storeAt(root, { now })
  const { etag } = await store.stat('iris/manifest.json')
  await t.rejects(store.write('iris/manifest.json', Buffer.from('late'), { ifMatch: etag }), {
    code: 'LOCKED',
    message: /ran out before the write could commit/,
  })
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), '{}')
  t.same(await tree(root), ['iris', 'iris/manifest.json'])
})

t.test("two writers against a dead holder's stale lock: one breaks it, exactly one write lands", async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  const lock = join(root, 'iris', 'manifest.json.lock')
  await writeFile(lock, JSON.stringify({ host: 'gone', pid: 4242, token: 'dead', until: Date.now() - 61_000 }))
  const store = storeAt(root)
  const { etag } = await store.stat('iris/manifest.json')
  const results = await Promise.allSettled(['a', 'b'].map((content) => store.write('iris/manifest.json', Buffer.from(content), { ifMatch: etag })))
  t.same(results.map(codeOf).sort(), ['PRECONDITION_FAILED', 'written'])
  t.same(await tree(root), ['iris', 'iris/manifest.json'], 'the dead lock is gone, and nothing left aside')
})

t.test('two writers against a slow holder whose lock is not yet stale: neither breaks it, neither writes', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  const store = storeAt(root, { waitMs: 200 })
  const { etag } = await store.stat('iris/manifest.json')
  const holder = await acquireLock(join(root, 'iris', 'manifest.json'), { lifetimeMs: 100, commitMarginMs: 50, staleMarginMs: 10_000 })
  const results = await Promise.allSettled(['a', 'b'].map((content) => store.write('iris/manifest.json', Buffer.from(content), { ifMatch: etag })))
  t.same(results.map(codeOf), ['LOCKED', 'LOCKED'])
  t.equal(JSON.parse(await readFile(join(root, 'iris', 'manifest.json.lock'), 'utf8')).token, holder.token, 'still the holder’s')
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), '{}')
  await holder.release()
})

t.test('two writers against a slow holder whose lock goes stale: one breaks it, and of the three exactly one write lands', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}' })
  // The holder's lock lasts 100 ms and the writers break one 100 ms after; their own last 30 s.
  const store = storeAt(root, { staleMarginMs: 100, waitMs: 3000 })
  const { etag } = await store.stat('iris/manifest.json')
  const holder = await acquireLock(join(root, 'iris', 'manifest.json'), { lifetimeMs: 100, commitMarginMs: 50 })
  const results = await Promise.allSettled(['a', 'b'].map((content) => store.write('iris/manifest.json', Buffer.from(content), { ifMatch: etag })))
  t.same(results.map(codeOf).sort(), ['PRECONDITION_FAILED', 'written'])
  // The holder wakes: its lock is long gone, so it must not commit.
  await t.rejects(holder.check(), { code: 'LOCKED' })
  await holder.release()
  const winner = results.findIndex((result) => result.status === 'fulfilled')
  t.equal(await readFile(join(root, 'iris/manifest.json'), 'utf8'), ['a', 'b'][winner])
  t.same(await tree(root), ['iris', 'iris/manifest.json'])
})

t.test('lock and temporary files left behind are not taken for models', async (t) => {
  const root = await tempTree(t, { 'iris/manifest.json': '{}', 'index.json.lock': '{}', 'index.json.0123.tmp': '', 'iris/manifest.json.lock': '{}' })
  await mkdir(join(root, 'cars.lock'))
  t.same(await storeAt(root).list(), ['iris'])
})
