import { Registry } from 'prom-client'
import t from 'tap'
import { readConfig } from '../../lib/config/config.js'
import { HttpError } from '../../lib/core/http/errors.js'
import { toHttpError } from '../../lib/endpoints/problems.js'
import type { Attempt, UpstreamClient } from '../../lib/rates/client.js'
import { askInOrder, createRates, UNSUPPORTED } from '../../lib/rates/rates.js'
import { UpstreamError } from '../../lib/rates/upstream-error.js'
import { createUpstreamMetrics } from '../../lib/rates/upstream-metrics.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { fakeCoinbase } from '../fixtures/rate-upstreams.js'

const QUOTE: Attempt = { outcome: 'quoted', quote: { value: 64012.5, timestamp: '2026-11-22T06:00:00.000Z' } }
const NOT_QUOTED: Attempt = { outcome: 'not_quoted' }
const TIMEOUT: Attempt = { outcome: 'failed', isTimeout: true, reason: 'timed out after 2000 ms' }
const DOWN: Attempt = { outcome: 'failed', isTimeout: false, reason: 'answered HTTP 503' }

const stub = (name: string, attempt: Attempt, asked: string[]): UpstreamClient => ({
  name,
  fetch: async (currency) => {
    asked.push(`${name} ${currency}`)
    return attempt
  },
})

const ask = (primary: Attempt, fallback: Attempt) => {
  const asked: string[] = []
  return { asked, answer: askInOrder([stub('coingecko', primary, asked), stub('coinbase', fallback, asked)])('USD', undefined) }
}

t.test('the primary answers; the fallback is not asked', async (t) => {
  const { asked, answer } = ask(QUOTE, QUOTE)
  const found = await answer
  t.same(found, { ok: true, value: { symbol: 'BTC', currency: 'USD', value: 64012.5, timestamp: '2026-11-22T06:00:00.000Z', source: 'coingecko' } })
  t.ok(Object.isFrozen(found) && found.ok && Object.isFrozen(found.value), 'the answer the cache hands to every request is frozen')
  t.same(asked, ['coingecko USD'])
})

t.test('a failed or non-quoting primary falls back, and source names the fallback', async (t) => {
  for (const primary of [DOWN, TIMEOUT, NOT_QUOTED]) {
    const { asked, answer } = ask(primary, QUOTE)
    t.match(await answer, { ok: true, value: { source: 'coinbase' } })
    t.same(asked, ['coingecko USD', 'coinbase USD'])
  }
})

t.test('unsupported only when every upstream says it does not quote the currency', async (t) => {
  t.equal(await ask(NOT_QUOTED, NOT_QUOTED).answer, UNSUPPORTED)
  t.same(UNSUPPORTED, { ok: false, reason: 'unsupported currency' })
  t.ok(Object.isFrozen(UNSUPPORTED), 'one frozen failure, built once')
})

/** What askInOrder rejects with: an UpstreamError, and the HttpError /api/external-data answers for it. */
const rejection = async (answer: Promise<unknown>): Promise<HttpError> => {
  const error = await answer.catch((e: unknown) => e)
  if (!(error instanceof UpstreamError)) throw new Error(`expected an UpstreamError, got ${String(error)}`)
  return toHttpError(error) as HttpError
}

t.test('every upstream timed out: 504 naming each', async (t) => {
  const error = await rejection(ask(TIMEOUT, TIMEOUT).answer)
  t.type(error, HttpError)
  t.same(
    [error.status, error.code, error.message],
    [504, 'UPSTREAM_TIMEOUT', 'No upstream answered with a rate: coingecko timed out after 2000 ms; coinbase timed out after 2000 ms'],
  )
})

t.test('any other failure: 502 naming each upstream and how it failed', async (t) => {
  const cases: ReadonlyArray<readonly [Attempt, Attempt, number, string]> = [
    [DOWN, TIMEOUT, 502, 'coingecko answered HTTP 503; coinbase timed out after 2000 ms'],
    [TIMEOUT, DOWN, 502, 'coingecko timed out after 2000 ms; coinbase answered HTTP 503'],
    [NOT_QUOTED, DOWN, 502, 'coingecko does not quote USD; coinbase answered HTTP 503'],
    [NOT_QUOTED, TIMEOUT, 504, 'coingecko does not quote USD; coinbase timed out after 2000 ms'],
  ]
  for (const [primary, fallback, status, detail] of cases) {
    const error = await rejection(ask(primary, fallback).answer)
    t.same([error.status, error.message], [status, `No upstream answered with a rate: ${detail}`])
  }
})

t.test('createRates asks the configured upstreams through the cache, on the clocks it is given', async (t) => {
  const coinbase = await fakeCoinbase(t)
  let clock = 0
  const registry = new Registry()
  const rates = createRates({
    config: {
      ...readConfig({}).rates,
      providers: ['coinbase'],
      urls: { coingecko: new URL('http://127.0.0.1:1'), coinbase: new URL(coinbase.url) },
      cacheTtlMs: 1000,
    },
    metrics: createUpstreamMetrics(registry, ['coinbase']),
    logger: createLogger({ name: 'svc', level: 'error', format: 'json', write: () => {} }),
    now: () => clock,
    wallClock: () => Date.parse('2026-11-22T08:00:00Z'),
  })
  t.same(await rates.latest('USD', undefined), {
    value: { ok: true, value: { symbol: 'BTC', currency: 'USD', value: 64012.5, timestamp: '2026-11-22T08:00:00.000Z', source: 'coinbase' } },
    cacheStatus: 'svc; fwd=miss; stored',
  })
  clock = 999
  t.match(rates.latest('USD', undefined), { cacheStatus: 'svc; hit' })
  clock = 1000
  t.match(await rates.latest('USD', undefined), { cacheStatus: 'svc; fwd=stale; stored' })
  t.equal(coinbase.received.length, 2)
})
