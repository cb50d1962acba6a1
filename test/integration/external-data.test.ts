// GET /api/external-data against a fake CoinGecko and a fake Coinbase on loopback.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { startApp, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { startReceiver, type ReceivedSpan } from '../fixtures/otlp-receiver.js'
import { fakeCoinbase, fakeCoingecko, UPDATED_AT, type FakeUpstream } from '../fixtures/rate-upstreams.js'

type Setup = Running & { gecko: FakeUpstream; coinbase: FakeUpstream; api: string; get(query?: string): Promise<Response> }

const setup = async (t: Test, env: Env = {}): Promise<Setup> => {
  const gecko = await fakeCoingecko(t)
  const coinbase = await fakeCoinbase(t)
  const running = await startApp(t, { SVC_RATE_COINGECKO_URL: gecko.url, SVC_RATE_COINBASE_URL: coinbase.url, SVC_RATE_TIMEOUT_MS: '1000', ...env })
  const api = `${running.base}/api/external-data`
  return { ...running, gecko, coinbase, api, get: (query = '') => fetch(`${api}${query}`) }
}

const GECKO_USD = { symbol: 'BTC', currency: 'USD', value: 64012.5, timestamp: new Date(UPDATED_AT * 1000).toISOString(), source: 'coingecko' }

t.test('the primary, CoinGecko, answers with its rate and time; a second request is a cache hit', async (t) => {
  const s = await setup(t)
  const res = await s.get('?currency=USD')
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'application/json')
  t.equal(res.headers.get('cache-status'), 'svc; fwd=miss; stored')
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
  t.same(await res.json(), GECKO_USD)
  const again = await s.get('?currency=USD')
  t.equal(again.headers.get('cache-status'), 'svc; hit')
  t.same(await again.json(), GECKO_USD)
  t.equal(s.gecko.received.length, 1, 'one upstream call for both')
  t.equal(s.coinbase.received.length, 0, 'the fallback was not asked')
})

t.test('Coinbase alone (SVC_RATE_PROVIDERS=coinbase) answers with the time of receipt', async (t) => {
  const s = await setup(t, { SVC_RATE_PROVIDERS: 'coinbase' })
  const before = Date.now()
  const body = (await (await s.get('?currency=EUR')).json()) as Record<string, unknown>
  t.match(body, { symbol: 'BTC', currency: 'EUR', value: 59010.25, source: 'coinbase' })
  const at = Date.parse(body['timestamp'] as string)
  t.ok(at >= before && at <= Date.now(), 'timestamped when received')
  t.equal(s.coinbase.received[0]?.url, '/v2/exchange-rates?currency=BTC')
  t.equal(s.gecko.received.length, 0, 'CoinGecko is not configured, so never asked')
})

t.test('the currency is case-insensitive, and the reply says it in upper case', async (t) => {
  const s = await setup(t)
  t.same(await (await s.get('?currency=usd')).json(), GECKO_USD)
  t.equal((await s.get('?currency=Usd')).headers.get('cache-status'), 'svc; hit', 'the same cache entry')
})

t.test('a missing or empty currency is USD', async (t) => {
  const s = await setup(t)
  t.same(await (await s.get()).json(), GECKO_USD)
  t.same(await (await s.get('?other=1')).json(), GECKO_USD)
  t.same(await (await s.get('?currency=')).json(), GECKO_USD, 'an empty currency is no currency')
})

t.test('an invalid currency is a 400 problem naming the parameter and the accepted form; no upstream is asked', async (t) => {
  const s = await setup(t)
  for (const bad of ['US', 'USDT', '123', 'U%24D', 'u%20d', '%C3%A9ur']) {
    const res = await s.get(`?currency=${bad}`)
    t.equal(res.status, 400, bad)
    t.equal(res.headers.get('content-type'), 'application/problem+json')
    t.match(await res.json(), {
      type: 'urn:svc:problem:invalid-parameter',
      title: 'Bad Request',
      status: 400,
      detail: 'currency must be three letters (ISO 4217), e.g. USD',
      parameter: 'currency',
      instance: '/api/external-data',
    })
  }
  t.equal(s.gecko.received.length + s.coinbase.received.length, 0)
})

t.test('a currency no upstream quotes is a 404 problem, remembered for the TTL', async (t) => {
  const s = await setup(t)
  const res = await s.get('?currency=xyz')
  t.equal(res.status, 404)
  t.match(await res.json(), { type: 'urn:svc:problem:unsupported-currency', status: 404, detail: 'unsupported currency: no upstream quotes BTC in XYZ' })
  t.equal(res.headers.get('cache-status'), 'svc; fwd=miss; stored')
  t.same([s.gecko.received.length, s.coinbase.received.length], [1, 1], 'both upstreams were asked')
  const again = await s.get('?currency=XYZ')
  t.same([again.status, again.headers.get('cache-status')], [404, 'svc; hit'])
  t.same([s.gecko.received.length, s.coinbase.received.length], [1, 1])
})

