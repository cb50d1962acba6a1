// Open streams at shutdown, in a real process with prod's drain timeout: once the shutdown delay is
// over, an insights stream ends with its shutdown event, a real EventSource client reconnects at
// once (here to a second instance, as a balancer would send it), and the drain completes at once
// instead of at SVC_DRAIN_TIMEOUT_MS (lib/README.md §8).
import { EventSource } from 'eventsource'
import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { jsonLines, spawnTs } from '../fixtures/spawn.js'

/** Shorter than prod's 5 s to keep the test quick; it only moves the moment the listener closes. */
const SHUTDOWN_DELAY_MS = 1000
/** prod's SVC_DRAIN_TIMEOUT_MS (unset here): a stream held to it stops the process 10 s after the delay. */
const PROD_DRAIN_TIMEOUT_MS = 10_000
const STOPPED_WITHIN_MS = 2000
/** EventSource's own reconnection time is 3 s: a reconnection sooner than this followed the shutdown event. */
const RECONNECTED_WITHIN_MS = 1500

/** Polls until `check` holds, for at most `withinMs`. */
const until = async (check: () => boolean, withinMs: number): Promise<boolean> => {
  const deadline = performance.now() + withinMs
  while (!check() && performance.now() < deadline) await sleep(20)
  return check()
}

t.test(
  'SIGTERM with a stream open and a keep-alive client: stopped cleanly within 2 s of the delay, the stream client reconnected elsewhere at once',
  async (t) => {
    const child = spawnTs('test/fixtures/serve.ts', [], {
      SVC_ENVIRONMENT: 'prod',
      SVC_SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      SVC_DRAIN_TIMEOUT_MS: '',
      LOG_LEVEL: '',
      LOG_FORMAT: '',
    })
    t.teardown(() => void child.proc.kill('SIGKILL'))
    const port = Number((await child.waitForEvent('application_started', 60_000))['port'])
    const base = `http://127.0.0.1:${port}`
    const elsewhere = await startApp(t)

    // The stream's first connection goes to the instance that stops; every reconnection elsewhere.
    const connections: Array<{ target: string; at: number }> = []
    const source = new EventSource(`${base}/api/insights?count=20&interval=10`, {
      fetch: (url, init) => {
        const target = connections.length === 0 ? String(url) : String(url).replace(base, elsewhere.base)
        connections.push({ target, at: performance.now() })
        return fetch(target, init)
      },
    })
    t.teardown(() => source.close())
    const messages: Array<{ from: string; at: number }> = []
    source.onmessage = () => void messages.push({ from: connections.at(-1)?.target ?? '', at: performance.now() })
    const shutdowns: Array<{ data: unknown; at: number }> = []
    source.addEventListener('shutdown', (event) => void shutdowns.push({ data: JSON.parse(event.data), at: performance.now() }))
    t.ok(await until(() => messages.length === 1, 10_000), 'the stream is open on the first instance')

    // A keep-alive client: one request answered, its connection left open and idle.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    t.teardown(() => agent.destroy())
    const status = await new Promise<number | undefined>((resolve, reject) =>
      request({ host: '127.0.0.1', port, path: '/test/empty', agent }, (res) => res.resume().on('end', () => resolve(res.statusCode)))
        .on('error', reject)
        .end(),
    )
    t.equal(status, 204)
    t.equal(agent.freeSockets[`127.0.0.1:${port}:`]?.length, 1, 'its connection is kept alive')

    const signalAt = performance.now()
    const signalWallAt = Date.now()
    child.proc.kill('SIGTERM')
    const exit = await child.exited
    const lines = jsonLines(child.stdout())
    const stopped = lines.find((l) => l['event'] === 'application_stopped')
    const stoppedMs = Date.parse(String(stopped?.['timestamp'])) - signalWallAt - SHUTDOWN_DELAY_MS
    t.comment(`application_stopped ${stoppedMs} ms after the shutdown delay`)

    t.match(
      lines.find((l) => l['event'] === 'shutdown_started'),
      { shutdown_delay_ms: SHUTDOWN_DELAY_MS, drain_timeout_ms: PROD_DRAIN_TIMEOUT_MS },
      "prod's drain timeout",
    )
    t.same(exit, { code: 0, signal: null }, 'exit 0')
    t.match(stopped, { level: 'info' }, 'application_stopped at info: the drain completed')
    t.ok(stoppedMs < STOPPED_WITHIN_MS, `stopped ${stoppedMs} ms after the shutdown delay`)
    t.same(
      lines.filter((l) => l['level'] !== 'info' && l['level'] !== 'debug'),
      [],
      'no warning (or worse) logged',
    )
    t.equal(child.stderr(), '', 'nothing on stderr')

    const [shutdown] = shutdowns
    t.match(shutdown?.data, { reason: 'shutdown' }, 'the stream ended with the shutdown event')
    t.ok((shutdown?.at ?? 0) - signalAt >= SHUTDOWN_DELAY_MS - 50, 'sent once the shutdown delay was over, not before')
    t.equal(messages.filter((m) => m.from.startsWith(base)).length, 1, 'the stopping instance sent one insight; the shutdown event is no message')
    t.ok(await until(() => messages.some((m) => m.from.startsWith(elsewhere.base)), 5000), 'the stream resumed on the other instance')
    const reconnection = connections[1]
    t.match(reconnection?.target, elsewhere.base)
    const reconnectedMs = (reconnection?.at ?? Number.POSITIVE_INFINITY) - (shutdown?.at ?? 0)
    t.ok(reconnectedMs < RECONNECTED_WITHIN_MS, `reconnected ${reconnectedMs.toFixed(0)} ms after the shutdown event (EventSource waits 3 s by default)`)
  },
)
