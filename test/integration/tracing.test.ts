// Traces as a collector receives them: a real OTLP/gRPC receiver on loopback decodes every export.
import { status as GrpcStatus } from '@grpc/grpc-js'
import { SpanStatusCode, trace, type ProxyTracerProvider } from '@opentelemetry/api'
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { SPAN_FLUSH_TIMEOUT_MS } from '../../lib/process/shutdown.js'
import { readConfig } from '../../lib/config/config.js'
import { tracing as tracingLayer } from '../../lib/layers/tracing.js'
import type { Layer, RouteDef } from '../../lib/core/pipeline.js'
import { createRouter } from '../../lib/core/router.js'
import { createServer as createSvcServer } from '../../lib/server/server.js'
import type { Logger } from '../../lib/telemetry/logger.js'
import { createTracing, getTracer, type ServerTracing } from '../../lib/telemetry/tracer.js'
import { Registry } from 'prom-client'
import { captureLogger, startApp, type LogLine } from '../fixtures/app.js'
import { startReceiver, type Receiver, type ReceivedSpan } from '../fixtures/otlp-receiver.js'
import { testRoutes } from '../fixtures/routes.js'
import { sample } from '../fixtures/metrics-text.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { jsonLines, spawnTs } from '../fixtures/spawn.js'
import { closedPort, silentServer } from '../fixtures/tcp.js'

const PARENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_SPAN = '00f067aa0ba902b7'
const FAST = { OTEL_BSP_SCHEDULE_DELAY: '20' }

const receiver = async (t: Test): Promise<Receiver> => {
  const r = await startReceiver()
  t.teardown(() => r.close())
  return r
}

/** Routes whose endpoint makes a custom span, logging inside it; the logger is known after start. */
const customRoutes = (): { routes: RouteDef[]; useLogger(logger: Logger): void } => {
  let log: Logger | undefined
  const routes: RouteDef[] = [
    {
      method: 'GET',
      path: '/test/custom',
      handler: () =>
        getTracer().startActiveSpan('load-model', (span) => {
          span.setAttribute('model.name', 'iris')
          log?.info('weights_fetched', { model: 'iris' })
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'artifact stale' })
          span.end()
          return { kind: 'json' as const, status: 200, body: { ok: true } }
        }),
    },
    {
      method: 'GET',
      path: '/test/log',
      handler: () => {
        log?.info('inside_request', {})
        return { kind: 'json', status: 200, body: {} }
      },
    },
  ]
  return { routes, useLogger: (logger) => void (log = logger) }
}

/**
 * Exports every span the running app's processors hold and waits for the collector's answers: a span
 * not at the receiver after this was never queued, however long one waited. The app registered its
 * SDK provider as the global one (lib/telemetry/tracer.ts); lib/ exposes no flush of its own.
 */
const flushSpans = (): Promise<void> => ((trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as NodeTracerProvider).forceFlush()

const byName = (spans: readonly ReceivedSpan[], name: string): ReceivedSpan => {
  const span = spans.find((s) => s.name === name)
  if (span === undefined) throw new Error(`no span named ${name} among ${spans.map((s) => s.name).join(', ')}`)
  return span
}

t.test('a SERVER span per request reaches the collector with its attributes, types and resource', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, APP_NAME: 'pricing', SVC_ENVIRONMENT: 'stage', ...FAST }, testRoutes(10))
  t.equal((await fetch(`${base}/test/items/7/parts/a?x=1`)).status, 200)
  const [span] = await r.waitForSpans(1)
  t.ok(span)
  const s = span as ReceivedSpan
  t.equal(s.name, 'GET /test/items/{id}/parts/{part}')
  t.equal(s.kind, 'SPAN_KIND_SERVER')
  t.equal(s.parentSpanId, '', 'a request without traceparent starts a root span')
  t.match(s.traceId, /^[0-9a-f]{32}$/)
  t.same(s.attributes, {
    'http.method': { type: 'string', value: 'GET' },
    'http.request.method': { type: 'string', value: 'GET' },
    'http.route': { type: 'string', value: '/test/items/{id}/parts/{part}' },
    'url.path': { type: 'string', value: '/test/items/7/parts/a' },
    'url.scheme': { type: 'string', value: 'http' },
    'http.status_code': { type: 'int', value: 200 },
    'http.response.status_code': { type: 'int', value: 200 },
  })
  t.equal(s.status.code, 'STATUS_CODE_UNSET')
  t.same(
    { name: s.resource['service.name'], version: s.resource['service.version'], environment: s.resource['deployment.environment'] },
    { name: { type: 'string', value: 'pricing' }, version: { type: 'string', value: PACKAGE_VERSION }, environment: { type: 'string', value: 'stage' } },
  )
  t.equal(s.scope, 'svc')
  t.ok(s.endNanos > s.startNanos)
})

