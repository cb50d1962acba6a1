// Two svc processes on one payload log file, in real processes (test/fixtures/serve.ts): the second
// refuses to start, exit 2, naming the path and the pid of the first; once the first has stopped, the
// path is free again.
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { spawnTs } from '../fixtures/spawn.js'

t.test("a second process on the same SVC_PAYLOAD_LOG exits 2 naming the path and the first one's pid; the lock goes with the first", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-lock-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'payload.jsonl')
  const env = { SVC_ENVIRONMENT: 'dev', SVC_SHUTDOWN_DELAY_MS: '0', SVC_PAYLOAD_LOG: path, LOG_FORMAT: 'json' }
  const first = spawnTs('test/fixtures/serve.ts', [], env)
  t.teardown(() => void first.proc.kill('SIGKILL'))
  await first.waitForEvent('application_started', 60_000)
  const second = spawnTs('test/fixtures/serve.ts', [], env)
  t.teardown(() => void second.proc.kill('SIGKILL'))
  t.same(await second.exited, { code: 2, signal: null }, 'refused, as a bad variable is')
  t.match(second.stderr(), `SVC_PAYLOAD_LOG=${path} is in use by process ${String(first.proc.pid)}`)
  t.ok((await stat(`${path}.lock`)).isFile(), "the first one's lock is still there")
  first.proc.kill('SIGTERM')
  t.same(await first.exited, { code: 0, signal: null })
  await t.rejects(stat(`${path}.lock`), { code: 'ENOENT' }, 'removed at exit')
})
