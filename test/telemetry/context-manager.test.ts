import { context, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api'
import t from 'tap'
import { contextManager } from '../../lib/telemetry/context-manager.js'
import { requestStore } from '../../lib/telemetry/request-store.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN = '00f067aa0ba902b7'
const withSpan = (flags: TraceFlags) => trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE, spanId: SPAN, traceFlags: flags })

t.test('outside any request the active context is the root', async (t) => {
  t.equal(contextManager.active(), ROOT_CONTEXT)
})

t.test('the active context is the one the tracing layer put in the request store', async (t) => {
  const ctx = withSpan(TraceFlags.SAMPLED)
  requestStore.run({ requestId: 'r1', traceId: undefined, spanId: undefined, traceContext: ctx }, () => {
    t.equal(contextManager.active(), ctx)
  })
})

t.test('with() runs in copied bindings: the request id stays, the sampled span ids change', async (t) => {
  const outer = { requestId: 'r1', traceId: 'outer', spanId: 'outer', traceContext: ROOT_CONTEXT }
  const sampled = withSpan(TraceFlags.SAMPLED)
  requestStore.run(outer, () => {
    const result = contextManager.with(
      sampled,
      function (this: unknown, a: number, b: number) {
        t.same(requestStore.getStore(), { requestId: 'r1', traceId: TRACE, spanId: SPAN, traceContext: sampled })
        t.equal(contextManager.active(), sampled)
        t.equal(this, 'self')
        return a + b
      },
      'self',
      2,
      3,
    )
    t.equal(result, 5)
    t.equal(requestStore.getStore(), outer, 'the request bindings are back afterwards')
  })
  contextManager.with(withSpan(TraceFlags.NONE), () => {
    t.same(
      requestStore.getStore(),
      { requestId: undefined, traceId: undefined, spanId: undefined, traceContext: withSpan(TraceFlags.NONE) },
      'no ids for an unsampled span, no request outside one',
    )
  })
  contextManager.with(ROOT_CONTEXT, () => t.equal(requestStore.getStore()?.traceId, undefined))
})

t.test('bind() wraps functions and returns anything else unchanged', async (t) => {
  const sampled = withSpan(TraceFlags.SAMPLED)
  const bound = contextManager.bind(sampled, function (this: unknown, x: number) {
    return [contextManager.active() === sampled, this, x]
  })
  t.same(bound.call('me', 7), [true, 'me', 7])
  const target = { not: 'a function' }
  t.equal(contextManager.bind(sampled, target), target)
  t.equal(contextManager.enable(), contextManager)
  t.equal(contextManager.disable(), contextManager)
})

t.test('registered globally, context.with and context.active go through the request store', async (t) => {
  context.setGlobalContextManager(contextManager)
  t.teardown(() => context.disable())
  const sampled = withSpan(TraceFlags.SAMPLED)
  context.with(sampled, () => t.equal(context.active(), sampled))
})