t.test('an incoming traceparent makes the SERVER span its child; tracestate is kept', async (t) => {
  const r = await receiver(t)
  const { base, lines } = await startApp(t, { OTLP_ENDPOINT: `http://${r.hostPort}`, ...FAST })
  const response = await fetch(`${base}/`, { headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, tracestate: 'vendor=abc' } })
  t.equal(response.status, 200)
  const [span] = await r.waitForSpans(1)
  t.equal(span?.name, 'GET /')
  t.equal(span?.traceId, PARENT_TRACE)
  t.equal(span?.parentSpanId, PARENT_SPAN)
  t.equal(span?.traceState, 'vendor=abc')
  const completed = lines().find((l) => l.event === 'request_completed')
  t.equal(completed?.['trace_id'], PARENT_TRACE, 'the log line names the continued trace')
  t.equal(completed?.['span_id'], span?.spanId)
})

t.test('a malformed traceparent is ignored: the request starts a new trace', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST })
  await fetch(`${base}/`, { headers: { traceparent: `00-${'0'.repeat(32)}-${PARENT_SPAN}-01` } })
  const [span] = await r.waitForSpans(1)
  t.not(span?.traceId, '0'.repeat(32))
  t.equal(span?.parentSpanId, '')
})

t.test('unmatched paths and unknown methods keep span names low-cardinality', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST })
  await fetch(`${base}/no/such/path/123`)
  await fetch(`${base}/health`, { method: 'DELETE' })
  await fetch(`${base}/`, { method: 'PROPFIND' })
  const spans = await r.waitForSpans(3)
  t.same(spans.map((s) => s.name).sort(), ['DELETE /health', 'GET', 'HTTP /'])
  const unmatched = byName(spans, 'GET')
  t.equal(unmatched.attributes['http.route'], undefined, 'no route for a path that matched none')
  t.equal(unmatched.attributes['http.status_code']?.value, 404)
  const other = byName(spans, 'HTTP /')
  t.same([other.attributes['http.request.method']?.value, other.attributes['http.request.method_original']?.value], ['_OTHER', 'PROPFIND'])
})

t.test('a throwing endpoint gives an ERROR span with the exception recorded; a 4xx stays UNSET', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST }, testRoutes(10))
  t.equal((await fetch(`${base}/test/throw`)).status, 500)
  t.equal((await fetch(`${base}/test/reject`)).status, 500)
  t.equal((await fetch(`${base}/test/teapot`)).status, 418)
  const spans = await r.waitForSpans(3)
  const thrown = byName(spans, 'GET /test/throw')
  t.same(thrown.status, { code: 'STATUS_CODE_ERROR', message: 'BoomError: secret internal detail /etc/passwd' })
  t.equal(thrown.attributes['http.status_code']?.value, 500)
  const event = thrown.events[0]
  t.equal(event?.name, 'exception')
  t.equal(event?.attributes['exception.type']?.value, 'BoomError')
  t.match(String(event?.attributes['exception.stacktrace']?.value), /BoomError: secret internal detail/)
  t.equal(byName(spans, 'GET /test/reject').status.code, 'STATUS_CODE_ERROR')
  const teapot = byName(spans, 'GET /test/teapot')
  t.same([teapot.status.code, teapot.events.length], ['STATUS_CODE_UNSET', 0], 'a deliberate client error is not a server error')
})

t.test('a stream span ends after the last chunk; a stream that breaks is an ERROR', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST }, testRoutes(10))
  await (await fetch(`${base}/test/stream?count=3&interval=100`)).text()
  await (await fetch(`${base}/test/stream-fail`)).text()
  const spans = await r.waitForSpans(2)
  const stream = byName(spans, 'GET /test/stream')
  t.ok(stream.endNanos - stream.startNanos >= 250_000_000n, `the span covers the whole stream (${(stream.endNanos - stream.startNanos) / 1_000_000n} ms)`)
  const broken = byName(spans, 'GET /test/stream-fail')
  t.same([broken.status.code, broken.events[0]?.name], ['STATUS_CODE_ERROR', 'exception'])
})

