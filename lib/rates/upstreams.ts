// The two public BTC exchange-rate APIs GET /api/external-data asks, each reduced to the request
// it sends and a strict reader of its reply. Both are pure: the client does the I/O.
import { isObject } from '../core/json.js'
import type { RateProviderName } from '../config/config.js'

/** One BTC price as an upstream quoted it. */
export type Quote = Readonly<{ value: number; timestamp: string }>

/** The currency is not one this upstream quotes: an answer, not a failure. */
export const NOT_QUOTED = Symbol('not quoted')
/** The reply is not the upstream's format (wrong JSON, a missing or non-positive rate). */
export const INVALID = Symbol('invalid reply')
export type Reading = Quote | typeof NOT_QUOTED | typeof INVALID

export type Upstream = Readonly<{
  name: RateProviderName
  /** The request URL for one currency (upper-case ISO 4217 code). */
  url(currency: string): URL
  /** Reads the parsed JSON body; `receivedAt` (ms since the epoch) stands in for a missing time. */
  read(json: unknown, currency: string, receivedAt: number): Reading
}>

const DECIMAL = /^\d+(?:\.\d+)?$/

/** A price is a positive finite number, or its decimal string (Coinbase sends strings). */
const price = (raw: unknown): number | undefined => {
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : Number.NaN
  return Number.isFinite(value) && value > 0 ? value : undefined
}

/** `base` + `path`, keeping a base path such as CoinGecko's `/api/v3`. */
const under = (base: URL, path: string): URL => new URL(`${base.pathname.replace(/\/$/, '')}${path}`, base)

/**
 * CoinGecko simple price: `GET /simple/price?ids=bitcoin&vs_currencies=usd&include_last_updated_at=true`
 * answers `{"bitcoin":{"usd":64012.5,"last_updated_at":1795300000}}`, and `{"bitcoin":{}}` for a
 * currency it does not quote.
 */
export const coingecko = (base: URL): Upstream => {
  const endpoint = under(base, '/simple/price')
  return {
    name: 'coingecko',
    url: (currency) => {
      const url = new URL(endpoint)
      url.search = `ids=bitcoin&vs_currencies=${currency.toLowerCase()}&include_last_updated_at=true`
      return url
    },
    read: (json, currency, receivedAt) => {
      const bitcoin = isObject(json) ? json['bitcoin'] : undefined
      if (!isObject(bitcoin)) return INVALID
      const raw = bitcoin[currency.toLowerCase()]
      if (raw === undefined) return NOT_QUOTED
      const value = typeof raw === 'number' ? price(raw) : undefined
      if (value === undefined) return INVALID
      const updated = bitcoin['last_updated_at']
      const at = typeof updated === 'number' && Number.isFinite(updated) && updated > 0 ? updated * 1000 : receivedAt
      return { value, timestamp: new Date(at).toISOString() }
    },
  }
}

/**
 * Coinbase exchange rates: `GET /v2/exchange-rates?currency=BTC` answers
 * `{"data":{"currency":"BTC","rates":{"USD":"64012.50",…}}}` with every currency it quotes, as
 * decimal strings, and no time: the rate is as of its receipt.
 */
export const coinbase = (base: URL): Upstream => {
  const endpoint = under(base, '/v2/exchange-rates')
  endpoint.search = 'currency=BTC'
  return {
    name: 'coinbase',
    url: () => endpoint,
    read: (json, currency, receivedAt) => {
      const data = isObject(json) ? json['data'] : undefined
      if (!isObject(data) || data['currency'] !== 'BTC' || !isObject(data['rates'])) return INVALID
      const raw = data['rates'][currency]
      if (raw === undefined) return NOT_QUOTED
      const value = price(raw)
      return value === undefined ? INVALID : { value, timestamp: new Date(receivedAt).toISOString() }
    },
  }
}

export const UPSTREAMS: Readonly<Record<RateProviderName, (base: URL) => Upstream>> = { coingecko, coinbase }
