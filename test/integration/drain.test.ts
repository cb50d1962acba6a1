// The drain of a real process (lib/README.md §8), with and without an admin listener: keep-alive
// clients keep sending on both listeners throughout, slow requests and an event stream are in
// flight when SIGTERM arrives, and the shutdown delay is 0, so the listeners close at once. Every
// request the service read (it logged `request_started` under the id the client sent) gets its
// whole answer; every answer written during the drain closes its connection; and the process
// exits long before SVC_DRAIN_TIMEOUT_MS, because no connection is left open once its last reply
// is out, a stream's included.
import { randomUUID } from 'node:crypto'
import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { jsonLines, spawnTs } from '../fixtures/spawn.js'

const SLOW_MS = 1000
const DRAIN_TIMEOUT_MS = 8000
/** Stopped within this of SIGTERM: the slowest work in flight (1 s) plus slack, far below the drain timeout. */
const EXIT_WITHIN_MS = 3000
/** An answer received this long after SIGTERM was sent was written during the drain. */
const SIGNAL_SLACK_MS = 100

type Outcome = Readonly<{
  id: string
  path: string
  /** performance.now() when the request was sent and when its story ended. */
  sentAt: number
  doneAt: number
  /** 0 without a whole answer. */
  status: number
  isClosing: boolean
  isReused: boolean
  error: string | undefined
}>

/** One keep-alive pool; every request carries an X-Request-ID of its own, which the service keeps (SVC_TRUST_REQUEST_ID). */
const createPool = (port: number, sockets: number) => {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets, scheduling: 'fifo' })
  const outcomes: Outcome[] = []
  const send = (path: string): Promise<Outcome> =>
    new Promise((resolve) => {
      const id = randomUUID()
      const sentAt = performance.now()
      let isSettled = false
      const settle = (status: number, connection: string | undefined, error: string | undefined): void => {
        if (isSettled) return
        isSettled = true
        const outcome = { id, path, sentAt, doneAt: performance.now(), status, isClosing: connection === 'close', isReused: req.reusedSocket, error }
        outcomes.push(outcome)
        resolve(outcome)
      }
      const req = request({ host: '127.0.0.1', port, path, agent, headers: { 'x-request-id': id } }, (res) => {
        // The whole body must arrive: an answer cut short is a failure.
        res.on('end', () => settle(res.statusCode ?? 0, res.headers.connection, undefined))
        res.on('error', (error: NodeJS.ErrnoException) => settle(0, undefined, error.code ?? error.message))
        res.resume()
      })
      req.setTimeout(DRAIN_TIMEOUT_MS + 5000, () => req.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' })))
      req.on('error', (error: NodeJS.ErrnoException) => settle(0, undefined, error.code ?? error.message))
      req.end()
    })
  return { send, outcomes, close: () => agent.destroy() }
}

type Pool = ReturnType<typeof createPool>

/** `workers` loops sending `paths` in turn until `isDone()`; a refused connection pauses the loop briefly. */
const drive = (pool: Pool, workers: number, paths: readonly string[], isDone: () => boolean): Promise<void> =>
  Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = w; !isDone(); i++) {
        const outcome = await pool.send(paths[i % paths.length] as string)
        if (outcome.error !== undefined) await sleep(10)
      }
    }),
  ).then(() => undefined)

const STREAM = '/api/insights?count=2&interval=1'

const describe = (outcomes: readonly Outcome[]): string[] =>
  outcomes.slice(0, 5).map((o) => `${o.path}: ${o.status} ${o.error ?? ''} (reused: ${o.isReused}, ${(o.doneAt - o.sentAt).toFixed(0)} ms)`)

