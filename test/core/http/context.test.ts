import { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import t from 'tap'
import { Ctx } from '../../../lib/core/http/context.js'
import { makeCtx, rethrow } from '../../fixtures/ctx.js'

t.test('the path and query are split without parsing the query until asked', async (t) => {
  const ctx = makeCtx('GET', '/a/b?x=1&y=%20')
  t.equal(ctx.path, '/a/b')
  t.equal(ctx.rawQuery, 'x=1&y=%20')
  t.equal(ctx.query.get('y'), ' ')
  t.equal(ctx.query, ctx.query, 'parsed once')
  t.equal(makeCtx('GET', '/a').rawQuery, '')
})

t.test('a header given twice reads as one comma-joined value', async (t) => {
  const ctx = makeCtx('GET', '/', { 'set-cookie': ['a=1', 'b=2'], accept: 'text/plain' })
  t.equal(ctx.header('set-cookie'), 'a=1, b=2')
  t.equal(ctx.header('accept'), 'text/plain')
  t.equal(ctx.header('missing'), undefined)
})

t.test('each context gets its own request id and start time', async (t) => {
  const a = makeCtx()
  const b = makeCtx()
  t.not(a.requestId, b.requestId)
  t.ok(b.startTime >= a.startTime)
})

t.test('written hooks: none is a no-op; one, two or more all run once, in the order added, with the error', async (t) => {
  makeCtx().replyWritten(new Error('nobody listens'), rethrow)
  for (const count of [1, 2, 3]) {
    const ctx = makeCtx()
    const calls: Array<[number, unknown, boolean]> = []
    for (let i = 0; i < count; i++) ctx.whenWritten((c, error) => void calls.push([i, error, c === ctx]))
    const broke = new Error('socket gone')
    ctx.replyWritten(broke, rethrow)
    t.same(
      calls,
      Array.from({ length: count }, (_, i) => [i, broke, true]),
      `${count} hook(s)`,
    )
  }
})

t.test('a written hook that throws is handed to the failure handler, and the hooks after it still run', async (t) => {
  for (const [count, throwing] of [
    [1, 0],
    [3, 0],
    [3, 1],
    [3, 2],
  ] as const) {
    const ctx = makeCtx()
    const ran: number[] = []
    const failures: Array<[boolean, unknown]> = []
    const thrown = new RangeError(`hook ${throwing} broke`)
    for (let i = 0; i < count; i++) {
      ctx.whenWritten(() => {
        ran.push(i)
        if (i === throwing) throw thrown
      })
    }
    ctx.replyWritten(undefined, (c, error) => void failures.push([c === ctx, error]))
    const label = `hook ${throwing} of ${count} throws`
    t.same(
      ran,
      Array.from({ length: count }, (_, i) => i),
      `${label}: every hook ran`,
    )
    t.same(failures, [[true, thrown]], `${label}: its error, once, with the context`)
  }
})

t.test('a body over the limit is the one 413 the server answers for a declared length, error member included', async (t) => {
  const { payloadTooLarge } = await import('../../../lib/core/http/errors.js')
  const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers: {}, rawHeaders: [], pause() {} })
  const ctx = new Ctx(req as unknown as IncomingMessage, new EventEmitter() as unknown as ServerResponse, 4)
  const body = ctx.body()
  req.emit('data', Buffer.from('12345'))
  const error = await body.catch((e: unknown) => e)
  t.equal(error, payloadTooLarge(4), 'the same error, built once per limit')
  t.match(error, { status: 413, code: 'PAYLOAD_TOO_LARGE', extra: { error: 'Request body exceeds the limit of 4 bytes' } })
  t.ok(ctx.isBodyAbandoned)
  t.not(payloadTooLarge(5), payloadTooLarge(4))
})

