// GET /api/external-data as a pure handler over a stand-in rate source: the currency read and
// checked, a fresh rate answered synchronously, Cache-Status on every answer, and what the
// upstreams fail with turned into its problem.
import t from 'tap'
import { HttpError } from '../../lib/core/http/errors.js'
import type { Reply } from '../../lib/core/pipeline.js'
import { EXTERNAL_DATA_DOC, getExternalData } from '../../lib/endpoints/external-data.js'
import { CACHE_STATUS, type Lookup } from '../../lib/rates/cache.js'
import type { Answer, Rate } from '../../lib/rates/rates.js'
import { UpstreamError } from '../../lib/rates/upstream-error.js'
import { makeCtx } from '../fixtures/ctx.js'

const rate = (currency: string): Rate => ({ symbol: 'BTC', currency, value: 59010.25, timestamp: '2026-11-22T06:00:00.000Z', source: 'coingecko' })

/** A rate source answering `answer` for every currency, and noting the currencies it was asked for. */
const source = (answer: (currency: string) => Lookup<Answer> | Promise<Lookup<Answer>>) => {
  const asked: string[] = []
  const handler = getExternalData({
    latest: (currency) => {
      asked.push(currency)
      return answer(currency)
    },
  })
  return { handler, asked }
}

const fresh = (currency: string): Lookup<Answer> => ({ value: { ok: true, value: rate(currency) }, cacheStatus: CACHE_STATUS.hit })

t.test('a fresh rate is answered synchronously, with its Cache-Status', async (t) => {
  const { handler, asked } = source(fresh)
  const reply = handler(makeCtx('GET', '/api/external-data?currency=eur')) as Reply
  t.notOk(reply instanceof Promise)
  t.same(reply, { kind: 'json', status: 200, headers: { 'cache-status': 'svc; hit' }, body: rate('EUR') })
  t.same(asked, ['EUR'], 'asked in upper case')
})

t.test('no currency, or an empty one, is USD', async (t) => {
  const { handler, asked } = source(fresh)
  handler(makeCtx('GET', '/api/external-data'))
  handler(makeCtx('GET', '/api/external-data?currency='))
  t.same(asked, ['USD', 'USD'])
})

t.test('a currency that is not three letters is a 400 naming the parameter, and no upstream is asked', async (t) => {
  const { handler, asked } = source(fresh)
  for (const currency of ['EU', 'EURO', 'E1R', '%C3%A9ur']) {
    t.throws(() => handler(makeCtx('GET', `/api/external-data?currency=${currency}`)), {
      status: 400,
      code: 'INVALID_PARAMETER',
      extra: { parameter: 'currency' },
    })
  }
  t.same(asked, [])
})

t.test('a rate loaded from an upstream is answered when it arrives', async (t) => {
  const { handler } = source(async (currency) => ({ value: { ok: true, value: rate(currency) }, cacheStatus: CACHE_STATUS.missStored }))
  const reply = await handler(makeCtx('GET', '/api/external-data?currency=GBP'))
  t.match(reply, { status: 200, headers: { 'cache-status': 'svc; fwd=miss; stored' }, body: { currency: 'GBP' } })
})

t.test('a currency nobody quotes is a 404 with its Cache-Status', async (t) => {
  const { handler } = source(() => ({ value: { ok: false, reason: 'unsupported currency' }, cacheStatus: CACHE_STATUS.hit }))
  t.throws(() => handler(makeCtx('GET', '/api/external-data?currency=XYZ')), {
    status: 404,
    code: 'UNSUPPORTED_CURRENCY',
    message: 'unsupported currency: no upstream quotes BTC in XYZ',
    headers: { 'cache-status': 'svc; hit' },
  })
})

t.test("the upstreams' failure becomes its HTTP problem", async (t) => {
  const { handler } = source(() => Promise.reject(new UpstreamError('UPSTREAM_TIMEOUT', 'coingecko timed out after 2000 ms')))
  const failure = await (handler(makeCtx('GET', '/api/external-data')) as Promise<Reply>).catch((error: unknown) => error)
  t.type(failure, HttpError)
  t.match(failure, { status: 504, code: 'UPSTREAM_TIMEOUT' })
})

t.test('the document lists every answer the handler gives', async (t) => {
  t.same(Object.keys(EXTERNAL_DATA_DOC.responses), ['200', '400', '404', '502', '504'])
})