for (const hasAdmin of [false, true]) {
  t.test(
    `SIGTERM ${hasAdmin ? 'with' : 'without'} an admin listener: every request read is answered, and the process stops within ${EXIT_WITHIN_MS} ms`,
    async (t) => {
      const child = spawnTs('test/fixtures/serve.ts', [], {
        SLOW_MS: String(SLOW_MS),
        SVC_SHUTDOWN_DELAY_MS: '0',
        SVC_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
        SVC_TRUST_REQUEST_ID: 'true',
        SVC_ENVIRONMENT: 'dev',
        // The probes log their request lines at debug.
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
        ...(hasAdmin ? { SVC_ADMIN_PORT: '0' } : {}),
      })
      t.teardown(() => void child.proc.kill('SIGKILL'))
      const started = await child.waitForEvent('application_started', 60_000)
      let hasExited = false
      const exited = child.exited.then((exit) => {
        hasExited = true
        return { ...exit, at: performance.now() }
      })
      const isDone = (): boolean => hasExited

      const pub = createPool(Number(started['port']), 8)
      const admin = hasAdmin ? createPool(Number(started['admin_port']), 3) : pub
      const stream = createPool(Number(started['port']), 1)
      t.teardown(() => {
        pub.close()
        admin.close()
        stream.close()
      })
      const load = Promise.all([
        drive(pub, 5, ['/', '/api/v1/models', '/test/empty', '/test/query?q=1'], isDone),
        drive(pub, 3, ['/test/slow'], isDone),
        drive(admin, 3, ['/ready', '/health', '/metrics'], isDone),
      ])
      // The stream's connection is a keep-alive one that has carried a request before.
      t.equal((await stream.send('/test/empty')).status, 204)
      await sleep(300)
      const streamed = stream.send(STREAM)
      await sleep(200)

      const signalAt = performance.now()
      const signalWallAt = Date.now()
      child.proc.kill('SIGTERM')
      const exit = await exited
      await Promise.all([load, streamed])
      const lines = jsonLines(child.stdout())
      const stopped = lines.at(-1)
      // The process exits as it logs application_stopped; under tap the exit then waits for the
      // coverage dump, which is no part of the drain.
      const stoppedMs = Date.parse(String(stopped?.['timestamp'])) - signalWallAt
      const listeners = hasAdmin ? 'with' : 'without'
      t.comment(`${listeners} an admin listener: application_stopped ${stoppedMs} ms after SIGTERM, exit after ${(exit.at - signalAt).toFixed(0)} ms`)

      t.same({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, 'exit 0')
      t.match(stopped, { event: 'application_stopped', level: 'info' }, 'the drain completed: no connection was cut at the timeout')
      t.ok(stoppedMs < EXIT_WITHIN_MS, `stopped ${stoppedMs} ms after SIGTERM, well before SVC_DRAIN_TIMEOUT_MS (${DRAIN_TIMEOUT_MS} ms)`)

      const all = [...pub.outcomes, ...(hasAdmin ? admin.outcomes : []), ...stream.outcomes]
      const byId = new Map(all.map((o) => [o.id, o]))
      const read = new Set(lines.filter((l) => l['event'] === 'request_started').map((l) => String(l['request_id'])))
      const unanswered = [...read].map((id) => byId.get(id)).filter((o) => o === undefined || o.status === 0)
      t.same(describe(unanswered as Outcome[]), [], `each of the ${read.size} requests read got its whole answer`)
      t.same(
        all.filter((o) => o.error !== undefined && o.error !== 'ECONNREFUSED' && read.has(o.id)),
        [],
        'a request that failed was never read',
      )
      const work = [...pub.outcomes, ...stream.outcomes].filter((o) => o.status !== 0)
      t.same(describe(work.filter((o) => o.status !== 200 && o.status !== 204)), [], 'every answer of the public load is a success')

      const slowDuringDrain = pub.outcomes.filter((o) => o.path === '/test/slow' && o.status === 200 && o.sentAt < signalAt)
      t.ok(slowDuringDrain.length >= 3, `${slowDuringDrain.length} slow requests were in flight at SIGTERM and answered`)
      const [streamOutcome] = stream.outcomes.filter((o) => o.path === STREAM)
      t.match(streamOutcome, { status: 200, isReused: true }, 'the stream, open on a kept-alive connection at SIGTERM, was answered whole')
      const drained = all.filter((o) => o.status !== 0 && o.doneAt > signalAt + SIGNAL_SLACK_MS && o.path !== STREAM)
      t.ok(drained.length > 0, `${drained.length} answers were written during the drain`)
      t.same(describe(drained.filter((o) => !o.isClosing)), [], 'every answer written during the drain carries Connection: close')
    },
  )
}