/** A Ctx over a request that emits what the test says, with a limit of `limit` bytes. */
const bodyCtx = (limit: number, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
  const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers, rawHeaders: [], pause() {} })
  return { req, ctx: new Ctx(req as unknown as IncomingMessage, new EventEmitter() as unknown as ServerResponse, limit) }
}

t.test('the body read before the pipeline: done once, then json(), jsonNow() and body() answer from it', async (t) => {
  const { req, ctx } = bodyCtx(64)
  let calls = 0
  t.equal(ctx.isBodyRead, false)
  t.throws(() => ctx.jsonNow(), /jsonNow\(\) before the body was read/, 'a route that did not declare its body is told so')
  ctx.readBody(() => calls++)
  const chunk = Buffer.from('{"a":1}')
  req.emit('data', chunk)
  t.equal(calls, 0, 'not before the end')
  req.emit('end')
  req.emit('error', new Error('after the end'))
  t.equal(calls, 1, 'called once, whatever comes after')
  t.equal(ctx.isBodyRead, true)
  t.same(ctx.jsonNow(), { a: 1 })
  t.same(await ctx.json(), { a: 1 })
  t.equal(await ctx.body(), chunk, 'a body of one chunk is that chunk, not a copy')
})

t.test('a body read in several chunks is joined; an empty one is empty', async (t) => {
  const { req, ctx } = bodyCtx(64)
  ctx.readBody(() => {})
  req.emit('data', Buffer.from('[1,'))
  req.emit('data', Buffer.from('2]'))
  req.emit('end')
  t.same(ctx.jsonNow(), [1, 2])
  const empty = bodyCtx(64)
  empty.ctx.readBody(() => {})
  empty.req.emit('end')
  t.equal((await empty.ctx.body()).length, 0)
  t.throws(() => empty.ctx.jsonNow(), { status: 400, code: 'INVALID_JSON' })
})

t.test('a body read before the pipeline that fails: over the limit or cut short, each error from every reader', async (t) => {
  const { payloadTooLarge } = await import('../../../lib/core/http/errors.js')
  const large = bodyCtx(4)
  let calls = 0
  large.ctx.readBody(() => calls++)
  large.req.emit('data', Buffer.from('12345'))
  large.req.emit('error', new Error('the client left'))
  t.equal(calls, 1, 'called once: the 413, not the error after it')
  t.equal(large.ctx.isBodyRead, true)
  t.ok(large.ctx.isBodyAbandoned)
  t.throws(() => large.ctx.jsonNow(), payloadTooLarge(4))
  t.equal(await large.ctx.body().catch((e: unknown) => e), payloadTooLarge(4))

  const cut = bodyCtx(64)
  cut.ctx.readBody(() => {})
  cut.req.emit('data', Buffer.from('{"a"'))
  cut.req.emit('error', new Error('aborted'))
  t.ok(cut.ctx.isBodyAbandoned)
  t.throws(() => cut.ctx.jsonNow(), { status: 400, code: 'INCOMPLETE_BODY' })
  t.rejects(cut.ctx.json(), { status: 400, code: 'INCOMPLETE_BODY' })
})

t.test('the media type comes from the server’s pass over the head when it made one, else from the headers; 415 before any byte', async (t) => {
  const typed = bodyCtx(64, { 'content-type': 'text/plain' })
  t.equal(typed.ctx.hasJsonType, false, 'from req.headers when the head was not read')
  typed.ctx.contentType = 'application/problem+json; charset=utf-8'
  t.equal(typed.ctx.hasJsonType, true, 'what the head pass kept wins')
  const untyped = bodyCtx(64, {})
  t.equal(untyped.ctx.hasJsonType, false)
  t.throws(() => untyped.ctx.jsonNow(), { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: /got none/ }, 'refused before the body is asked for')
  const plain = bodyCtx(64, { 'content-type': 'text/plain' })
  plain.ctx.readBody(() => {})
  plain.req.emit('end')
  t.throws(() => plain.ctx.jsonNow(), { status: 415, message: /got "text\/plain"/ })
})
