// SIGTERM with the payload log on a FIFO whose reader opened it and never reads, in a real process
// (test/fixtures/serve.ts): the pipe fills, the write stays stuck, and still the process logs
// `application_stopped` and exits 0 within its shutdown budget (lib/README.md §8), where a write
// blocked in the thread pool would hold its exit for ever.
import { execFileSync } from 'node:child_process'
import { constants } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { PAYLOAD_FLUSH_TIMEOUT_MS } from '../../lib/process/shutdown.js'
import { spawnTs } from '../fixtures/spawn.js'

const ROWS = Array.from({ length: 1000 }, (_, i) => ({ sepal_length: 5 + (i % 10) / 10, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }))

t.test('SIGTERM with the payload log stuck on a FIFO nobody reads: application_stopped, exit 0 within the shutdown budget', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-fifo-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const fifo = join(dir, 'payload.fifo')
  execFileSync('mkfifo', [fifo])
  // The reader: opened (non-blocking, so it waits for no writer) and never read.
  const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(() => reader.close())
  const child = spawnTs('test/fixtures/serve.ts', [], {
    SVC_ENVIRONMENT: 'dev',
    SVC_SHUTDOWN_DELAY_MS: '0',
    SVC_PAYLOAD_LOG: fifo,
    LOG_FORMAT: 'json',
  })
  t.teardown(() => void child.proc.kill('SIGKILL'))
  const { port } = await child.waitForEvent('application_started', 60_000)
  const body = JSON.stringify({ model: 'iris', instances: ROWS })
  // A few events of 1 000 rows each, well past the pipe's 64 KiB buffer.
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`http://127.0.0.1:${String(port)}/api/v1/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    t.equal(res.status, 200)
    await res.arrayBuffer()
  }
  // The batch is written after its linger (a tenth of a second), and then stays stuck.
  await new Promise((resolve) => setTimeout(resolve, 500))
  const signalled = performance.now()
  child.proc.kill('SIGTERM')
  const exited = await Promise.race([child.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), PAYLOAD_FLUSH_TIMEOUT_MS + 5000))])
  const tookMs = performance.now() - signalled
  t.same(exited, { code: 0, signal: null }, `exited in ${Math.round(tookMs)} ms`)
  t.ok(tookMs < PAYLOAD_FLUSH_TIMEOUT_MS + 3000, 'within the payload log budget, plus start and stop')
  t.ok(await child.waitForEvent('application_stopped', 1), 'application_stopped logged')
})
