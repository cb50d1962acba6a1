// The headers every answer carries, written in one place: the defaults, in wire order, with the
// reply's own headers winning.
import t from 'tap'
import { bodyHeaders, emptyHeaders, JSON_TYPE, RAW_DEFAULT_HEADERS, SSE_TYPE, streamHeaders, TEXT_TYPE, withExtra } from '../../lib/server/headers.js'

t.test('an answer with a body: its type and length, then the defaults, in that order', async (t) => {
  const headers = bodyHeaders(JSON_TYPE, 12, 'req-1', undefined)
  t.same(Object.entries(headers), [
    ['content-type', 'application/json'],
    ['content-length', 12],
    ['x-request-id', 'req-1'],
    ['x-content-type-options', 'nosniff'],
    ['cache-control', 'no-store'],
  ])
  t.equal(TEXT_TYPE, 'text/plain; charset=utf-8')
})

t.test("the reply's own headers win over the defaults and add to them", async (t) => {
  const headers = bodyHeaders(TEXT_TYPE, 2, 'req-2', { 'cache-control': 'max-age=60', etag: '"x"' })
  t.equal(headers['cache-control'], 'max-age=60')
  t.equal(headers['etag'], '"x"')
  t.equal(headers['x-content-type-options'], 'nosniff')
  const given = {}
  t.equal(withExtra(given, undefined), given, 'no extra: the same object back')
})

t.test('an answer without a body carries the defaults alone', async (t) => {
  t.same(emptyHeaders('req-3', undefined), { 'x-request-id': 'req-3', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' })
  t.same(emptyHeaders('req-3', { etag: '"e"' }), { 'x-request-id': 'req-3', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', etag: '"e"' })
})

t.test('a stream is event-stream and no-cache', async (t) => {
  t.same(streamHeaders('req-4', undefined), {
    'content-type': SSE_TYPE,
    'cache-control': 'no-cache',
    'x-request-id': 'req-4',
    'x-content-type-options': 'nosniff',
  })
  t.equal(SSE_TYPE, 'text/event-stream; charset=utf-8')
})

t.test('the raw defaults, for a refusal written to the socket, are the same two headers', async (t) => {
  t.equal(RAW_DEFAULT_HEADERS, 'X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n')
})
