// The directory store's lock protocol (lib/models/store/directory-lock.ts): a holder commits only
// well inside its `until`, another writer breaks a lock only well after it, by renaming it aside and
// putting back what was not the lock it judged stale.
import { mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises'
import { execFileSync } from 'node:child_process'
import { renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { acquireLock, type HeldLock } from '../../../lib/models/store/directory-lock.js'
import { tempTree } from '../../fixtures/model-store.js'

const lockOf = (token: string, until: number): string => JSON.stringify({ host: 'elsewhere', pid: 4242, token, until })

/** A directory holding `manifest.json`, and the file's path. */
const target = async (t: Test): Promise<{ dir: string; file: string }> => {
  const dir = await tempTree(t, { 'manifest.json': '{}' })
  return { dir, file: join(dir, 'manifest.json') }
}

t.test('a lock holds the host, pid, a random token and its until, and its holder commits while well inside it', async (t) => {
  const { dir, file } = await target(t)
  let now = 1_700_000_000_000
  const held = await acquireLock(file, { now: () => now })
  t.match(held.token, /^[0-9a-f]{32}$/)
  t.same(JSON.parse(await readFile(`${file}.lock`, 'utf8')), { host: hostname(), pid: process.pid, token: held.token, until: now + 30_000 })
  now += 20_000
  await held.check()
  now += 1
  await t.rejects(held.check(), {
    code: 'LOCKED',
    message: `${file} was not written: its lock ${file}.lock ran out before the write could commit (it must have 10 s left); try again`,
  })
  await held.release()
  t.same(await readdir(dir), ['manifest.json'])
})

t.test("a holder whose lock was replaced does not commit, and its release leaves the other's lock", async (t) => {
  const { file } = await target(t)
  const held = await acquireLock(file)
  const other = lockOf('other', Date.now() + 30_000)
  await writeFile(`${file}.lock`, other)
  await t.rejects(held.check(), { code: 'LOCKED', message: `${file} was not written: its lock ${file}.lock was broken by another writer; try again` })
  await held.release()
  t.equal(await readFile(`${file}.lock`, 'utf8'), other)
})

t.test('a fresh lock is waited for: taken once released, refused LOCKED if it is not within waitMs', async (t) => {
  const { file } = await target(t)
  const first = await acquireLock(file)
  const started = performance.now()
  await t.rejects(acquireLock(file, { waitMs: 100 }), {
    code: 'LOCKED',
    message: `${file} is being written by another writer, whose lock ${file}.lock is fresh; try again (a lock left behind is broken 30 s after its until)`,
  })
  t.ok(performance.now() - started >= 100, 'waited')
  await first.check()
  const second = acquireLock(file, { waitMs: 2000 })
  setTimeout(() => void first.release(), 50)
  await (await second).check()
})

t.test('a lock past its until but not yet stale is broken by neither of two writers', async (t) => {
  const { file } = await target(t)
  const slow = lockOf('slow', Date.now() - 1000)
  await writeFile(`${file}.lock`, slow)
  const options = { waitMs: 100 }
  const results = await Promise.allSettled([acquireLock(file, options), acquireLock(file, options)])
  t.same(
    results.map((result) => result.status === 'rejected' && (result.reason as { code: string }).code),
    ['LOCKED', 'LOCKED'],
  )
  t.equal(await readFile(`${file}.lock`, 'utf8'), slow, 'the slow holder keeps its lock')
})

t.test("a dead holder's stale lock is broken by one of two writers, and the other waits for the new one", async (t) => {
  const { dir, file } = await target(t)
  await writeFile(`${file}.lock`, lockOf('dead', Date.now() - 30_001 - 30_000))
  const both = [acquireLock(file), acquireLock(file)]
  const winner = await Promise.race(both.map((lock, i) => lock.then(() => i)))
  const first = await (both[winner] as Promise<HeldLock>)
  // Had the other broken this fresh lock, its holder would find it gone.
  await first.check()
  t.same(await readdir(dir), ['manifest.json', 'manifest.json.lock'], 'nothing left aside')
  await first.release()
  const second = await (both[1 - winner] as Promise<HeldLock>)
  await second.check()
  t.not(second.token, first.token)
  await second.release()
})

t.test('a lock replaced between its judgment and its rename aside is put back, not removed', async (t) => {
  const { dir, file } = await target(t)
  await writeFile(`${file}.lock`, lockOf('dead', Date.now() - 120_000))
  const fresh = lockOf('fresh', Date.now() + 30_000)
  let looks = 0
  // The breaker's first look at the clock is its judgment of the dead lock: meanwhile another
  // writer breaks it and takes a fresh one.
  const now = (): number => {
    if (looks++ === 0) {
      unlinkSync(`${file}.lock`)
      writeFileSync(`${file}.lock`, fresh)
    }
    return Date.now()
  }
  await t.rejects(acquireLock(file, { now, waitMs: 100 }), { code: 'LOCKED' })
  t.equal(await readFile(`${file}.lock`, 'utf8'), fresh)
  t.same(await readdir(dir), ['manifest.json', 'manifest.json.lock'])
})

t.test('a lock taken aside while a third writer takes the free name is dropped, not put back over the third', async (t) => {
  const { dir, file } = await target(t)
  await writeFile(`${file}.lock`, lockOf('dead', Date.now() - 120_000))
  // The fresh lock another writer takes at the judgment is a FIFO, so the breaker's reading of it
  // once aside waits for this test: meanwhile a third writer takes the free name.
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  let looks = 0
  const now = (): number => {
    if (looks++ === 0) {
      unlinkSync(`${file}.lock`)
      renameSync(fifo, `${file}.lock`)
    }
    return Date.now()
  }
  const breaking = acquireLock(file, { now, waitMs: 100 })
  let aside: string | undefined
  while ((aside = (await readdir(dir)).find((name) => name.endsWith('.broken'))) === undefined) await sleep(1)
  const third = lockOf('third', Date.now() + 30_000)
  await writeFile(`${file}.lock`, third, { flag: 'wx' })
  await writeFile(join(dir, aside), lockOf('fresh', Date.now() + 30_000))
  await t.rejects(breaking, { code: 'LOCKED' })
  t.equal(await readFile(`${file}.lock`, 'utf8'), third)
  t.same(await readdir(dir), ['manifest.json', 'manifest.json.lock'])
})

t.test('a lock released between its judgment and its rename aside: the breaker takes a new one', async (t) => {
  const { file } = await target(t)
  await writeFile(`${file}.lock`, lockOf('dead', Date.now() - 120_000))
  let looks = 0
  const now = (): number => {
    if (looks++ === 0) unlinkSync(`${file}.lock`)
    return Date.now()
  }
  const held = await acquireLock(file, { now })
  await held.check()
})

t.test('a lock that is empty or not a lock is judged by its mtime', async (t) => {
  const { file } = await target(t)
  const old = (Date.now() - 61_000) / 1000
  for (const content of ['', '{"token":', '[]', '{"token":"t","until":"soon"}']) {
    await writeFile(`${file}.lock`, content)
    await utimes(`${file}.lock`, old, old)
    const held = await acquireLock(file)
    await held.check()
    await held.release()
    // Its writer may still be writing it: within its lifetime from its mtime, it is fresh.
    await writeFile(`${file}.lock`, content)
    await t.rejects(acquireLock(file, { waitMs: 30 }), { code: 'LOCKED' }, JSON.stringify(content))
  }
})

t.test("a link pointing nowhere in the lock's place is cleared, and its target left alone", async (t) => {
  const { dir, file } = await target(t)
  await symlink(join(dir, 'nowhere'), `${file}.lock`)
  const held = await acquireLock(file)
  t.equal(JSON.parse(await readFile(`${file}.lock`, 'utf8')).token, held.token)
  await held.release()
  t.same(await readdir(dir), ['manifest.json'])
})

t.test('a lock that cannot be read, or created, rejects with the file system error', async (t) => {
  const { dir, file } = await target(t)
  await symlink(`${file}.lock`, `${file}.lock`)
  await t.rejects(acquireLock(file), { code: 'ELOOP' })
  await t.rejects(acquireLock(join(dir, 'missing', 'manifest.json')), { code: 'ENOENT' })
})

t.test('release never rejects: a lock it cannot read is left to go stale', async (t) => {
  const { file } = await target(t)
  const held = await acquireLock(file)
  rmSync(`${file}.lock`)
  await mkdir(`${file}.lock`)
  await held.release()
  t.ok((await readdir(`${file}.lock`)).length === 0, 'still there')
})