t.test('a custom span started in an endpoint is a child of the SERVER span; logs carry its ids', async (t) => {
  const r = await receiver(t)
  const custom = customRoutes()
  const { base, logger, lines } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST }, custom.routes)
  custom.useLogger(logger)
  t.equal((await fetch(`${base}/test/custom`)).status, 200)
  const spans = await r.waitForSpans(2)
  const server = byName(spans, 'GET /test/custom')
  const child = byName(spans, 'load-model')
  t.equal(child.kind, 'SPAN_KIND_INTERNAL')
  t.equal(child.traceId, server.traceId)
  t.equal(child.parentSpanId, server.spanId)
  t.same(child.attributes['model.name'], { type: 'string', value: 'iris' })
  t.same(child.status, { code: 'STATUS_CODE_ERROR', message: 'artifact stale' })
  const loaded = lines().find((l) => l.event === 'weights_fetched') as LogLine
  const completed = lines().find((l) => l.event === 'request_completed') as LogLine
  t.same([loaded['trace_id'], loaded['span_id']], [server.traceId, child.spanId], 'inside the custom span, its span id')
  t.equal(loaded['request_id'], completed['request_id'], 'and still the request id')
  t.same([completed['trace_id'], completed['span_id']], [server.traceId, server.spanId])
})

t.test('log lines inside a sampled request carry lower-case hex trace and span ids', async (t) => {
  const r = await receiver(t)
  const custom = customRoutes()
  const { base, logger, lines } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST }, custom.routes)
  custom.useLogger(logger)
  await fetch(`${base}/test/log`)
  const [span] = await r.waitForSpans(1)
  const inside = lines().find((l) => l.event === 'inside_request') as LogLine
  t.same([inside['trace_id'], inside['span_id']], [span?.traceId, span?.spanId])
  t.match(inside['trace_id'], /^[0-9a-f]{32}$/)
  t.match(inside['span_id'], /^[0-9a-f]{16}$/)
})

t.test('sampler ratio 0: no spans exported and no trace ids in logs; a sampled parent still wins', async (t) => {
  const r = await receiver(t)
  const custom = customRoutes()
  const env = { OTLP_ENDPOINT: r.hostPort, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', ...FAST }
  const { base, logger, lines } = await startApp(t, env, custom.routes)
  custom.useLogger(logger)
  for (let i = 0; i < 20; i++) await (await fetch(`${base}/test/log`)).arrayBuffer()
  await (await fetch(`${base}/test/custom`)).arrayBuffer()
  await flushSpans()
  t.equal(r.spans().length, 0, 'nothing exported')
  t.equal(lines().filter((l) => 'trace_id' in l || 'span_id' in l).length, 0, 'no trace ids in any log line')
  const scraped = await (await fetch(`${base}/metrics`, { headers: { accept: 'application/openmetrics-text' } })).text()
  t.notMatch(scraped, /trace_id=/, 'no exemplar points at a trace that was never exported')

  await fetch(`${base}/test/log`, { headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` } })
  const [span] = await r.waitForSpans(1)
  t.equal(span?.traceId, PARENT_TRACE, 'parent-based: the caller sampled it, so it is kept')
})

t.test('always_off exports nothing even for a sampled parent', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, OTEL_TRACES_SAMPLER: 'always_off', ...FAST })
  await (await fetch(`${base}/`, { headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` } })).arrayBuffer()
  await flushSpans()
  t.equal(r.exportCount(), 0, 'nothing exported')
})

t.test('OpenMetrics scrapes carry trace_id exemplars of sampled requests; the text format none', async (t) => {
  const r = await receiver(t)
  const { base } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST })
  await fetch(`${base}/`)
  const [span] = await r.waitForSpans(1)
  const open = await (await fetch(`${base}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } })).text()
  const exemplar = ` # {trace_id="${span?.traceId}"}`
  const counter = open.split('\n').find((l) => l.startsWith('http_requests_total{method="GET",endpoint="/",status="200"'))
  t.ok(counter?.includes(`${exemplar} 1 `), String(counter))
  const buckets = open.split('\n').filter((l) => l.startsWith('http_request_duration_seconds_bucket{method="GET",endpoint="/",') && l.includes(exemplar))
  t.equal(buckets.length, 1, 'exactly one bucket holds the exemplar: the one the duration fell in')
  const text = await (await fetch(`${base}/metrics`)).text()
  t.notMatch(text, /trace_id/)
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/', status: '200', environment: 'dev' }), 1)
})

