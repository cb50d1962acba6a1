// The latest BTC rate per currency: the upstreams asked in the configured order (the first to quote
// answers), behind the single-flight cache with stale-if-error. An answer is a Result: the rate, or
// UNSUPPORTED; when no upstream answers at all, an UpstreamError (lib/README.md §7 for the errors).
import type { Context } from '@opentelemetry/api'
import type { RatesConfig } from '../config/config.js'
import { failed, succeeded, type Result } from '../core/result.js'
import type { Logger } from '../telemetry/logger.js'
import { createCache, type Lookup } from './cache.js'
import { createUpstreamClient, type UpstreamClient } from './client.js'
import type { UpstreamCells } from './upstream-metrics.js'
import { UpstreamError } from './upstream-error.js'
import { UPSTREAMS } from './upstreams.js'

export type Rate = Readonly<{ symbol: 'BTC'; currency: string; value: number; timestamp: string; source: string }>

/**
 * No upstream quotes the currency: cached like a rate, so unknown codes do not reach the upstreams.
 * One frozen failure, built once: answering it allocates nothing.
 */
export const UNSUPPORTED: Answer = Object.freeze(failed('unsupported currency' as const))
/** The rate, or UNSUPPORTED. */
export type Answer = Result<Rate, 'unsupported currency'>

export type Rates = Readonly<{
  /** `currency` is an upper-case three-letter code; `parent` the request's trace context. */
  latest(currency: string, parent: Context | undefined): Lookup<Answer> | Promise<Lookup<Answer>>
}>

export type RatesOptions = Readonly<{
  config: RatesConfig
  /** Each configured provider's series, created once with the app's registry. */
  metrics: ReadonlyMap<string, UpstreamCells>
  logger: Logger
  /** Monotonic milliseconds, for the cache. */
  now?: () => number
  /** Wall-clock milliseconds, for the time of a rate whose upstream gives none. */
  wallClock?: () => number
}>

/** Asks each upstream in turn; the first quote wins, and the failures decide between BAD_UPSTREAM and UPSTREAM_TIMEOUT. */
export const askInOrder =
  (clients: readonly UpstreamClient[]) =>
  async (currency: string, parent: Context | undefined): Promise<Answer> => {
    const outcomes: string[] = []
    let isEveryFailureTimeout = true
    let hasFailed = false
    for (const client of clients) {
      const attempt = await client.fetch(currency, parent)
      if (attempt.outcome === 'quoted')
        // Once per load, not per request: the cache hands this one answer to every request it serves.
        return Object.freeze(
          succeeded(Object.freeze({ symbol: 'BTC', currency, value: attempt.quote.value, timestamp: attempt.quote.timestamp, source: client.name })),
        )
      if (attempt.outcome === 'not_quoted') {
        outcomes.push(`${client.name} does not quote ${currency}`)
        continue
      }
      hasFailed = true
      isEveryFailureTimeout &&= attempt.isTimeout
      outcomes.push(`${client.name} ${attempt.reason}`)
    }
    // Unsupported only when every upstream said so: one that failed might have quoted it.
    if (!hasFailed) return UNSUPPORTED
    const detail = `No upstream answered with a rate: ${outcomes.join('; ')}`
    throw new UpstreamError(isEveryFailureTimeout ? 'UPSTREAM_TIMEOUT' : 'BAD_UPSTREAM', detail)
  }

export const createRates = ({ config, metrics, logger, now, wallClock }: RatesOptions): Rates => {
  const clients = config.providers.map((name) =>
    createUpstreamClient({
      upstream: UPSTREAMS[name](config.urls[name]),
      timeoutMs: config.timeoutMs,
      cells: metrics.get(name) as UpstreamCells,
      logger,
      ...(wallClock === undefined ? {} : { now: wallClock }),
    }),
  )
  const cache = createCache<Answer, Context | undefined>({
    ttlMs: config.cacheTtlMs,
    staleMs: config.staleMs,
    load: askInOrder(clients),
    ...(now === undefined ? {} : { now }),
  })
  return { latest: (currency, parent) => cache.lookup(currency, parent) }
}