t.test('the primary down, the fallback answers and source says so', async (t) => {
  const s = await setup(t)
  s.gecko.set('down')
  const res = await s.get('?currency=GBP')
  t.equal(res.status, 200)
  t.match(await res.json(), { currency: 'GBP', value: 50500, source: 'coinbase' })
  t.match(
    s.lines().find((l) => l.event === 'upstream_failed'),
    { level: 'warning', upstream: 'coingecko', reason: 'answered HTTP 503', request_id: res.headers.get('x-request-id') },
  )
})

t.test('an HTML page or the wrong JSON from the primary counts as a failure: the fallback answers', async (t) => {
  for (const behaviour of ['html', 'malformed', 'huge'] as const) {
    const s = await setup(t)
    s.gecko.set(behaviour)
    t.match(await (await s.get()).json(), { source: 'coinbase' }, behaviour)
  }
})

t.test('both upstreams down and nothing cached: 502 naming each, without what they sent', async (t) => {
  const s = await setup(t)
  s.gecko.set('down')
  s.coinbase.set('malformed')
  const res = await s.get('?currency=USD')
  t.equal(res.status, 502)
  const body = (await res.json()) as Record<string, unknown>
  t.match(body, {
    type: 'urn:svc:problem:bad-upstream',
    title: 'Bad Gateway',
    detail: 'No upstream answered with a rate: coingecko answered HTTP 503; coinbase sent an invalid reply',
  })
  t.notMatch(JSON.stringify(body), /html|Service Unavailable|rate limited/i)
  const completed = s.lines().find((l) => l.event === 'request_completed')
  t.match(completed, { level: 'error', status: 502 })
})

t.test('both upstreams down with a cached value: the stale value answers with its original timestamp', async (t) => {
  const s = await setup(t, { SVC_RATE_PROVIDERS: 'coinbase', SVC_RATE_CACHE_TTL_MS: '50', SVC_RATE_STALE_MS: '60000' })
  const first = (await (await s.get()).json()) as Record<string, unknown>
  await sleep(80)
  s.coinbase.set('down')
  const res = await s.get()
  t.equal(res.status, 200)
  t.equal(res.headers.get('cache-status'), 'svc; fwd=stale; detail=stale-if-error')
  t.same(await res.json(), first, 'the same rate, timestamp included')
})

t.test('a cached value older than SVC_RATE_STALE_MS no longer answers', async (t) => {
  const s = await setup(t, { SVC_RATE_PROVIDERS: 'coinbase', SVC_RATE_CACHE_TTL_MS: '10', SVC_RATE_STALE_MS: '40' })
  t.equal((await s.get()).status, 200)
  await sleep(80)
  s.coinbase.set('down')
  t.equal((await s.get()).status, 502)
})

t.test('slow upstreams: 504 once every attempt has timed out, within the timeouts', async (t) => {
  const s = await setup(t, { SVC_RATE_TIMEOUT_MS: '150' })
  s.gecko.set('slow', 3000)
  s.coinbase.set('slow-body', 3000)
  const started = performance.now()
  const res = await s.get()
  const elapsed = performance.now() - started
  t.equal(res.status, 504)
  t.ok(elapsed >= 290 && elapsed < 1500, `two 150 ms attempts took ${Math.round(elapsed)} ms`)
  t.match(await res.json(), {
    type: 'urn:svc:problem:upstream-timeout',
    title: 'Gateway Timeout',
    detail: 'No upstream answered with a rate: coingecko timed out after 150 ms; coinbase timed out after 150 ms',
  })
})

t.test('concurrent requests for one currency make one upstream call', async (t) => {
  const s = await setup(t)
  s.gecko.set('slow', 100)
  const replies = await Promise.all(Array.from({ length: 20 }, () => s.get('?currency=eur')))
  t.equal(s.gecko.received.length, 1, 'one call for 20 requests')
  t.same(
    replies.map((r) => r.status),
    Array(20).fill(200),
  )
  const statuses = replies.map((r) => r.headers.get('cache-status'))
  t.equal(statuses.filter((v) => v === 'svc; fwd=miss; stored').length, 1)
  t.equal(statuses.filter((v) => v === 'svc; fwd=miss; stored; collapsed').length, 19)
  for (const r of replies) t.match(await r.json(), { currency: 'EUR', value: 59010.25 })
})

t.test('after the TTL the next request asks the upstream again', async (t) => {
  const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '100' })
  await s.get()
  t.equal((await s.get()).headers.get('cache-status'), 'svc; hit')
  await sleep(130)
  t.equal((await s.get()).headers.get('cache-status'), 'svc; fwd=stale; stored')
  t.equal(s.gecko.received.length, 2)
})

