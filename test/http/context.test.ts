import t from 'tap'
import { makeCtx } from '../fixtures/ctx.js'

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
