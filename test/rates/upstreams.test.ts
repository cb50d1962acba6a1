import t from 'tap'
import { coinbase, coingecko, INVALID, NOT_QUOTED } from '../../lib/rates/upstreams.js'

const RECEIVED = Date.parse('2026-11-22T07:00:00.000Z')

t.test('coingecko asks simple price for one lower-case currency under the base path', async (t) => {
  t.equal(
    coingecko(new URL('https://api.coingecko.com/api/v3')).url('EUR').href,
    'https://api.coingecko.com/api/v3/simple/price?ids=bitcoin&vs_currencies=eur&include_last_updated_at=true',
  )
  t.equal(
    coingecko(new URL('http://mirror:8080/cg/')).url('USD').href,
    'http://mirror:8080/cg/simple/price?ids=bitcoin&vs_currencies=usd&include_last_updated_at=true',
  )
})

t.test('coinbase asks for every BTC rate at once under the base path', async (t) => {
  const upstream = coinbase(new URL('https://api.coinbase.com'))
  t.equal(upstream.url('EUR').href, 'https://api.coinbase.com/v2/exchange-rates?currency=BTC')
  t.equal(coinbase(new URL('http://mirror/cb/')).url('USD').href, 'http://mirror/cb/v2/exchange-rates?currency=BTC')
})

const GECKO_CASES: ReadonlyArray<readonly [string, unknown, unknown]> = [
  ['a quote with its update time', { bitcoin: { usd: 64012.5, last_updated_at: 1795327200 } }, { value: 64012.5, timestamp: '2026-11-22T06:00:00.000Z' }],
  ['a quote without an update time, as of receipt', { bitcoin: { usd: 1 } }, { value: 1, timestamp: '2026-11-22T07:00:00.000Z' }],
  ['a quote with a nonsense update time, as of receipt', { bitcoin: { usd: 2, last_updated_at: 'soon' } }, { value: 2, timestamp: '2026-11-22T07:00:00.000Z' }],
  ['a currency it does not quote', { bitcoin: { last_updated_at: 1795327200 } }, NOT_QUOTED],
  ['a price as a string', { bitcoin: { usd: '64012.5' } }, INVALID],
  ['a zero price', { bitcoin: { usd: 0 } }, INVALID],
  ['a negative price', { bitcoin: { usd: -5 } }, INVALID],
  ['no bitcoin member', { status: { error_code: 429 } }, INVALID],
  ['an array', [1, 2], INVALID],
  ['null', null, INVALID],
]
for (const [name, json, expected] of GECKO_CASES) {
  t.test(`coingecko reads ${name}`, async (t) => {
    t.same(coingecko(new URL('http://x')).read(json, 'USD', RECEIVED), expected)
  })
}

const BASE_CASES: ReadonlyArray<readonly [string, unknown, unknown]> = [
  ['a decimal string, as of receipt', { data: { currency: 'BTC', rates: { USD: '64012.50' } } }, { value: 64012.5, timestamp: '2026-11-22T07:00:00.000Z' }],
  ['a number', { data: { currency: 'BTC', rates: { USD: 3 } } }, { value: 3, timestamp: '2026-11-22T07:00:00.000Z' }],
  ['a currency it does not quote', { data: { currency: 'BTC', rates: { EUR: '1' } } }, NOT_QUOTED],
  ['rates of another base currency', { data: { currency: 'ETH', rates: { USD: '1' } } }, INVALID],
  ['a non-numeric rate', { data: { currency: 'BTC', rates: { USD: 'n/a' } } }, INVALID],
  ['an exponent rate', { data: { currency: 'BTC', rates: { USD: '1e400' } } }, INVALID],
  ['a zero rate', { data: { currency: 'BTC', rates: { USD: '0.00' } } }, INVALID],
  ['an infinite rate', { data: { currency: 'BTC', rates: { USD: Number.POSITIVE_INFINITY } } }, INVALID],
  ['no rates', { data: { currency: 'BTC' } }, INVALID],
  ['an error body', { errors: [{ id: 'not_found' }] }, INVALID],
  ['a string', 'BTC', INVALID],
]
for (const [name, json, expected] of BASE_CASES) {
  t.test(`coinbase reads ${name}`, async (t) => {
    t.same(coinbase(new URL('http://x')).read(json, 'USD', RECEIVED), expected)
  })
}
