// GET /api/insights on a real socket: a real EventSource client, raw socket reads with arrival
// times, parameters, the stream limit, a client that leaves, and a graceful shutdown mid-stream.
import { EventSource } from 'eventsource'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { type Env, readConfig } from '../../lib/config/config.js'
import { createLifecycle } from '../../lib/core/lifecycle.js'
import { createStreamLimit, getInsights, type StreamLimit } from '../../lib/endpoints/insights.js'
import { createFigures } from '../../lib/insights/figures.js'
import { createRouter } from '../../lib/core/router.js'
import { createServer as createSvcServer, type SvcServer } from '../../lib/server/server.js'
import { createMetricsRegistry } from '../../lib/telemetry/metrics/registry.js'
import { captureLogger, startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { startReceiver } from '../fixtures/otlp-receiver.js'
import { eventData, openSse } from '../fixtures/sse-socket.js'

const portOf = (base: string): number => Number(new URL(base).port)
const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
const METRICS = ['http_requests_in_flight', 'http_request_rate', 'http_request_duration_p95', 'event_loop_lag_p99', 'heap_used']

/** Polls until `check` holds, for at most `withinMs`. */
const until = async (check: () => boolean, withinMs = 1000): Promise<boolean> => {
  const deadline = performance.now() + withinMs
  while (!check() && performance.now() < deadline) await sleep(5)
  return check()
}

t.test('a real EventSource client receives count events, each a JSON object', async (t) => {
  const { base } = await startApp(t)
  const source = new EventSource(`${base}/api/insights?count=4&interval=0.05`)
  t.teardown(() => source.close())
  const received: Array<Record<string, unknown>> = []
  await new Promise<void>((resolve, reject) => {
    source.onmessage = (event) => {
      received.push(JSON.parse(event.data as string) as Record<string, unknown>)
      // The server ends the stream after the last event; EventSource would reconnect, so stop it.
      if (received.length === 4) {
        source.close()
        resolve()
      }
    }
    source.onerror = () => reject(new Error('stream failed before 4 events'))
  })
  t.same(
    received.map((e) => e['seq']),
    [1, 2, 3, 4],
  )
  t.same(
    received.map((e) => e['metric']),
    METRICS.slice(0, 4),
  )
  for (const event of received) {
    t.match(event, { count: 4, timestamp: /Z$/, unit: String, request_id: /^[0-9a-f-]{36}$/ })
    t.ok(event['value'] === null || typeof event['value'] === 'number')
  }
  t.equal(new Set(received.map((e) => e['request_id'])).size, 1, 'one request')
})

t.test('on the wire: SSE headers, each event flushed on its own, spaced by the interval, then the end', async (t) => {
  const { base, lines } = await startApp(t)
  const sse = openSse(portOf(base), '/api/insights?count=4&interval=0.2')
  const { status, headers } = await sse.head
  t.equal(status, 200)
  t.same(
    [headers['content-type'], headers['cache-control'], headers['x-accel-buffering'], headers['transfer-encoding']],
    ['text/event-stream; charset=utf-8', 'no-cache', 'no', 'chunked'],
  )
  t.match(headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.same(await sse.ended, { isComplete: true }, 'the server ended the body')
  t.equal(sse.events.length, 4, 'exactly count events')
  const events = sse.events.map(eventData)
  t.same(
    events.map((e) => e['seq']),
    [1, 2, 3, 4],
  )
  t.same(
    events.map((e) => e['request_id']),
    Array(4).fill(headers['x-request-id']),
  )
  const gaps = sse.events.slice(1).map((e, i) => e.at - (sse.events[i]?.at as number))
  for (const gap of gaps) t.ok(gap >= 185 && gap < 600, `arrived ${Math.round(gap)} ms after the previous one (0.2 s interval)`)
  t.equal(events[0]?.['value'], 1, 'the stream itself is the one request in flight')
  t.match(
    lines().find((l) => l.event === 'request_completed' && l['path'] === '/api/insights'),
    { status: 200, route: '/api/insights' },
  )
})

t.test('the defaults: 5 events; the interval is 1 s', async (t) => {
  const { base } = await startApp(t)
  const fast = openSse(portOf(base), '/api/insights?interval=0')
  await fast.ended
  t.same(
    fast.events.map((e) => eventData(e)['seq']),
    [1, 2, 3, 4, 5],
  )
  t.same(
    fast.events.map((e) => eventData(e)['metric']),
    METRICS,
  )
  t.ok((fast.events[4]?.at as number) - (fast.events[0]?.at as number) < 300, 'interval=0 sends them back to back')
  const paced = openSse(portOf(base), '/api/insights?count=2')
  await paced.ended
  const gap = (paced.events[1]?.at as number) - (paced.events[0]?.at as number)
  t.ok(gap >= 980 && gap < 1600, `default interval: ${Math.round(gap)} ms`)
})

t.test('bad parameters are 400 problems, before any stream', async (t) => {
  const { base } = await startApp(t)
  const cases: ReadonlyArray<readonly [string, string]> = [
    ['count=0', 'count'],
    ['count=21', 'count'],
    ['count=2.5', 'count'],
    ['count=five', 'count'],
    ['count=', 'count'],
    ['interval=-1', 'interval'],
    ['interval=10.5', 'interval'],
    ['interval=soon', 'interval'],
    ['count=3&interval=', 'interval'],
  ]
  for (const [query, parameter] of cases) {
    const res = await fetch(`${base}/api/insights?${query}`)
    t.equal(res.status, 400, query)
    t.equal(res.headers.get('content-type'), 'application/problem+json')
    t.match(await res.json(), { type: 'urn:svc:problem:invalid-parameter', status: 400, parameter, detail: new RegExp(`^${parameter} must be`) }, query)
  }
})

t.test('beyond SVC_MAX_STREAMS: 503 with Retry-After; a slot frees when a stream ends', async (t) => {
  const { base } = await startApp(t, { SVC_MAX_STREAMS: '2' })
  const open = [openSse(portOf(base), '/api/insights?count=20&interval=10'), openSse(portOf(base), '/api/insights?count=20&interval=10')]
  await Promise.all(open.map((s) => s.waitFor(1)))
  const refused = await fetch(`${base}/api/insights`)
  t.equal(refused.status, 503)
  t.equal(refused.headers.get('retry-after'), '5')
  t.match(await refused.json(), { type: 'urn:svc:problem:too-many-streams', status: 503 })
  open[0]?.socket.destroy()
  await open[0]?.ended
  // The server learns of the close a moment after the client: retry briefly rather than race it.
  let status = 0
  for (let i = 0; i < 40 && status !== 200; i++) {
    if (i > 0) await sleep(25)
    const res = await fetch(`${base}/api/insights?count=1&interval=0`)
    status = res.status
    await res.text()
  }
  t.equal(status, 200, 'the slot of the client that left is free again')
  open[1]?.socket.destroy()
})

t.test('HEAD sends the stream headers only and holds no slot afterwards', async (t) => {
  const { base } = await startApp(t, { SVC_MAX_STREAMS: '1' })
  const head = await fetch(`${base}/api/insights?count=3`, { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(head.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(await head.text(), '')
  await sleep(20)
  const get = openSse(portOf(base), '/api/insights?count=1&interval=0')
  t.equal((await get.head).status, 200, 'not 503: the HEAD released its slot')
  await get.ended
})

t.test('a client that disconnects mid-wait stops the generator at once: no timer left behind', async (t) => {
  const { base } = await startApp(t, { SVC_MAX_STREAMS: '1' })
  const baseline = timers()
  const sse = openSse(portOf(base), '/api/insights?count=20&interval=10')
  await sse.waitFor(1)
  t.ok(await until(() => timers() === baseline + 1), 'the stream waits on one timer for its next event')
  const left = performance.now()
  sse.socket.destroy()
  t.ok(await until(() => timers() === baseline, 500), 'the timer is cleared')
  t.ok(performance.now() - left < 500, `within ${Math.round(performance.now() - left)} ms, not 10 s`)
  const next = openSse(portOf(base), '/api/insights?count=1&interval=0')
  t.equal((await next.head).status, 200, 'and its slot is free')
  await next.ended
})

t.test('logs and metrics close with the stream: request_completed and the duration cover it', async (t) => {
  const { base, lines } = await startApp(t)
  const sse = openSse(portOf(base), '/api/insights?count=3&interval=0.2')
  await sse.waitFor(1)
  await sse.ended
  const completed = lines().find((l) => l.event === 'request_completed' && l['path'] === '/api/insights')
  t.ok((completed?.['duration_ms'] as number) >= 380, `request_completed after the stream: ${String(completed?.['duration_ms'])} ms`)
  const text = await (await fetch(`${base}/metrics`)).text()
  const labels = { method: 'GET', endpoint: '/api/insights', environment: 'dev' }
  t.equal(sample(text, 'http_requests_total', { ...labels, status: '200' }), 1)
  t.ok((sample(text, 'http_request_duration_seconds_sum', labels) as number) >= 0.38, "the duration is the stream's")
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '0.25' }), 0)
  t.equal(sample(text, 'http_requests_in_flight', { environment: 'dev' }), 0)
})

t.test('the SERVER span of a stream ends with the stream', async (t) => {
  const r = await startReceiver()
  t.teardown(() => r.close())
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, OTEL_BSP_SCHEDULE_DELAY: '20' })
  await openSse(portOf(base), '/api/insights?count=3&interval=0.15').ended
  const [span] = await r.waitForSpans(1)
  t.equal(span?.name, 'GET /api/insights')
  t.ok((span?.endNanos as bigint) - (span?.startNanos as bigint) >= 290_000_000n, 'the span covers the stream')
})

