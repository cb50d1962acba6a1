// One attempt against a real HTTP server on loopback: each way an upstream can fail, and what the
// attempt records (metrics, log line). Spans are checked end to end in test/integration.
import { context, propagation, SpanKind, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import { Registry } from 'prom-client'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { createUpstreamClient, MAX_REPLY_BYTES, type Attempt } from '../../lib/rates/client.js'
import { createUpstreamMetrics } from '../../lib/rates/upstream-metrics.js'
import { coinbase, coingecko } from '../../lib/rates/upstreams.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { sample } from '../fixtures/metrics-text.js'
import { fakeCoinbase, fakeCoingecko, UPDATED_AT, type FakeUpstream } from '../fixtures/rate-upstreams.js'
import { closedPort, httpServer } from '../fixtures/tcp.js'

const setup = (t: Test, url: string, { timeoutMs = 500, isCoinbase = false } = {}) => {
  const registry = new Registry()
  const metrics = createUpstreamMetrics(registry, ['coingecko', 'coinbase'])
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const upstream = isCoinbase ? coinbase(new URL(url)) : coingecko(new URL(url))
  const client = createUpstreamClient({
    upstream,
    timeoutMs,
    cells: metrics.get(upstream.name) as never,
    logger,
    now: () => Date.parse('2026-11-22T07:00:00Z'),
  })
  t.equal(client.name, upstream.name)
  const counts = async () => {
    const text = await registry.metrics()
    return Object.fromEntries(
      ['success', 'error', 'timeout'].map((outcome) => [outcome, sample(text, 'svc_upstream_requests_total', { upstream: upstream.name, outcome })]),
    )
  }
  const durations = async () => sample(await registry.metrics(), 'svc_upstream_request_duration_seconds_count', { upstream: upstream.name })
  const logs = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
  return { client, counts, durations, logs }
}

t.test('every series exists at 0 from start-up', async (t) => {
  const registry = new Registry()
  createUpstreamMetrics(registry, ['coingecko'])
  const text = await registry.metrics()
  for (const outcome of ['success', 'error', 'timeout']) t.equal(sample(text, 'svc_upstream_requests_total', { upstream: 'coingecko', outcome }), 0, outcome)
  t.equal(sample(text, 'svc_upstream_request_duration_seconds_bucket', { upstream: 'coingecko', le: '2' }), 0)
  t.equal(sample(text, 'svc_upstream_request_duration_seconds_count', { upstream: 'coingecko' }), 0)
})

t.test('a quote is read, counted as a success and timed', async (t) => {
  const gecko = await fakeCoingecko(t)
  const s = setup(t, gecko.url)
  t.same(await s.client.fetch('EUR', undefined), { outcome: 'quoted', quote: { value: 59010.25, timestamp: new Date(UPDATED_AT * 1000).toISOString() } })
  t.equal(gecko.received[0]?.url, '/api/v3/simple/price?ids=bitcoin&vs_currencies=eur&include_last_updated_at=true')
  t.equal(gecko.received[0]?.headers.accept, 'application/json')
  t.equal(gecko.received[0]?.headers['traceparent'], undefined, 'nothing is injected while tracing is off')
  t.same(await s.counts(), { success: 1, error: 0, timeout: 0 })
  t.equal(await s.durations(), 1)
})

t.test('a currency the upstream does not quote is an answer, counted as a success', async (t) => {
  const base = await fakeCoinbase(t)
  const s = setup(t, base.url, { isCoinbase: true })
  t.same(await s.client.fetch('XAU', undefined), { outcome: 'not_quoted' })
  t.same(await s.counts(), { success: 1, error: 0, timeout: 0 })
})

const failures: ReadonlyArray<readonly [string, (u: FakeUpstream) => void, Attempt, string]> = [
  ['a 503 HTML page', (u) => u.set('down'), { outcome: 'failed', isTimeout: false, reason: 'answered HTTP 503' }, 'HTTP 503'],
  ['an HTML page served with 200', (u) => u.set('html'), { outcome: 'failed', isTimeout: false, reason: 'sent an invalid reply' }, 'not JSON'],
  ['JSON of another shape', (u) => u.set('malformed'), { outcome: 'failed', isTimeout: false, reason: 'sent an invalid reply' }, 'not the expected JSON'],
  [
    'a body over the cap',
    (u) => u.set('huge'),
    { outcome: 'failed', isTimeout: false, reason: 'sent an invalid reply' },
    `no body, or one over ${MAX_REPLY_BYTES} bytes`,
  ],
]
for (const [name, arrange, expected, detail] of failures) {
  t.test(`${name} fails the attempt, counted as an error and logged`, async (t) => {
    const gecko = await fakeCoingecko(t)
    arrange(gecko)
    const s = setup(t, gecko.url)
    t.same(await s.client.fetch('USD', undefined), expected)
    t.same(await s.counts(), { success: 0, error: 1, timeout: 0 })
    t.match(s.logs(), [
      { level: 'warning', event: 'upstream_failed', upstream: 'coingecko', reason: expected.outcome === 'failed' ? expected.reason : '', detail },
    ])
  })
}

t.test('a 2xx without a body is an invalid reply', async (t) => {
  const empty = await httpServer(t, (_req, res) => {
    res.writeHead(204)
    res.end()
  })
  const s = setup(t, `http://127.0.0.1:${empty.port}`)
  t.match(await s.client.fetch('USD', undefined), { outcome: 'failed', reason: 'sent an invalid reply' })
})

t.test('a redirect is not followed: it is a failure', async (t) => {
  const moved = await httpServer(t, (_req, res) => {
    res.writeHead(301, { location: 'http://127.0.0.1:1/elsewhere' })
    res.end()
  })
  const s = setup(t, `http://127.0.0.1:${moved.port}`)
  t.same(await s.client.fetch('USD', undefined), { outcome: 'failed', isTimeout: false, reason: 'answered HTTP 301' })
})

t.test('a refused connection fails the attempt with its cause in the log, not in the reason', async (t) => {
  const s = setup(t, `http://127.0.0.1:${await closedPort()}`)
  t.same(await s.client.fetch('USD', undefined), { outcome: 'failed', isTimeout: false, reason: 'could not be reached' })
  t.same(await s.counts(), { success: 0, error: 1, timeout: 0 })
  t.match(s.logs()[0], { event: 'upstream_failed', detail: 'connection refused' })
})

t.test('slow headers or a slow body time out at the bound, counted as a timeout', async (t) => {
  const timeoutMs = 150
  const slowMs = 2000
  for (const behaviour of ['slow', 'slow-body'] as const) {
    const gecko = await fakeCoingecko(t)
    gecko.set(behaviour, slowMs)
    const s = setup(t, gecko.url, { timeoutMs })
    const started = performance.now()
    t.same(await s.client.fetch('USD', undefined), { outcome: 'failed', isTimeout: true, reason: `timed out after ${timeoutMs} ms` }, behaviour)
    const elapsed = performance.now() - started
    // Cut at the bound (less 10 ms for timer granularity), before the upstream would have finished
    // its answer: all of the time between the two is slack for a loaded machine.
    t.ok(elapsed >= timeoutMs - 10 && elapsed < slowMs, `${behaviour}: gave up after ${Math.round(elapsed)} ms, bound ${timeoutMs} ms`)
    t.same(await s.counts(), { success: 0, error: 0, timeout: 1 })
    for (let i = 0; i < 100 && gecko.abandoned() === 0; i++) await sleep(10)
    t.equal(gecko.abandoned(), 1, `${behaviour}: the attempt's connection was closed`)
  }
})

t.test('the CLIENT span names the host and its default port', async (t) => {
  const exporter = new InMemorySpanExporter()
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  provider.register()
  t.teardown(async () => {
    await provider.shutdown()
    trace.disable()
    propagation.disable()
    context.disable()
  })
  for (const url of ['http://127.0.0.1', 'https://127.0.0.1']) await setup(t, url, { timeoutMs: 200 }).client.fetch('USD', undefined)
  const spans = exporter.getFinishedSpans()
  t.same(
    spans.map((s) => [s.name, s.kind, s.attributes['server.port'], s.parentSpanContext]),
    [
      ['GET 127.0.0.1', SpanKind.CLIENT, 80, undefined],
      ['GET 127.0.0.1', SpanKind.CLIENT, 443, undefined],
    ],
    'root spans when the request is not traced',
  )
})
