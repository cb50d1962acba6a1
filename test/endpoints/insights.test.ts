// The insights endpoint as a pure function: parameters, the stream limit, and the generator under
// a stand-in response whose `close` the test emits and a `closing` signal the test aborts.
import { EventEmitter, getEventListeners } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { HttpError } from '../../lib/core/http/errors.js'
import { createStreamLimit, getInsights, parseCount, parseInterval, RECONNECT_MS, SHUTDOWN_EVENT } from '../../lib/endpoints/insights.js'
import type { Figures } from '../../lib/insights/figures.js'
import type { StreamReply } from '../../lib/core/pipeline.js'
import { makeCtx } from '../fixtures/ctx.js'

const FIGURES: Figures = { read: async (i) => ({ metric: `m${i}`, value: i * 10, unit: 'things' }) }

/** A context over a stand-in response the test holds: emitting its `close` aborts ctx.signal. */
const withResponse = (method: string, url: string): { ctx: Ctx; res: EventEmitter } => {
  const res = new EventEmitter()
  return { ctx: new Ctx({ method, url, headers: {}, rawHeaders: [] } as unknown as IncomingMessage, res as unknown as ServerResponse, 1024), res }
}

const setup = (max = 2, figures: Figures = FIGURES) => {
  const limit = createStreamLimit(max)
  const closing = new AbortController()
  const handler = getInsights({ figures, limit, closing: closing.signal })
  const open = (query = '', method = 'GET') => {
    const { ctx, res } = withResponse(method, `/api/insights${query}`)
    const reply = handler(ctx) as StreamReply
    return { ctx, res, reply, iterator: reply.stream[Symbol.asyncIterator]() }
  }
  return { limit, handler, open, closing }
}

const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length

t.test('count: an integer from 1 to 20, 5 when missing', async (t) => {
  t.equal(parseCount(null), 5)
  for (const [raw, n] of [
    ['1', 1],
    ['20', 20],
    ['07', 7],
  ] as const)
    t.equal(parseCount(raw), n, raw)
  for (const raw of ['0', '21', '2.5', '5.0', '-1', 'abc', '', ' 5', '1e1', '0x5'])
    t.throws(() => parseCount(raw), { status: 400, code: 'INVALID_PARAMETER', message: 'count must be an integer from 1 to 20' }, raw)
})

t.test('interval: seconds from 0 to 10, fractions allowed, 1 when missing; milliseconds out', async (t) => {
  t.equal(parseInterval(null), 1000)
  for (const [raw, ms] of [
    ['0', 0],
    ['0.25', 250],
    ['.5', 500],
    ['2.', 2000],
    ['10', 10_000],
    ['0.0004', 0],
  ] as const)
    t.equal(parseInterval(raw), ms, raw)
  for (const raw of ['-1', '10.5', '11', 'abc', '', 'NaN', 'Infinity', '1e0', ' 1']) {
    t.throws(() => parseInterval(raw), { status: 400, code: 'INVALID_PARAMETER', message: 'interval must be a number of seconds from 0 to 10, e.g. 0.5' }, raw)
  }
})

t.test('bad parameters are thrown before any stream exists or any slot is taken', async (t) => {
  const { handler, limit } = setup()
  for (const query of ['?count=0', '?interval=x', '?count=3&interval=99']) {
    const error = t.throws(() => handler(makeCtx('GET', `/api/insights${query}`))) as HttpError
    t.type(error, HttpError)
    t.match(error.extra, { parameter: /count|interval/ })
  }
  t.equal(limit.active(), 0)
})