t.test('console traces print the seed shape, field by field', async (t) => {
  const { base, consoleSpans } = await startApp(t, { ENABLE_CONSOLE_TRACES: 'true', ...FAST }, testRoutes(10))
  await fetch(`${base}/health`, { headers: { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` } })
  await (await fetch(`${base}/test/throw`)).arrayBuffer()
  await flushSpans()
  const [health, thrown] = consoleSpans()
  t.equal(health?.['name'], 'GET /health')
  t.match(health?.['context'], { trace_id: `0x${PARENT_TRACE}`, span_id: /^0x[0-9a-f]{16}$/ })
  t.equal(health?.['kind'], 'SpanKind.SERVER')
  t.equal(health?.['parent_id'], `0x${PARENT_SPAN}`)
  t.match(health?.['start_time'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
  t.match(health?.['end_time'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
  t.ok(String(health?.['end_time']) >= String(health?.['start_time']))
  t.same(health?.['status'], { status_code: 'UNSET' })
  t.match(health?.['attributes'], { 'http.method': 'GET', 'http.route': '/health', 'http.status_code': 200 })
  t.match(health?.['resource'], { attributes: { 'service.name': 'svc', 'deployment.environment': 'dev' } })
  t.equal(thrown?.['parent_id'], null, 'a root span has parent_id null')
  t.match(thrown?.['status'], { status_code: 'ERROR' })
  t.match(thrown?.['events'], [{ name: 'exception', timestamp: /Z$/, attributes: { 'exception.type': 'BoomError' } }])
})

t.test('a dead collector: requests stay fast, UNAVAILABLE is reported once, recovery is logged', async (t) => {
  const port = await closedPort()
  const exportTimeoutMs = 10_000
  const { app, base, lines } = await startApp(t, {
    OTLP_ENDPOINT: `127.0.0.1:${port}`,
    OTEL_BSP_SCHEDULE_DELAY: '20',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5',
    OTEL_BSP_EXPORT_TIMEOUT: String(exportTimeoutMs),
  })
  const started = performance.now()
  for (let i = 0; i < 60; i++) t.equal((await fetch(`${base}/`)).status, 200)
  const elapsed = performance.now() - started
  // A request that waited on an export would wait on gRPC's reconnect backoff (1 s and up) or on
  // the export deadline: 60 of them would take longer than one deadline, which is all the slack given.
  t.ok(elapsed < exportTimeoutMs, `60 requests in ${elapsed.toFixed(0)} ms, under one export deadline (${exportTimeoutMs} ms)`)
  // Every batch of those requests has failed by now: the count of reports below is final.
  await flushSpans()
  const failures = lines().filter((l) => l.event === 'trace_export_failed')
  t.equal(failures.length, 1, 'one report per failing period, not one per batch')
  t.match(failures[0], { level: 'error', code: 'StatusCode.UNAVAILABLE', exporter: 'otlp', endpoint: `http://127.0.0.1:${port}` })
  t.notOk('request_id' in (failures[0] as LogLine), 'reported outside any request')
  const text = (await app.metrics.render(undefined)).text
  t.ok((sample(text, 'svc_spans_dropped_total', { exporter: 'otlp', reason: 'export_failed', environment: 'dev' }) ?? 0) >= 5)

  const r = await startReceiver(port)
  t.teardown(() => r.close())
  // gRPC retries the connection after a backoff (1 s at first): spans ended before that are lost.
  const until = Date.now() + 20_000
  while (r.spans().length === 0 && Date.now() < until) {
    await fetch(`${base}/`)
    await sleep(50)
  }
  t.ok(r.spans().length > 0, 'spans flow again once the collector is back')
  const deadline2 = Date.now() + 5000
  while (!lines().some((l) => l.event === 'trace_export_recovered') && Date.now() < deadline2) await sleep(20)
  const recovered = lines().find((l) => l.event === 'trace_export_recovered')
  t.match(recovered, { level: 'info', exporter: 'otlp' })
  t.ok(Number(recovered?.['spans_dropped']) >= 5)
})

t.test('a collector refusing the data reports StatusCode.INVALID_ARGUMENT', async (t) => {
  const r = await receiver(t)
  r.refuseWith(GrpcStatus.INVALID_ARGUMENT)
  const { base, lines } = await startApp(t, { OTLP_ENDPOINT: r.hostPort, ...FAST })
  await (await fetch(`${base}/`)).arrayBuffer()
  await flushSpans()
  t.match(
    lines().find((l) => l.event === 'trace_export_failed'),
    { code: 'StatusCode.INVALID_ARGUMENT', message: 'refused by the test receiver' },
  )
})

t.test('with neither exporter set, there is no tracing layer and no span metrics', async (t) => {
  const { app, base, lines } = await startApp(t)
  t.equal(app.tracing.server, undefined)
  await fetch(`${base}/`)
  t.notOk(lines().some((l) => 'trace_id' in l))
  t.notMatch((await app.metrics.render(undefined)).text, /svc_spans_dropped_total/)
})

t.test('on SIGTERM queued spans are flushed, those of requests finished during the drain included', async (t) => {
  const r = await receiver(t)
  // A schedule delay longer than the test: only the shutdown flush can deliver these spans.
  const env = { OTLP_ENDPOINT: r.hostPort, OTEL_BSP_SCHEDULE_DELAY: '600000', SLOW_MS: '300', LOG_LEVEL: 'debug' }
  const child = spawnTs('test/fixtures/serve.ts', [], env)
  const { port } = await child.waitForEvent('application_started')
  const base = `http://127.0.0.1:${String(port)}`
  t.equal((await fetch(`${base}/`)).status, 200)
  const slow = fetch(`${base}/test/slow`)
  // The signal goes once the slow request is in (its request_started line, at debug), however long
  // a loaded machine takes to deliver it: a request that arrived after it would be refused instead.
  const deadline = Date.now() + 10_000
  while (!child.stdout().includes('"path":"/test/slow"') && Date.now() < deadline) await sleep(10)
  child.proc.kill('SIGTERM')
  t.equal((await slow).status, 200)
  t.same(await child.exited, { code: 0, signal: null })
  t.same(
    r
      .spans()
      .map((s) => s.name)
      .sort(),
    ['GET /', 'GET /test/slow'],
  )
})

t.test('on SIGTERM a collector that never answers delays exit by the flush bound only', async (t) => {
  // Accepts connections and never speaks HTTP/2: an export waits for its deadline.
  const { port: collector } = await silentServer(t)
  const child = spawnTs('test/fixtures/serve.ts', [], { OTLP_ENDPOINT: `127.0.0.1:${collector}`, OTEL_BSP_SCHEDULE_DELAY: '600000' })
  const { port } = await child.waitForEvent('application_started')
  await fetch(`http://127.0.0.1:${String(port)}/`)
  const started = Date.now()
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
  const elapsed = Date.now() - started
  // At least the bound (100 ms allowed for clock granularity), and 3 s of slack past it for the drain
  // and exit of a child process on a loaded machine: far below the export's own deadline
  // (OTEL_BSP_EXPORT_TIMEOUT, 30 s by default), which an exit not bounded by the flush would wait for.
  t.ok(elapsed >= SPAN_FLUSH_TIMEOUT_MS - 100 && elapsed < SPAN_FLUSH_TIMEOUT_MS + 3000, `exited after ${elapsed} ms`)
  const events = jsonLines(child.stdout()).map((l) => l['event'])
  t.same(events.slice(-2), ['trace_flush_incomplete', 'application_stopped'])
})

t.test('empty replies, HEAD on a stream and a failing outer layer all end their spans', async (t) => {
  const r = await receiver(t)
  const config = readConfig({ PORT: '0', OTLP_ENDPOINT: r.hostPort, ...FAST })
  const { logger } = captureLogger(config)
  const tracing = createTracing({
    config: config.tracing,
    service: { name: 'svc', version: '1.0.0', environment: 'dev' },
    logger,
    metrics: new Registry(),
    writeConsole: () => {},
  })
  t.teardown(() => tracing.shutdown(1000))
  const failsLater: Layer = (next, route) => (ctx) => {
    const reply = next(ctx)
    return route.template === '/test/throw' ? Promise.resolve(reply).then(() => Promise.reject(new Error('layer broke later'))) : reply
  }
  const router = createRouter(testRoutes(10), [
    failsLater,
    tracingLayer((tracing.server as ServerTracing).tracer, (tracing.server as ServerTracing).decideRoot),
  ])
  const server = createSvcServer({ config, router, logger })
  const { port } = await server.listen()
  t.teardown(() => server.drain())
  const base = `http://127.0.0.1:${port}`
  t.equal((await fetch(`${base}/test/empty`)).status, 204)
  t.equal((await fetch(`${base}/test/stream`, { method: 'HEAD' })).status, 200)
  t.equal((await fetch(`${base}/test/throw`)).status, 500)
  const spans = await r.waitForSpans(3)
  t.same(spans.map((s) => s.name).sort(), ['GET /test/empty', 'GET /test/throw', 'HEAD /test/stream'])
  const failed = byName(spans, 'GET /test/throw')
  t.same(failed.status.code, 'STATUS_CODE_ERROR')
  t.same(
    failed.events.map((e) => e.attributes['exception.message']?.value),
    ['secret internal detail /etc/passwd', 'layer broke later'],
  )
})
