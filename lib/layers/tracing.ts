// Tracing layer (lib/README.md §6): one SERVER span per request, continuing an incoming W3C traceparent,
// active while the endpoint runs (custom spans become its children) and ended by the server once
// the reply is fully written, streams included. Attributes are set on recorded spans only, and a
// request that starts a trace can be decided unsampled without the SDK (see sampling.ts).
//
// The span's name is `<METHOD> <route template>`; just the method for an unmatched path; `HTTP` for
// a method outside the standard set; never the raw path. Attributes: `http.method`, `http.route`
// (matched routes), `http.status_code` (integer), and the stable `http.request.method` (`_OTHER`
// plus `http.request.method_original` for unknown methods), `http.response.status_code`, `url.path`
// (no query), `url.scheme`. Status ERROR on a 5xx; what was thrown (not an `HttpError`) is recorded
// as an `exception` event; a deliberate 4xx is not an error. An incoming `traceparent` (and
// `tracestate`) makes the span its child, and parent-based samplers follow it. Each rate upstream
// attempt is a CLIENT span (`GET <host>`), its context sent upstream as `traceparent`. The
// resource: `service.name`, `service.version`, `deployment.environment`. Export
// (span-processor.ts): one past OTEL_BSP_EXPORT_TIMEOUT is failed then but keeps the slot until the
// exporter answers (late answers are not counted), so exports never pile up on a hung collector;
// failures are logged once per failing period.
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api'
import type { Ctx, WrittenHook } from '../core/http/context.js'
import { isStandardMethod } from '../telemetry/metrics/http-metrics.js'
import { PRE_SAMPLED_CONTEXT, UNSAMPLED_CONTEXT } from '../telemetry/sampling.js'
import { UNMATCHED, type Layer, type Reply } from '../core/pipeline.js'

const SERVER: SpanOptions = Object.freeze({ kind: SpanKind.SERVER })
const ERROR_STATUS = Object.freeze({ code: SpanStatusCode.ERROR })

type Carrier = { traceparent: string; tracestate?: string }

// `rawHeaders[i]` for an index below its length, which noUncheckedIndexedAccess cannot see; the
// list holds names and values in pairs, so a name's value is there too.
const headerAt = (rawHeaders: readonly string[], i: number): string => rawHeaders[i] as string

/**
 * The W3C headers, found by scanning the raw header list: `req.headers` is built on first use,
 * which most requests never need. Undefined when there is no traceparent (the common case).
 */
export const traceHeaders = (rawHeaders: readonly string[]): Carrier | undefined => {
  let carrier: Carrier | undefined
  let state: string | undefined
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = headerAt(rawHeaders, i)
    if (name.length === 11 && name.toLowerCase() === 'traceparent') carrier = { traceparent: headerAt(rawHeaders, i + 1) }
    else if (name.length === 10 && name.toLowerCase() === 'tracestate')
      state = state === undefined ? headerAt(rawHeaders, i + 1) : `${state},${headerAt(rawHeaders, i + 1)}`
  }
  if (carrier !== undefined && state !== undefined) carrier.tracestate = state
  return carrier
}

/** Records what was thrown as the span's exception event, and its message as the status's. */
const recordError = (span: Span, error: unknown): void => {
  if (error instanceof Error) {
    span.recordException(error)
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${error.name}: ${error.message}` })
  } else {
    span.recordException(String(error))
    span.setStatus(ERROR_STATUS)
  }
}

const ended: WrittenHook = (ctx, error) => {
  const span = ctx.span as Span
  if (error !== undefined) recordError(span, error)
  span.end()
}

const finish = (ctx: Ctx, reply: Reply): Reply => {
  const span = ctx.span as Span
  span.setAttribute('http.status_code', reply.status)
  span.setAttribute('http.response.status_code', reply.status)
  if (reply.kind === 'problem' && reply.error !== undefined) recordError(span, reply.error)
  else if (reply.status >= 500) span.setStatus(ERROR_STATUS)
  return reply
}

/** `decideRoot` draws the sampling of requests without a traceparent; undefined: the SDK decides. */
export const tracing =
  (tracer: Tracer, decideRoot?: () => boolean): Layer =>
  (next, route) => {
    const isMatched = route.template !== UNMATCHED
    // Names stay low-cardinality: the route template, never the path; semantic conventions' `HTTP`
    // and `_OTHER` for methods outside the standard set.
    const spanName = (method: string): string => {
      const known = isStandardMethod(method) ? method : 'HTTP'
      return isMatched ? `${known} ${route.template}` : known
    }
    const fixedName = route.method === '*' ? undefined : spanName(route.method)

    /** The request under its span: attributes, log ids and the end hook when it is recorded. */
    const traced = (ctx: Ctx, span: Span, parent: Context): Reply | Promise<Reply> => {
      ctx.traceContext = trace.setSpan(parent, span)
      if (!span.isRecording()) return next(ctx)

      const method = isStandardMethod(ctx.method) ? ctx.method : '_OTHER'
      span.setAttribute('http.method', ctx.method)
      span.setAttribute('http.request.method', method)
      if (method === '_OTHER') span.setAttribute('http.request.method_original', ctx.method)
      if (isMatched) span.setAttribute('http.route', route.template)
      span.setAttribute('url.path', ctx.path)
      span.setAttribute('url.scheme', 'http')
      const { traceId, spanId, traceFlags } = span.spanContext()
      if ((traceFlags & TraceFlags.SAMPLED) !== 0) {
        ctx.traceId = traceId
        ctx.spanId = spanId
      }
      ctx.span = span
      ctx.whenWritten(ended)
      const reply = next(ctx)
      return reply instanceof Promise ? reply.then((r) => finish(ctx, r)) : finish(ctx, reply)
    }

    return (ctx) => {
      const carrier = traceHeaders(ctx.req.rawHeaders)
      let parent = ROOT_CONTEXT
      if (carrier !== undefined) parent = propagation.extract(ROOT_CONTEXT, carrier)
      else if (decideRoot !== undefined) {
        if (!decideRoot()) {
          ctx.traceContext = UNSAMPLED_CONTEXT
          return next(ctx)
        }
        const span = tracer.startSpan(fixedName ?? spanName(ctx.method), SERVER, PRE_SAMPLED_CONTEXT)
        return traced(ctx, span, ROOT_CONTEXT)
      }
      const span = tracer.startSpan(fixedName ?? spanName(ctx.method), SERVER, parent)
      return traced(ctx, span, parent)
    }
  }
