// Faults: endpoints that throw synchronously, asynchronously (at once, or after an await), a value
// that is no Error, and after their stream started. Each failure stays inside its own request: a
// 500 problem (or the events sent before the break), logged and counted, while the same connection
// and every other request carry on, and the next request finds the service as it was.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { startApp, type Running } from '../fixtures/app.js'
import { faultyRoutes } from '../fixtures/faulty-routes.js'
import { sample } from '../fixtures/metrics-text.js'
import { LEAK, RawConnection } from '../fixtures/raw-http.js'
import { testRoutes } from '../fixtures/routes.js'
import { spawnTs } from '../fixtures/spawn.js'

const start = (t: Test): Promise<Running> => startApp(t, {}, [...faultyRoutes(), ...testRoutes(200)])

const scrape = async (running: Running): Promise<string> => (await running.app.metrics.render(undefined)).text
const exceptions = (text: string, type: string): number | undefined => sample(text, 'http_exceptions_total', { exception_type: type, environment: 'dev' })
const inFlight = (text: string): number | undefined => sample(text, 'http_requests_in_flight', { environment: 'dev' })

/** Waits until `count` request_completed lines are logged (a stream completes after its reply). */
const completedLines = async (running: Running, count: number): Promise<void> => {
  for (let i = 0; i < 200 && running.lines().filter((l) => l.event === 'request_completed').length < count; i++) await sleep(10)
}

/** Reads a body to its end, or to the point where it broke off; never throws. */
const readAll = async (res: Response): Promise<string> => {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    for (let chunk = await reader.read(); chunk.done !== true; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true })
  } catch {
    // A body cut short: what arrived before is what counts here.
  }
  return text
}

const FAILING = [
  { path: '/test/throw', how: 'synchronously', type: 'BoomError' },
  { path: '/test/reject', how: 'asynchronously, at once', type: 'TypeError' },
  { path: '/test/throw-later', how: 'asynchronously, after an await', type: 'RangeError' },
  { path: '/test/throw-value', how: 'a value that is no Error', type: 'string' },
] as const

t.test('endpoints throwing synchronously or asynchronously answer 500, and the same connection serves the next request', async (t) => {
  const running = await start(t)
  const conn = await RawConnection.open(Number(new URL(running.base).port))
  t.teardown(() => conn.destroy())
  for (const { path, how } of FAILING) {
    conn.send(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`)
    const failed = await conn.next()
    t.equal(failed?.status, 500, `${how}: 500`)
    t.equal(failed?.headers['content-type'], 'application/problem+json')
    const body = JSON.parse(String(failed?.body)) as Record<string, unknown>
    t.match(body, { type: 'urn:svc:problem:internal-error', status: 500, instance: path, request_id: failed?.headers['x-request-id'] })
    t.notMatch(`${failed?.head}${String(failed?.body)}`, LEAK, `${how}: nothing internal in the answer`)
    t.notMatch(String(failed?.body), /secret|passwd|failure|wait|string/, `${how}: not the message either`)
    conn.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    const next = await conn.next()
    t.equal(next?.status, 200, `${how}: the next request on the same connection is served`)
  }
  t.notOk(conn.isClosed, 'the connection stayed open throughout')

  await completedLines(running, 2 * FAILING.length)
  const text = await scrape(running)
  for (const { path, type, how } of FAILING) {
    t.equal(exceptions(text, type), 1, `${how}: counted as ${type}`)
    t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: path, status: '500', environment: 'dev' }), 1)
    t.match(
      running.lines().find((l) => l.event === 'request_completed' && l['path'] === path),
      { level: 'error', status: 500, error: { type } },
      `${how}: logged as an error, with what was thrown`,
    )
  }
  t.equal(inFlight(text), 0)
  t.equal((await fetch(`${running.base}/ready`)).status, 200, 'and the service is still ready')
})

t.test('failures do not disturb the requests and streams in flight beside them', async (t) => {
  const running = await start(t)
  const slow = Array.from({ length: 5 }, () => fetch(`${running.base}/test/slow`).then(async (res) => [res.status, await res.json()] as const))
  const stream = fetch(`${running.base}/test/stream?count=5&interval=30`).then(readAll)
  const failures = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      fetch(`${running.base}${FAILING[i % FAILING.length]?.path}`).then(async (res) => {
        await res.arrayBuffer()
        return res.status
      }),
    ),
  )
  t.same(failures, Array(40).fill(500))
  t.same(await Promise.all(slow), Array(5).fill([200, { slow: true }]), 'every slow request answered in full')
  t.equal(await stream, [0, 1, 2, 3, 4].map((n) => `data: {"n":${n}}\n\n`).join(''), 'the stream beside them ran to its end')
  await completedLines(running, 46)
  t.equal(inFlight(await scrape(running)), 0)
})

for (const after of [3, 0]) {
  t.test(
    `a stream that throws ${after === 0 ? 'at its first event' : `after ${after} events`}: the client keeps what was sent, the failure is logged and counted, the next stream runs whole`,
    async (t) => {
      const running = await start(t)
      const res = await fetch(`${running.base}/test/stream-breaks?after=${after}`)
      t.equal(res.status, 200, 'the stream had started: its head was sent')
      t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
      const sent = Array.from({ length: after }, (_, n) => `data: {"n":${n}}\n\n`).join('')
      t.equal(await readAll(res), sent, 'every event sent before the break arrived, whole')

      await completedLines(running, 1)
      t.match(
        running.lines().find((l) => l.event === 'stream_failed'),
        { level: 'error', path: '/test/stream-breaks', error: { type: 'StreamBrokeError' } },
      )
      t.match(
        running.lines().find((l) => l.event === 'request_completed'),
        { level: 'error', status: 200, error: { type: 'StreamBrokeError', message: `broke after ${after} events` } },
      )
      const text = await scrape(running)
      t.equal(exceptions(text, 'StreamBrokeError'), 1)
      t.equal(inFlight(text), 0, 'the broken stream is no longer in flight')

      t.equal(
        await readAll(await fetch(`${running.base}/test/stream?count=3`)),
        'data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n',
        'the next stream runs whole',
      )
      t.equal((await fetch(`${running.base}/`)).status, 200)
    },
  )
}

t.test('a stream whose cleanup throws once its client left does not end the process', async (t) => {
  const child = spawnTs('test/fixtures/serve.ts', [], { FAULTY_ROUTES: 'true', SLOW_MS: '100' })
  t.teardown(() => void (child.proc.exitCode === null && child.proc.kill('SIGKILL')))
  const { port } = await child.waitForEvent('application_started')
  const base = `http://127.0.0.1:${String(port)}`
  const controller = new AbortController()
  const res = await fetch(`${base}/test/stream-cleanup-fails`, { signal: controller.signal })
  await res.body?.getReader().read()
  controller.abort()
  await sleep(300)
  t.equal(child.proc.exitCode, null, `the process is still running (stderr: ${child.stderr().slice(0, 200)})`)
  t.equal(
    await fetch(`${base}/`).then(
      (r) => r.status,
      () => 'refused',
    ),
    200,
    'and serving',
  )
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null }, 'and stops cleanly when told to')
})
