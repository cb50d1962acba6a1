import { createTraceState, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { resourceFromAttributes } from '@opentelemetry/resources'
import t from 'tap'
import { consoleExporter, consoleRecord, isoTime } from '../../lib/telemetry/console-exporter.js'

t.test('isoTime keeps microseconds in UTC', async (t) => {
  t.equal(isoTime([1_795_300_000, 123_456_789]), '2026-11-21T22:26:40.123456Z')
  t.equal(isoTime([0, 5_000]), '1970-01-01T00:00:00.000005Z')
})

const child = {
  name: 'load-model',
  kind: SpanKind.INTERNAL,
  spanContext: () => ({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED }),
  parentSpanContext: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED },
  startTime: [1_795_300_000, 0],
  endTime: [1_795_300_000, 2_500_000],
  status: { code: SpanStatusCode.ERROR, message: 'artifact stale' },
  attributes: { 'model.name': 'iris' },
  events: [{ name: 'cache_miss', time: [1_795_300_000, 1_000_000] }],
  links: [{ context: { traceId: 'aa'.repeat(16), spanId: 'bb'.repeat(8), traceFlags: 0 } }],
  resource: resourceFromAttributes({ 'service.name': 'svc' }),
} as unknown as ReadableSpan

t.test('a child span with a status message, an event and a link', async (t) => {
  t.same(consoleRecord(child), {
    name: 'load-model',
    context: { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e4736', span_id: '0xb7ad6b7169203331', trace_state: '' },
    kind: 'SpanKind.INTERNAL',
    parent_id: '0x00f067aa0ba902b7',
    start_time: '2026-11-21T22:26:40.000000Z',
    end_time: '2026-11-21T22:26:40.002500Z',
    status: { status_code: 'ERROR', description: 'artifact stale' },
    attributes: { 'model.name': 'iris' },
    events: [{ name: 'cache_miss', timestamp: '2026-11-21T22:26:40.001000Z', attributes: {} }],
    links: [{ context: { trace_id: `0x${'aa'.repeat(16)}`, span_id: `0x${'bb'.repeat(8)}` }, attributes: {} }],
    resource: { attributes: { 'service.name': 'svc' }, schema_url: '' },
  })
})

t.test('every kind and status has its printed name', async (t) => {
  const kinds = [SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER].map(
    (kind) => consoleRecord({ ...child, kind, spanContext: child.spanContext } as ReadableSpan)['kind'],
  )
  t.same(kinds, ['SpanKind.SERVER', 'SpanKind.CLIENT', 'SpanKind.PRODUCER', 'SpanKind.CONSUMER'])
  const ok = consoleRecord({ ...child, spanContext: child.spanContext, status: { code: SpanStatusCode.OK } } as ReadableSpan)
  t.same(ok['status'], { status_code: 'OK' })
})

t.test('the exporter writes one line per span in one write and reports success', async (t) => {
  const chunks: string[] = []
  const exporter = consoleExporter((chunk) => void chunks.push(chunk))
  let result: unknown
  exporter.export([child, child], (r) => (result = r))
  t.same(result, { code: 0 })
  t.equal(chunks.length, 1)
  t.same(
    chunks[0]
      ?.split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { name: string }).name),
    ['load-model', 'load-model'],
  )
  await exporter.forceFlush?.()
  await exporter.shutdown()
})

t.test('a span continuing a trace with tracestate prints it serialised', async (t) => {
  const traceState = createTraceState('vendor=abc,other=1')
  const record = consoleRecord({ ...child, spanContext: () => ({ ...child.spanContext(), traceState }) } as ReadableSpan)
  t.same(record['context'], { trace_id: '0x4bf92f3577b34da6a3ce929d0e0e4736', span_id: '0xb7ad6b7169203331', trace_state: 'vendor=abc,other=1' })
})