t.test('upstream requests are counted and timed per upstream and outcome', async (t) => {
  const s = await setup(t, { SVC_RATE_CACHE_TTL_MS: '0' })
  await s.get()
  s.gecko.set('down')
  await s.get()
  const text = await (await fetch(`${s.base}/metrics`)).text()
  const count = (upstream: string, outcome: string) => sample(text, 'svc_upstream_requests_total', { upstream, outcome, environment: 'dev' })
  t.same([count('coingecko', 'success'), count('coingecko', 'error'), count('coingecko', 'timeout')], [1, 1, 0])
  t.same([count('coinbase', 'success'), count('coinbase', 'error'), count('coinbase', 'timeout')], [1, 0, 0])
  t.equal(sample(text, 'svc_upstream_request_duration_seconds_count', { upstream: 'coingecko', environment: 'dev' }), 2)
  t.equal(sample(text, 'svc_upstream_request_duration_seconds_bucket', { upstream: 'coinbase', environment: 'dev', le: '2' }), 1)
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/api/external-data', status: '200', environment: 'dev' }), 2)
})

const spansNamed = (spans: readonly ReceivedSpan[], kind: string) => spans.filter((s) => s.kind === kind)

t.test('each upstream attempt is a CLIENT span under the SERVER span, its context sent as traceparent', async (t) => {
  const r = await startReceiver()
  t.teardown(() => r.close())
  const s = await setup(t, { OTLP_ENDPOINT: r.hostPort, OTEL_BSP_SCHEDULE_DELAY: '20' })
  s.gecko.set('down')
  const res = await s.get('?currency=USD')
  t.equal(res.status, 200)
  const spans = await r.waitForSpans(3)
  const [server] = spansNamed(spans, 'SPAN_KIND_SERVER')
  const clients = spansNamed(spans, 'SPAN_KIND_CLIENT')
  t.equal(server?.name, 'GET /api/external-data')
  t.equal(clients.length, 2)
  const geckoHost = new URL(s.gecko.url).host
  const baseHost = new URL(s.coinbase.url).host
  const [gecko, base] = [clients.find((c) => c.name === `GET ${geckoHost}`), clients.find((c) => c.name === `GET ${baseHost}`)]
  for (const client of [gecko, base]) {
    t.equal(client?.traceId, server?.traceId, 'same trace')
    t.equal(client?.parentSpanId, server?.spanId, 'child of the SERVER span')
  }
  t.same(gecko?.attributes, {
    'http.request.method': { type: 'string', value: 'GET' },
    'server.address': { type: 'string', value: '127.0.0.1' },
    'server.port': { type: 'int', value: Number(new URL(s.gecko.url).port) },
    'url.full': { type: 'string', value: `${s.gecko.url}/simple/price?ids=bitcoin&vs_currencies=usd&include_last_updated_at=true` },
    'http.response.status_code': { type: 'int', value: 503 },
    'error.type': { type: 'string', value: '503' },
  })
  t.same(gecko?.status, { code: 'STATUS_CODE_ERROR', message: 'answered HTTP 503' })
  t.equal(base?.attributes['http.response.status_code']?.value, 200)
  t.equal(base?.status.code, 'STATUS_CODE_UNSET')
  t.equal(s.gecko.received[0]?.headers['traceparent'], `00-${server?.traceId}-${gecko?.spanId}-01`, 'CoinGecko received the CLIENT span as parent')
  t.equal(s.coinbase.received[0]?.headers['traceparent'], `00-${server?.traceId}-${base?.spanId}-01`)
})

t.test('a timed-out attempt is an ERROR CLIENT span without a status code', async (t) => {
  const r = await startReceiver()
  t.teardown(() => r.close())
  const s = await setup(t, { OTLP_ENDPOINT: r.hostPort, OTEL_BSP_SCHEDULE_DELAY: '20', SVC_RATE_PROVIDERS: 'coingecko', SVC_RATE_TIMEOUT_MS: '100' })
  s.gecko.set('slow', 1000)
  t.equal((await s.get()).status, 504)
  const spans = await r.waitForSpans(2)
  const [client] = spansNamed(spans, 'SPAN_KIND_CLIENT')
  t.same(client?.status, { code: 'STATUS_CODE_ERROR', message: 'timed out after 100 ms' })
  t.equal(client?.attributes['error.type']?.value, 'timeout')
  t.equal(client?.attributes['http.response.status_code'], undefined)
  t.equal(spansNamed(spans, 'SPAN_KIND_SERVER')[0]?.status.code, 'STATUS_CODE_ERROR', 'a 504 is a server error')
})
