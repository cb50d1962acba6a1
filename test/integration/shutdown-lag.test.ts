// SIGTERM while the event loop lags, in a real process (test/fixtures/serve.ts): shutdown stops the
// lag sampler, and the load balancer keeps routing here for SVC_SHUTDOWN_DELAY_MS, so a lag read
// just before the signal must not shed the requests of that delay (lib/README.md §8).
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { spawnTs } from '../fixtures/spawn.js'

const MAX_LAG_MS = 100
/** Far past the limit: the sample taken once the loop is free reads this much lag. */
const BLOCK_MS = 600
const SHUTDOWN_DELAY_MS = 2000
/** Requests are sent for this long after the signal: well inside the delay, whatever the machine's speed. */
const ASK_FOR_MS = 1000

t.test('SIGTERM while the loop lags past SVC_MAX_EVENT_LOOP_DELAY_MS: every request of the shutdown delay is answered, none shed', async (t) => {
  const child = spawnTs('test/fixtures/serve.ts', [], {
    SVC_ENVIRONMENT: 'dev',
    SVC_MAX_EVENT_LOOP_DELAY_MS: String(MAX_LAG_MS),
    SVC_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    LOG_FORMAT: 'json',
  })
  t.teardown(() => void child.proc.kill('SIGKILL'))
  const { port } = await child.waitForEvent('application_started', 60_000)
  const base = `http://127.0.0.1:${String(port)}`

  // The process signals itself, then holds its loop: the SIGTERM is handled only once the loop is
  // free, after the lag sample that measured the block (timers run before I/O in a turn of the loop).
  t.equal((await fetch(`${base}/test/block?ms=${BLOCK_MS}&signal=SIGTERM`)).status, 204)
  await child.waitForEvent('shutdown_started')
  const signalledAt = performance.now()
  t.equal((await fetch(`${base}/ready`)).status, 503, 'draining: readiness fails, so the balancer stops routing')

  const statuses: number[] = []
  while (performance.now() - signalledAt < ASK_FOR_MS) {
    statuses.push((await fetch(`${base}/api/v1/models`)).status)
    await sleep(50)
  }
  t.ok(statuses.length >= 3, `${statuses.length} requests sent during the delay`)
  t.same(
    statuses.filter((s) => s !== 200),
    [],
    'each one answered 200, none 503 OVERLOADED',
  )
  t.same(await child.exited, { code: 0, signal: null }, 'exit 0 after the delay')
})
