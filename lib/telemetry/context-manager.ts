// The OpenTelemetry context manager, kept in the per-request store the logging layer already
// enters. The SDK's own manager would run a second AsyncLocalStorage per request; this one costs
// the tracing layer one field write, and `context.active()` one store lookup.
import { ROOT_CONTEXT, trace, TraceFlags, type Context, type ContextManager } from '@opentelemetry/api'
import type { RequestBindings } from '../core/http/context.js'
import { requestStore } from './request-store.js'

/**
 * A custom span made active (`startActiveSpan`, `context.with`) runs in a copy of the request's
 * bindings: logs written inside it carry its span id, the request's id stays.
 */
export const contextManager: ContextManager = {
  active: () => requestStore.getStore()?.traceContext ?? ROOT_CONTEXT,

  with(context, fn, thisArg, ...args) {
    const spanContext = trace.getSpanContext(context)
    const isSampled = spanContext !== undefined && (spanContext.traceFlags & TraceFlags.SAMPLED) !== 0
    const bindings: RequestBindings = {
      requestId: requestStore.getStore()?.requestId,
      traceId: isSampled ? spanContext.traceId : undefined,
      spanId: isSampled ? spanContext.spanId : undefined,
      traceContext: context,
    }
    return requestStore.run(bindings, () => fn.apply(thisArg, args))
  },

  /** Functions only: event emitters are not patched, the request store already follows them. */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target
    const run = (thisArg: unknown, args: unknown[]): unknown => contextManager.with(context, target as (...a: unknown[]) => unknown, thisArg, ...args)
    return function (this: unknown, ...args: unknown[]) {
      return run(this, args)
    } as T
  },

  enable() {
    return contextManager
  },
  disable() {
    return contextManager
  },
}
