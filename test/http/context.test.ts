import { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import t from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { makeCtx, rethrow } from '../fixtures/ctx.js'

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
  const { payloadTooLarge } = await import('../../lib/core/http/errors.js')
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