t.test('the reply is a stream with X-Accel-Buffering: no, and the events are numbered JSON', async (t) => {
  const { open, limit } = setup()
  const { ctx, reply } = open('?count=3&interval=0')
  t.equal(reply.status, 200)
  t.same(reply.headers, { 'x-accel-buffering': 'no' })
  t.equal(limit.active(), 1)
  const chunks: string[] = []
  for await (const chunk of reply.stream) chunks.push(chunk)
  t.equal(chunks.length, 3)
  chunks.forEach((chunk, i) => {
    t.match(chunk, /^data: \{.*\}\n\n$/)
    const event = JSON.parse(chunk.slice('data: '.length)) as Record<string, unknown>
    t.same(Object.keys(event), ['seq', 'count', 'timestamp', 'metric', 'value', 'unit', 'request_id'])
    t.match(event, { seq: i + 1, count: 3, metric: `m${i}`, value: i * 10, unit: 'things', request_id: ctx.requestId })
    t.match(event['timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })
  t.equal(limit.active(), 0, 'the slot is released when the stream ends')
})

t.test('beyond the limit: 503 TOO_MANY_STREAMS with Retry-After; a slot frees when a stream ends', async (t) => {
  const { open, handler, limit } = setup(1)
  const first = open('?count=1&interval=0')
  const error = t.throws(() => handler(makeCtx('GET', '/api/insights'))) as HttpError
  t.same([error.status, error.code, error.headers], [503, 'TOO_MANY_STREAMS', { 'retry-after': '5' }])
  for await (const _ of first.reply.stream);
  t.equal(limit.active(), 0)
  t.doesNotThrow(() => open('?count=1'))
})

t.test('the limit releases each slot once, however often release is called', async (t) => {
  const limit = createStreamLimit(2)
  const a = limit.acquire() as () => void
  limit.acquire()
  t.equal(limit.acquire(), undefined)
  a()
  a()
  t.equal(limit.active(), 1)
})

/** Waiting `intervalS` seconds for the second event: a timer pending and a `next()` that waits on it. */
const waiting = async (t: Test, intervalS: number) => {
  const { open, limit, closing } = setup()
  const { res, iterator } = open(`?count=20&interval=${intervalS}`)
  t.match(await iterator.next(), { done: false })
  const baseline = timers()
  const pending = iterator.next()
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(timers(), baseline + 1, `waiting ${intervalS} s for the next event`)
  return { res, iterator, pending, baseline, limit, closing }
}

t.test('a client that leaves during the wait ends the stream at once: no timer left, slot released', async (t) => {
  const intervalS = 10
  const { res, pending, baseline, limit } = await waiting(t, intervalS)
  const left = performance.now()
  res.emit('close')
  t.same(await pending, { done: true, value: undefined }, 'the stream ends instead of failing')
  // Well before the interval would end: half of it is slack for a loaded machine.
  t.ok(performance.now() - left < (intervalS * 1000) / 2, 'at once, not after the interval')
  t.equal(timers(), baseline, 'the timer is gone')
  t.equal(limit.active(), 0)
})

t.test('a stream never iterated (HEAD, a client gone first) releases its slot when the response closes', async (t) => {
  const { open, limit } = setup(1)
  const { res, iterator } = open('?count=3', 'HEAD')
  t.equal(limit.active(), 1)
  // What the server does for HEAD: return() without next(), so the generator's finally never runs.
  await iterator.return?.(undefined)
  t.equal(limit.active(), 1)
  res.emit('close')
  t.equal(limit.active(), 0)
})

t.test('a figure that fails is not mistaken for a disconnect: the error propagates, the slot is released', async (t) => {
  const broken: Figures = { read: async () => Promise.reject(new Error('registry gone')) }
  const { open, limit } = setup(2, broken)
  const { iterator } = open('?count=2&interval=0')
  await t.rejects(iterator.next(), { message: 'registry gone' })
  t.equal(limit.active(), 0)
})

t.test('when the listener closes during the wait, the stream ends at once with the shutdown event', async (t) => {
  const intervalS = 10
  const { iterator, pending, baseline, limit, closing } = await waiting(t, intervalS)
  const closed = performance.now()
  closing.abort()
  t.same(await pending, { done: false, value: SHUTDOWN_EVENT }, 'the shutdown event comes next')
  t.ok(performance.now() - closed < (intervalS * 1000) / 2, 'at once, not after the interval')
  t.same(await iterator.next(), { done: true, value: undefined }, 'and it is the last')
  t.equal(SHUTDOWN_EVENT, `event: shutdown\nretry: ${RECONNECT_MS}\ndata: {"reason":"shutdown","retry_ms":${RECONNECT_MS}}\n\n`)
  t.equal(timers(), baseline, 'the timer is gone')
  t.equal(limit.active(), 0)
  t.equal(getEventListeners(closing.signal, 'abort').length, 0, 'no listener left on the closing signal')
})

t.test('a stream that starts once the listener has closed sends the shutdown event alone', async (t) => {
  const { open, limit, closing } = setup()
  closing.abort()
  const chunks: string[] = []
  for await (const chunk of open('?count=3&interval=0').reply.stream) chunks.push(chunk)
  t.same(chunks, [SHUTDOWN_EVENT])
  t.equal(limit.active(), 0)
})

t.test('a stream that ends, or whose client leaves, leaves no listener on the closing signal', async (t) => {
  const { open, closing } = setup()
  for await (const _ of open('?count=2&interval=0').reply.stream);
  const { res, iterator } = open('?count=2&interval=10')
  await iterator.next()
  const pending = iterator.next()
  t.equal(getEventListeners(closing.signal, 'abort').length, 1, 'one listener while a stream is open')
  res.emit('close')
  await pending
  t.equal(getEventListeners(closing.signal, 'abort').length, 0)
})
