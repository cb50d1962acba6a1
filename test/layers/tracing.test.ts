import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import t, { type Test } from 'tap'
import { traceHeaders, tracing } from '../../lib/layers/tracing.js'
import { compose, type Handler, type Layer, type Reply, type RouteInfo } from '../../lib/core/pipeline.js'
import { contextManager } from '../../lib/telemetry/context-manager.js'
import { makeCtx, rethrow } from '../fixtures/ctx.js'

t.test('traceHeaders finds the W3C headers in the raw list, any case, tracestate joined', async (t) => {
  t.equal(traceHeaders([]), undefined)
  t.equal(traceHeaders(['Host', 'x', 'tracestate', 'a=1']), undefined, 'tracestate alone is not a trace')
  t.same(traceHeaders(['TraceParent', '00-a-b-01']), { traceparent: '00-a-b-01' })
  t.same(traceHeaders(['traceparent', '00-a-b-01', 'TRACESTATE', 'a=1', 'tracestate', 'b=2']), { traceparent: '00-a-b-01', tracestate: 'a=1,b=2' })
})

const ROUTE: RouteInfo = { method: 'GET', template: '/items/{id}', isExcludedFromMetrics: false, requestLogLevel: 'info', isOperational: false, auth: 'none' }

const setup = (t: Test) => {
  const exporter = new InMemorySpanExporter()
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  provider.register({ contextManager })
  t.teardown(async () => {
    await provider.shutdown()
    trace.disable()
    propagation.disable()
  })
  return { exporter, layer: tracing(provider.getTracer('test')) }
}

const run = async (handler: Handler, layer: ReturnType<typeof tracing>, written?: unknown) => {
  const ctx = makeCtx('GET', '/items/7')
  const reply = await layer(handler, ROUTE)(ctx)
  ctx.replyWritten(written, rethrow)
  return { ctx, reply }
}

t.test('a sync endpoint stays sync, and its span ends only when the server says it is written', async (t) => {
  const { exporter, layer } = setup(t)
  const ctx = makeCtx('GET', '/items/7')
  const reply = layer(() => ({ kind: 'json', status: 200, body: {} }), ROUTE)(ctx)
  t.notOk(reply instanceof Promise)
  t.equal(exporter.getFinishedSpans().length, 0, 'not ended before the reply is written')
  ctx.replyWritten(undefined, rethrow)
  const [span] = exporter.getFinishedSpans()
  t.equal(span?.name, 'GET /items/{id}')
  t.equal(span?.kind, SpanKind.SERVER)
  t.equal(span?.attributes['http.status_code'], 200)
  t.equal(ctx.traceId, span?.spanContext().traceId)
})

t.test('a thrown non-Error is recorded as text; an error while writing marks the span', async (t) => {
  const { exporter, layer } = setup(t)
  const problemReply: Reply = { kind: 'problem', status: 500, problem: { type: 'x', title: 'y', status: 500, detail: 'z' }, error: 'just a string' }
  await run(async () => problemReply, layer)
  await run(() => ({ kind: 'stream', status: 200, stream: (async function* () {})() }), layer, new RangeError('socket gone'))
  await run(() => ({ kind: 'json', status: 503, body: {} }), layer)
  const [text, stream, unavailable] = exporter.getFinishedSpans()
  t.same(text?.status, { code: SpanStatusCode.ERROR })
  t.equal(text?.events[0]?.attributes?.['exception.message'], 'just a string')
  t.same(stream?.status, { code: SpanStatusCode.ERROR, message: 'RangeError: socket gone' })
  t.same(unavailable?.status, { code: SpanStatusCode.ERROR }, 'a 5xx without an exception is still an error')
  t.equal(unavailable?.events.length, 0)
})

t.test('a request the layer decided to sample is traced under its own name, a root span', async (t) => {
  const { exporter } = setup(t)
  const provider = trace.getTracerProvider()
  const layer = tracing(provider.getTracer('test'), () => true)
  const ctx = makeCtx('PROPFIND', '/nowhere')
  layer(() => ({ kind: 'json', status: 404, body: {} }), { ...ROUTE, method: '*', template: '<unmatched>' })(ctx)
  ctx.replyWritten(undefined, rethrow)
  const [span] = exporter.getFinishedSpans()
  t.equal(span?.name, 'HTTP')
  t.equal(span?.parentSpanContext, undefined)
  t.equal(trace.getSpan(ctx.traceContext as never), ctx.span, 'the request context holds the span')
})

t.test("another layer's written hook leaves the span's in place: both run, in the order added", async (t) => {
  const { exporter, layer } = setup(t)
  const order: string[] = []
  const watching: Layer = (next) => (ctx) => {
    ctx.whenWritten(() => void order.push(`outer, span ended: ${exporter.getFinishedSpans().length}`))
    return next(ctx)
  }
  const ctx = makeCtx('GET', '/items/7')
  compose(() => ({ kind: 'json', status: 200, body: {} }), [watching, layer], ROUTE)(ctx)
  ctx.whenWritten(() => void order.push(`inner, span ended: ${exporter.getFinishedSpans().length}`))
  ctx.replyWritten(undefined, rethrow)
  t.equal(exporter.getFinishedSpans().length, 1, 'the span ended')
  t.same(order, ['outer, span ended: 0', 'inner, span ended: 1'])
})

t.test("another layer's written hook that throws leaves the span's to run: the span still ends", async (t) => {
  const { exporter, layer } = setup(t)
  const broken = new TypeError('a hook broke')
  const throwing: Layer = (next) => (ctx) => {
    ctx.whenWritten(() => {
      throw broken
    })
    return next(ctx)
  }
  const ctx = makeCtx('GET', '/items/7')
  compose(() => ({ kind: 'json', status: 200, body: {} }), [throwing, layer], ROUTE)(ctx)
  const failures: unknown[] = []
  ctx.replyWritten(undefined, (c, error) => void failures.push(c === ctx && error))
  t.same(failures, [broken], 'the failure is handed to the server')
  t.equal(exporter.getFinishedSpans().length, 1, 'the span ended all the same')
})
