// ENABLE_CONSOLE_TRACES: each span as one JSON line on stdout, in the shape (the one
// OpenTelemetry's Python console exporter prints): 0x-prefixed hex ids, `SpanKind.SERVER`,
// `parent_id` null for a root span, ISO 8601 UTC times with microseconds, `status.status_code`.
//
// Members: `name`, `context.trace_id`/`span_id`, `kind`, `parent_id`, `start_time`/`end_time`,
// `status.status_code`, `attributes`, `events`, `links`, `resource`; written through the stdout
// line writer.
import { SpanKind, SpanStatusCode, type HrTime } from '@opentelemetry/api'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node'

const KINDS: Readonly<Record<SpanKind, string>> = {
  [SpanKind.INTERNAL]: 'SpanKind.INTERNAL',
  [SpanKind.SERVER]: 'SpanKind.SERVER',
  [SpanKind.CLIENT]: 'SpanKind.CLIENT',
  [SpanKind.PRODUCER]: 'SpanKind.PRODUCER',
  [SpanKind.CONSUMER]: 'SpanKind.CONSUMER',
}
const STATUSES: Readonly<Record<SpanStatusCode, string>> = {
  [SpanStatusCode.UNSET]: 'UNSET',
  [SpanStatusCode.OK]: 'OK',
  [SpanStatusCode.ERROR]: 'ERROR',
}

/** `2026-11-22T06:00:00.123456Z`: an HrTime keeps microseconds that Date would drop. */
export const isoTime = ([seconds, nanos]: HrTime): string =>
  `${new Date(seconds * 1000).toISOString().slice(0, 19)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`

export const consoleRecord = (span: ReadableSpan): Record<string, unknown> => {
  const context = span.spanContext()
  return {
    name: span.name,
    context: { trace_id: `0x${context.traceId}`, span_id: `0x${context.spanId}`, trace_state: context.traceState?.serialize() ?? '' },
    kind: KINDS[span.kind],
    parent_id: span.parentSpanContext === undefined ? null : `0x${span.parentSpanContext.spanId}`,
    start_time: isoTime(span.startTime),
    end_time: isoTime(span.endTime),
    status:
      span.status.message === undefined
        ? { status_code: STATUSES[span.status.code] }
        : { status_code: STATUSES[span.status.code], description: span.status.message },
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, timestamp: isoTime(event.time), attributes: event.attributes ?? {} })),
    links: span.links.map((link) => ({
      context: { trace_id: `0x${link.context.traceId}`, span_id: `0x${link.context.spanId}` },
      attributes: link.attributes ?? {},
    })),
    resource: { attributes: span.resource.attributes, schema_url: span.resource.schemaUrl ?? '' },
  }
}

/** Writes through the service's own stdout writer, so span lines never interleave with log lines. */
export const consoleExporter = (write: (chunk: string) => void): SpanExporter => ({
  export(spans, resultCallback) {
    let text = ''
    for (const span of spans) text += `${JSON.stringify(consoleRecord(span))}\n`
    write(text)
    resultCallback({ code: 0 })
  },
  shutdown: () => Promise.resolve(),
  forceFlush: () => Promise.resolve(),
})
