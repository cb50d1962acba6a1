// GET /api/external-data?currency=XXX: the latest BTC rate in one currency, from a third-party API
// (lib/rates/), with Cache-Status saying whether it came from the cache, an upstream, or stale.
import { RATE_PROVIDERS } from '../config/config.js'
import type { Ctx } from '../core/http/context.js'
import { HttpError } from '../core/http/errors.js'
import { Type } from 'typebox'
import { HEADERS as DOC_HEADERS, json, named, openEnum, problem, problemExample, schemasOf, type BodyOf, type RouteDoc } from '../core/route-doc.js'
import type { Handler, Reply } from '../core/pipeline.js'
import { CACHE_STATUS, type Lookup } from '../rates/cache.js'
import type { Answer, Rates } from '../rates/rates.js'
import { rethrowAsHttp } from './problems.js'

export const DEFAULT_CURRENCY = 'USD'

const RATE = named(
  'Rate',
  Type.Object({
    symbol: Type.Literal('BTC'),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    value: Type.Number({ exclusiveMinimum: 0, description: 'The price of one BTC in `currency`' }),
    timestamp: Type.String({
      format: 'date-time',
      description: 'When the upstream last updated the rate, or when it was received if the upstream gives no time',
    }),
    source: openEnum(RATE_PROVIDERS, { description: 'The upstream that answered' }),
  }),
)
/** The body of a rate: lib/rates/ answers it as it is. */
export type RateBody = BodyOf<typeof RATE.schema>
const CURRENCY = /^[A-Za-z]{3}$/

// The code is constant: one error, built once, answers every malformed currency.
const INVALID_CURRENCY = new HttpError(400, 'INVALID_PARAMETER', 'currency must be three letters (ISO 4217), e.g. USD', { extra: { parameter: 'currency' } })

// One frozen header object per Cache-Status value, so a reply allocates none.
const HEADERS: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(
  Object.values(CACHE_STATUS).map((status) => [status, Object.freeze({ 'cache-status': status })]),
)

const toReply = (found: Lookup<Answer>, currency: string): Reply => {
  const headers = HEADERS.get(found.cacheStatus) as Readonly<Record<string, string>>
  if (!found.value.ok) throw new HttpError(404, 'UNSUPPORTED_CURRENCY', `unsupported currency: no upstream quotes BTC in ${currency}`, { headers })
  return { kind: 'json', status: 200, headers, body: found.value.value satisfies RateBody }
}

export const getExternalData =
  (rates: Rates): Handler =>
  (ctx: Ctx) => {
    const raw = ctx.query.get('currency')
    // An empty `currency=` is no currency, as a blank form field is: the default, as documented.
    const isDefault = raw === null || raw === ''
    if (!isDefault && !CURRENCY.test(raw)) throw INVALID_CURRENCY
    const currency = isDefault ? DEFAULT_CURRENCY : raw.toUpperCase()
    const found = rates.latest(currency, ctx.traceContext)
    // A fresh rate is answered synchronously (lib/STYLE.md: keep sync handlers sync).
    return found instanceof Promise ? found.then((f) => toReply(f, currency), rethrowAsHttp) : toReply(found, currency)
  }

const PATH = '/api/external-data'

export const EXTERNAL_DATA_DOC: RouteDoc = {
  operationId: 'getExternalData',
  summary: 'The latest BTC rate',
  description:
    'The latest BTC price in one currency, from CoinGecko then Coinbase (SVC_RATE_PROVIDERS), cached per currency for SVC_RATE_CACHE_TTL_MS; ' +
    'when every upstream fails, a cached rate up to SVC_RATE_STALE_MS old still answers. `Cache-Status` says which happened.',
  tags: ['rates'],
  parameters: [
    {
      name: 'currency',
      in: 'query',
      description: 'An ISO 4217 code, three letters in any case; the answer says it in upper case. Absent or empty: USD',
      schema: { type: 'string', pattern: '^[A-Za-z]{3}$', default: DEFAULT_CURRENCY },
      example: 'EUR',
    },
  ],
  responses: {
    '200': json('The rate', RATE.ref, {
      headers: { 'Cache-Status': DOC_HEADERS.cacheStatus },
      example: { symbol: 'BTC', currency: 'EUR', value: 59010.25, timestamp: '2026-11-22T06:00:00.000Z', source: 'coingecko' } satisfies RateBody,
    }),
    '400': problem('`currency` is not three letters', {
      invalid: problemExample('A malformed currency', 400, 'INVALID_PARAMETER', INVALID_CURRENCY.message, PATH, { parameter: 'currency' }),
    }),
    '404': problem(
      'Every upstream answered that it does not quote the currency',
      { unsupported: problemExample('Nobody quotes it', 404, 'UNSUPPORTED_CURRENCY', 'unsupported currency: no upstream quotes BTC in XYZ', PATH) },
      { 'Cache-Status': DOC_HEADERS.cacheStatus },
    ),
    '502': problem('No upstream gave a rate, and at least one failed otherwise than by a timeout', {
      failed: problemExample(
        'Upstreams failing',
        502,
        'BAD_UPSTREAM',
        'No upstream answered with a rate: coingecko answered HTTP 503; coinbase timed out after 2000 ms',
        PATH,
      ),
    }),
    '504': problem('No upstream gave a rate, and every failure was a timeout', {
      timeout: problemExample(
        'Upstreams too slow',
        504,
        'UPSTREAM_TIMEOUT',
        'No upstream answered with a rate: coingecko timed out after 2000 ms; coinbase timed out after 2000 ms',
        PATH,
      ),
    }),
  },
  schemas: schemasOf([RATE]),
}
