// Faults: the exchange-rate upstreams down, gone, slow and sending garbage, then well again. Fake
// CoinGecko and Coinbase servers on loopback (and a cable in front of them, to take them off the
// network). While they fail, GET /api/external-data answers a stale rate or a 502/504 problem in
// bounded time; once they answer again, the very next request gets a fresh rate: failures are never
// cached, no request waits on an earlier one, and nothing has to be reset.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { startApp, type Running } from '../fixtures/app.js'
import { startCable, type Cable } from '../fixtures/cable.js'
import { sample } from '../fixtures/metrics-text.js'
import { fakeCoinbase, fakeCoingecko, PRICES, UPDATED_AT, type Behaviour, type FakeUpstream } from '../fixtures/rate-upstreams.js'

type Setup = Running & { gecko: FakeUpstream; coinbase: FakeUpstream; cables: readonly Cable[]; get(currency: string): Promise<Answer> }
type Answer = Readonly<{ status: number; cacheStatus: string | null; body: Record<string, unknown>; ms: number }>

const TIMEOUT_MS = 150

/** Both fakes behind cables, the service pointed at the cables. */
const setup = async (t: Test, env: Env = {}): Promise<Setup> => {
  const gecko = await fakeCoingecko(t)
  const coinbase = await fakeCoinbase(t)
  const cables = [await startCable(t, gecko.port), await startCable(t, coinbase.port)] as const
  const through = (fake: FakeUpstream, cable: Cable): string => fake.url.replace(`:${fake.port}`, `:${cable.port}`)
  const running = await startApp(t, {
    SVC_RATE_COINGECKO_URL: through(gecko, cables[0]),
    SVC_RATE_COINBASE_URL: through(coinbase, cables[1]),
    SVC_RATE_TIMEOUT_MS: String(TIMEOUT_MS),
    ...env,
  })
  const get = async (currency: string): Promise<Answer> => {
    const started = performance.now()
    const res = await fetch(`${running.base}/api/external-data?currency=${currency}`)
    const body = (await res.json()) as Record<string, unknown>
    return { status: res.status, cacheStatus: res.headers.get('cache-status'), body, ms: performance.now() - started }
  }
  return { ...running, gecko, coinbase, cables, get }
}

const both = (s: Setup, behaviour: Behaviour, delayMs?: number): void => {
  s.gecko.set(behaviour, delayMs)
  s.coinbase.set(behaviour, delayMs)
}

const fresh = (currency: string) => ({
  symbol: 'BTC',
  currency,
  value: PRICES[currency],
  timestamp: new Date(UPDATED_AT * 1000).toISOString(),
  source: 'coingecko',
})

const outcomes = async (s: Setup, upstream: string): Promise<Record<string, number | undefined>> => {
  const text = (await s.app.metrics.render(undefined)).text
  const of = (outcome: string) => sample(text, 'svc_upstream_requests_total', { upstream, outcome, environment: 'dev' })
  return { success: of('success'), error: of('error'), timeout: of('timeout') }
}

const inFlight = async (s: Setup): Promise<number | undefined> =>
  sample((await s.app.metrics.render(undefined)).text, 'http_requests_in_flight', { environment: 'dev' })

t.test('both upstreams down: a cached rate answers stale, an uncached one is a 502; once they return, fresh rates at once', async (t) => {
  const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '50', SVC_RATE_STALE_MS: '60000' })
  const usd = await s.get('USD')
  t.same([usd.status, usd.cacheStatus], [200, 'svc; fwd=miss; stored'])
  await sleep(80)

  both(s, 'down')
  for (let i = 0; i < 3; i++) {
    const stale = await s.get('USD')
    t.same([stale.status, stale.cacheStatus, stale.body], [200, 'svc; fwd=stale; detail=stale-if-error', usd.body], 'the cached rate, its timestamp unchanged')
    const eur = await s.get('EUR')
    t.equal(eur.status, 502)
    t.match(eur.body, {
      type: 'urn:svc:problem:bad-upstream',
      detail: 'No upstream answered with a rate: coingecko answered HTTP 503; coinbase answered HTTP 503',
    })
  }
  const asked = s.gecko.received.length
  t.equal(asked, 7, 'every request during the outage asked again: a failure is never cached')

  both(s, 'ok')
  const eur = await s.get('EUR')
  t.same([eur.status, eur.cacheStatus, eur.body], [200, 'svc; fwd=miss; stored', fresh('EUR')], 'the first request after the outage gets a fresh rate')
  const usdAgain = await s.get('USD')
  t.same([usdAgain.status, usdAgain.cacheStatus], [200, 'svc; fwd=stale; stored'], 'and the stale one is refreshed')
  t.equal((await s.get('EUR')).cacheStatus, 'svc; hit', 'and cached as usual')
  t.same(await outcomes(s, 'coingecko'), { success: 3, error: 6, timeout: 0 })
})

