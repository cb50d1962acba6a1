// One process per payload log file (lib/serving/payload/lock.ts): `<path>.lock` taken at start,
// refused while a live process holds it, taken over from one that is gone, released only by its own.
import { spawn, spawnSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { ConfigError } from '../../../lib/config/config.js'
import { lockPayloadLog } from '../../../lib/serving/payload/lock.js'

const tempDir = async (t: Test): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-lock-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A pid no process has now: a child's, once it has exited. */
const deadPid = (): number => {
  const { pid } = spawnSync('true')
  if (pid === undefined) throw new Error('no pid')
  return pid
}

t.test('the first process takes <path>.lock with its pid; a second, alive, is refused naming the path and the pid', async (t) => {
  const path = join(await tempDir(t), 'payload.jsonl')
  const first = lockPayloadLog({ kind: 'file', path })
  t.equal(first?.path, `${path}.lock`)
  t.equal(await readFile(`${path}.lock`, 'utf8'), `${process.pid}\n`)
  // Another pid, alive: a child kept running while the check runs.
  const other = spawn('sleep', ['30'])
  t.teardown(() => void other.kill())
  const otherPid = other.pid as number
  const error = t.throws(() => lockPayloadLog({ kind: 'file', path }, otherPid)) as unknown
  t.ok(error instanceof ConfigError, 'refused as a bad variable is: exit 2')
  t.match((error as ConfigError).problems[0], `SVC_PAYLOAD_LOG=${path} is in use by process ${process.pid}`)
  t.match((error as ConfigError).problems[0], `${path}.lock`)
  first?.release()
  await t.rejects(stat(`${path}.lock`), { code: 'ENOENT' }, 'released')
  const second = lockPayloadLog({ kind: 'file', path }, otherPid)
  t.equal(await readFile(`${path}.lock`, 'utf8'), `${otherPid}\n`, 'taken once free')
  first?.release()
  t.equal(await readFile(`${path}.lock`, 'utf8'), `${otherPid}\n`, 'a release removes only its own lock')
  second?.release()
  second?.release()
  await t.rejects(stat(`${path}.lock`), { code: 'ENOENT' })
})

t.test('a lock left by a process that is gone, or naming no process, is taken over', async (t) => {
  const path = join(await tempDir(t), 'payload.jsonl')
  await writeFile(`${path}.lock`, `${deadPid()}\n`)
  t.ok(lockPayloadLog({ kind: 'file', path }))
  t.equal(await readFile(`${path}.lock`, 'utf8'), `${process.pid}\n`)
  await writeFile(`${path}.lock`, 'garbage\n')
  t.ok(lockPayloadLog({ kind: 'file', path }, 7))
  t.equal(await readFile(`${path}.lock`, 'utf8'), '7\n')
  t.ok(lockPayloadLog({ kind: 'file', path }, 7), "its own pid (a restarted container's pid 1) is its own")
})

t.test('a lock held by a process of another user (EPERM) is refused too', async (t) => {
  const path = join(await tempDir(t), 'payload.jsonl')
  // pid 1 is alive and, unless this runs as root, another user's: kill(1, 0) is EPERM, or succeeds as root.
  await writeFile(`${path}.lock`, '1\n')
  t.throws(() => lockPayloadLog({ kind: 'file', path }), ConfigError)
})

t.test('a lock that cannot be taken over is refused', async (t) => {
  const path = join(await tempDir(t), 'payload.jsonl')
  // A directory in the lock's place: not a pid, not removable as a file, not created over.
  await mkdir(`${path}.lock`)
  t.throws(() => lockPayloadLog({ kind: 'file', path }), { message: /has a lock that cannot be taken over/ })
})

t.test('a URL, a device, or a directory that does not exist takes no lock', async (t) => {
  const dir = await tempDir(t)
  t.equal(lockPayloadLog(undefined), undefined)
  t.equal(lockPayloadLog({ kind: 'http', url: new URL('http://127.0.0.1:9/') }), undefined)
  t.equal(lockPayloadLog({ kind: 'file', path: '/dev/null' }), undefined)
  t.equal(lockPayloadLog({ kind: 'file', path: join(dir, 'missing', 'payload.jsonl') }), undefined)
})
