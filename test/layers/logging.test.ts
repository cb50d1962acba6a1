import t from 'tap'
import type { Ctx } from '../../lib/core/http/context.js'
import { logging } from '../../lib/layers/logging.js'
import type { Handler, RouteInfo } from '../../lib/core/pipeline.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { requestStore } from '../../lib/telemetry/request-store.js'
import { makeCtx } from '../fixtures/ctx.js'

const route: RouteInfo = { method: 'GET', template: '/things/{id}', isExcludedFromMetrics: false, requestLogLevel: 'info', isOperational: false, auth: 'none' }

const setup = (level: 'debug' | 'info' | 'error' = 'info') => {
  const lines: Array<Record<string, unknown>> = []
  const logger = createLogger({ name: 'svc', level, format: 'json', write: (c) => void lines.push(JSON.parse(c) as Record<string, unknown>), now: () => 0 })
  return { lines, layer: logging(logger) }
}

t.test('a sync handler is wrapped in request_started and request_completed with the route template', async (t) => {
  const { lines, layer } = setup()
  let seen: unknown
  const handler = layer((_ctx: Ctx) => {
    seen = requestStore.getStore()
    return { kind: 'json', status: 201, body: {} }
  }, route)
  const ctx = makeCtx('GET', '/things/7?x=1')
  const reply = handler(ctx)
  t.notOk(reply instanceof Promise, 'a sync endpoint stays sync')
  t.equal(seen, ctx, 'the endpoint runs inside the request store')
  t.match(lines, [
    { event: 'request_started', method: 'GET', path: '/things/7', request_id: ctx.requestId },
    { event: 'request_completed', level: 'info', route: '/things/{id}', status: 201, duration_ms: Number, request_id: ctx.requestId },
  ])
})

t.test('an async 5xx with an error is logged at error level with the error', async (t) => {
  const { lines, layer } = setup()
  const boom = new Error('db down')
  const handler: Handler = layer(
    async () => ({ kind: 'problem', status: 500, problem: { type: 't', title: 'x', status: 500, detail: 'd' }, error: boom }),
    route,
  )
  await handler(makeCtx())
  t.match(lines[1], { level: 'error', status: 500, error: { type: 'Error', message: 'db down', stack: String } })
})

t.test('a 5xx without an error is logged at error level without one', async (t) => {
  const { lines, layer } = setup()
  layer(() => ({ kind: 'json', status: 503 }), route)(makeCtx())
  t.match(lines[1], { level: 'error', status: 503 })
  t.notOk('error' in (lines[1] ?? {}))
})

t.test('a deliberate 5xx problem (an HttpError) is logged at error level with its problem type and detail', async (t) => {
  const { lines, layer } = setup()
  const problem = { type: 'urn:svc:problem:upstream-unavailable', title: 'Service Unavailable', status: 503, detail: 'every rate upstream failed' }
  layer(() => ({ kind: 'problem', status: 503, problem }), route)(makeCtx())
  t.match(lines[1], { level: 'error', status: 503, problem: { type: 'urn:svc:problem:upstream-unavailable', detail: 'every rate upstream failed' } })
  t.notOk('error' in (lines[1] ?? {}), 'nothing was thrown')
  layer(() => ({ kind: 'problem', status: 404, problem: { ...problem, status: 404 } }), route)(makeCtx())
  t.notOk('problem' in (lines[3] ?? {}), 'a 4xx line stays short')
})

t.test('at level error, only 5xx requests are logged, sync or async', async (t) => {
  const { lines, layer } = setup('error')
  layer(() => ({ kind: 'json', status: 200 }), route)(makeCtx())
  layer(() => ({ kind: 'json', status: 502 }), route)(makeCtx('GET', '/things/1'))
  await layer(async () => ({ kind: 'json', status: 503 }), route)(makeCtx('GET', '/things/2'))
  await layer(async () => ({ kind: 'json', status: 200 }), route)(makeCtx())
  t.match(lines, [
    { event: 'request_completed', level: 'error', status: 502, path: '/things/1', method: 'GET', route: '/things/{id}' },
    { event: 'request_completed', level: 'error', status: 503, path: '/things/2' },
  ])
  t.equal(lines.length, 2)
})

t.test('with request lines below the level, only the request store is entered', async (t) => {
  const { lines, layer } = setup('error')
  let seen: unknown
  const ctx = makeCtx()
  layer((_c) => {
    seen = requestStore.getStore()
    return { kind: 'json', status: 200 }
  }, route)(ctx)
  t.equal(seen, ctx)
  t.same(lines, [])
})

t.test('durations are written in milliseconds with three decimals', async (t) => {
  const { milliseconds } = await import('../../lib/layers/logging.js')
  t.same([0, 0.0004, 0.0005, 0.001, 0.012, 0.1234, 1, 12.3456, 1500.5].map(milliseconds), [
    '0.000',
    '0.000',
    '0.001',
    '0.001',
    '0.012',
    '0.123',
    '1.000',
    '12.346',
    '1500.500',
  ])
  t.equal(JSON.parse(`{"d":${milliseconds(2.5)}}`).d, 2.5, 'still a JSON number')
})

t.test("a probe's 503 stays at the probe's level; an exception in a probe is still an error", async (t) => {
  const probe: RouteInfo = { ...route, template: '/ready', requestLogLevel: 'debug', isOperational: true }
  const quiet = setup('info')
  quiet.layer(() => ({ kind: 'json', status: 503 }), probe)(makeCtx('GET', '/ready'))
  t.same(quiet.lines, [], 'not ready is an answer: nothing at info')
  const verbose = setup('debug')
  verbose.layer(() => ({ kind: 'json', status: 503 }), probe)(makeCtx('GET', '/ready'))
  t.match(verbose.lines[1], { event: 'request_completed', level: 'debug', status: 503 })
  const broken = setup('info')
  broken.layer(
    () => ({ kind: 'problem', status: 500, problem: { type: 't', title: 'x', status: 500, detail: 'd' }, error: new Error('probe broke') }),
    probe,
  )(makeCtx('GET', '/ready'))
  t.match(broken.lines, [{ event: 'request_completed', level: 'error', status: 500, error: { message: 'probe broke' } }])
})
