// GET /api/external-data?currency=XXX: the latest BTC rate in one currency, from a third-party API
// (lib/rates/), with Cache-Status saying whether it came from the cache, an upstream, or stale.
import type { Ctx } from '../http/context.js'
import { HttpError } from '../http/errors.js'
import type { Handler, Reply } from '../pipeline.js'
import { CACHE_STATUS, type Lookup } from '../rates/cache.js'
import { UNSUPPORTED, type Answer, type Rates } from '../rates/rates.js'

export const DEFAULT_CURRENCY = 'USD'
const CURRENCY = /^[A-Za-z]{3}$/

// The code is constant: one error, built once, answers every malformed currency.
const INVALID_CURRENCY = new HttpError(400, 'INVALID_PARAMETER', 'currency must be three letters (ISO 4217), e.g. USD', { extra: { parameter: 'currency' } })

// One frozen header object per Cache-Status value, so a reply allocates none.
const HEADERS: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(Object.values(CACHE_STATUS).map((status) => [status, Object.freeze({ 'cache-status': status })]))

const toReply = (found: Lookup<Answer>, currency: string): Reply => {
  const headers = HEADERS.get(found.cacheStatus) as Readonly<Record<string, string>>
  if (found.value === UNSUPPORTED) throw new HttpError(404, 'UNSUPPORTED_CURRENCY', `unsupported currency: no upstream quotes BTC in ${currency}`, { headers })
  return { status: 200, headers, body: found.value }
}

export const getExternalData = (rates: Rates): Handler => (ctx: Ctx) => {
  const raw = ctx.query.get('currency')
  if (raw !== null && !CURRENCY.test(raw)) throw INVALID_CURRENCY
  const currency = raw === null ? DEFAULT_CURRENCY : raw.toUpperCase()
  const found = rates.latest(currency, ctx.traceContext)
  // A fresh rate is answered synchronously (STYLE: keep sync handlers sync).
  return found instanceof Promise ? found.then((f) => toReply(f, currency)) : toReply(found, currency)
}