/** The insights route alone on a server whose stream limit the test can see. */
const insightsServer = async (t: Test, env: Env): Promise<{ server: SvcServer; port: number; limit: StreamLimit }> => {
  const config = readConfig({ PORT: '0', ...env })
  const limit = createStreamLimit(config.maxStreams)
  const figures = createFigures({ metrics: createMetricsRegistry({ environment: 'dev', version: '1.0.0' }) })
  const lifecycle = createLifecycle()
  const router = createRouter([{ method: 'GET', path: '/api/insights', handler: getInsights({ figures, limit, closing: lifecycle.closing }) }], [])
  const server = createSvcServer({ config, router, logger: captureLogger(config).logger, lifecycle })
  const { port } = await server.listen()
  t.teardown(() => (server.state() === 'stopped' ? undefined : server.drain()))
  return { server, port, limit }
}

t.test('a stream running when the listener closes ends at once with the shutdown event, holding no drain', async (t) => {
  const delayMs = 300
  const { server, port, limit } = await insightsServer(t, { SVC_SHUTDOWN_DELAY_MS: String(delayMs) })
  const baseline = timers()
  const sse = openSse(port, '/api/insights?count=20&interval=10')
  await sse.waitFor(1)
  t.equal(limit.active(), 1)
  const started = performance.now()
  const drained = server.drain()
  await sleep(delayMs / 2)
  t.equal(sse.events.length, 1, 'during the shutdown delay the stream runs on')
  t.same(await drained, { isComplete: true }, 'the drain completed')
  t.ok(performance.now() - started < delayMs + 1000, 'once the delay was over, at once: not after the interval, nor the drain timeout')
  t.same(await sse.ended, { isComplete: true }, 'the server ended the body')
  t.same(
    sse.events.map((e) => e.data.split('\n')[0]),
    [sse.events[0]?.data, 'event: shutdown'],
    'one insight, then the shutdown event',
  )
  t.match(sse.events[1]?.data, /\nretry: \d+\n/, 'which sets the reconnection time')
  t.ok(await until(() => limit.active() === 0 && timers() === baseline, 500), 'the generator ran its finally and left no timer')
})