t.test('both upstreams gone from the network (connection refused), then back on the same address: 502, then fresh rates', async (t) => {
  // No stale answers: every request during the outage shows what the upstreams do.
  const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '0', SVC_RATE_STALE_MS: '0' })
  t.equal((await s.get('GBP')).status, 200, 'connections to the primary are open and pooled')
  await Promise.all(s.cables.map((cable) => cable.unplug()))
  for (let i = 0; i < 3; i++) {
    const gone = await s.get('GBP')
    t.equal(gone.status, 502)
    t.match(gone.body, { detail: 'No upstream answered with a rate: coingecko could not be reached; coinbase could not be reached' })
    t.ok(gone.ms < 2 * TIMEOUT_MS, `a refused connection fails at once (${gone.ms.toFixed(0)} ms)`)
  }
  t.match(
    s.lines().find((l) => l.event === 'upstream_failed'),
    { upstream: 'coingecko', reason: 'could not be reached', detail: 'connection refused' },
  )

  await Promise.all(s.cables.map((cable) => cable.plug()))
  const back = await s.get('GBP')
  t.same([back.status, back.body], [200, fresh('GBP')], 'the next request reaches the upstream again')
})

t.test('slow upstreams: 504 within the bound, concurrent requests sharing one round of attempts; once fast again, a rate at once', async (t) => {
  const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '0' })
  both(s, 'slow', 5000)
  const slow = await Promise.all(Array.from({ length: 5 }, () => s.get('USD')))
  t.same(
    slow.map((a) => a.status),
    [504, 504, 504, 504, 504],
  )
  const slowest = Math.max(...slow.map((a) => a.ms))
  t.ok(slowest < 2 * TIMEOUT_MS + 500, `5 concurrent requests, two ${TIMEOUT_MS} ms attempts each shared: the slowest took ${slowest.toFixed(0)} ms`)
  t.match(slow[0]?.body, { type: 'urn:svc:problem:upstream-timeout' })
  // The headers arrive, the body never does: timed out just the same.
  both(s, 'slow-body', 5000)
  t.equal((await s.get('USD')).status, 504)
  const deadline = performance.now() + 2000
  while (s.gecko.abandoned() < 2 && performance.now() < deadline) await sleep(10)
  t.equal(s.gecko.abandoned(), 2, 'each timed-out attempt was abandoned: nothing is left waiting on the upstream')
  t.equal(await inFlight(s), 0)

  both(s, 'ok')
  const back = await s.get('USD')
  t.same([back.status, back.body], [200, fresh('USD')])
  t.ok(back.ms < TIMEOUT_MS, `answered in ${back.ms.toFixed(0)} ms, not after some leftover wait`)
  t.same(await outcomes(s, 'coingecko'), { success: 1, error: 0, timeout: 2 })
})

t.test('only the primary slow: the fallback answers within one timeout; the primary answers again once it is fast', async (t) => {
  const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '0' })
  s.gecko.set('slow', 5000)
  const fallback = await s.get('EUR')
  t.match([fallback.status, fallback.body], [200, { currency: 'EUR', source: 'coinbase' }])
  t.ok(fallback.ms < TIMEOUT_MS + 300, `in ${fallback.ms.toFixed(0)} ms`)
  s.gecko.set('ok')
  t.same((await s.get('EUR')).body, fresh('EUR'))
})

for (const [behaviour, what] of [
  ['html', 'an HTML page with 200'],
  ['malformed', 'JSON of another shape'],
  ['huge', 'a body over the 64 KiB cap'],
] as const) {
  t.test(`both upstreams sending garbage (${what}): 502 without echoing it; once they send rates again, rates`, async (t) => {
    const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '0' })
    both(s, behaviour)
    const bad = await s.get('USD')
    t.equal(bad.status, 502)
    t.match(bad.body, {
      type: 'urn:svc:problem:bad-upstream',
      detail: 'No upstream answered with a rate: coingecko sent an invalid reply; coinbase sent an invalid reply',
    })
    t.notMatch(JSON.stringify(bad.body), /html|rate limited|xxxx/i, 'nothing the upstreams sent is echoed')
    both(s, 'ok')
    const good = await s.get('USD')
    t.same([good.status, good.body], [200, fresh('USD')])
    t.equal(await inFlight(s), 0)
  })
}
