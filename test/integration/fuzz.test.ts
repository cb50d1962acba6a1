// A seeded fuzzer against the real service: at least 20 000 generated requests (test/fixtures/fuzz.ts)
// over a few keep-alive raw sockets and many fresh connections. Every answer must be in the
// statuses its request may get, never a 5xx, carry the security headers and a request id, be
// problem+json when it is an error with a body, and leak nothing internal; the http_* series stay
// within fixed label sets; the service still serves at the end.
// The seed is fixed, so every run sends the same requests and a failure is reproducible; FUZZ_SEED=<n>
// explores others (every failure message names the seed), FUZZ_REQUESTS changes the count.
import t from 'tap'
import { closedPort } from '../fixtures/tcp.js'
import { startApp } from '../fixtures/app.js'
import { createFuzzer, type Shot } from '../fixtures/fuzz.js'
import { labelValues } from '../fixtures/metrics-text.js'
import { httpSeries, LEAK, PROBLEM_TYPE, RawConnection, scrape, type RawResponse } from '../fixtures/raw-http.js'

const DEFAULT_SEED = 20_240_611
const SEED = Number(process.env['FUZZ_SEED'] ?? DEFAULT_SEED)
// mulberry32 takes the seed modulo 2^32: anything else (NaN included) would quietly become another seed.
if (!Number.isInteger(SEED) || SEED < 0 || SEED >= 2 ** 32) throw new Error(`FUZZ_SEED=${process.env['FUZZ_SEED']}: expected an integer from 0 to 4294967295`)
const REQUESTS = Number(process.env['FUZZ_REQUESTS'] ?? '20000')
const CONNECTIONS = 6
const MAX_BODY = 65_536
const STANDARD_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE', 'OTHER']

/** What is wrong with one answer; empty when it passes every invariant. */
const violations = (shot: Shot, response: RawResponse | undefined): string[] => {
  if (response === undefined) return shot.mayGoUnanswered ? [] : ['no answer']
  const found: string[] = []
  const { status, headers } = response
  if (!shot.expected.includes(status)) found.push(`status ${status}, expected one of ${shot.expected.join(', ')}`)
  if (status >= 500) found.push('a 5xx')
  if (headers['x-content-type-options'] !== 'nosniff') found.push('no nosniff')
  if (headers['cache-control'] === undefined) found.push('no Cache-Control')
  if ('x-powered-by' in headers) found.push('X-Powered-By')
  if (!/^[0-9a-f-]{36}$/.test(headers['x-request-id'] ?? '')) found.push('no request id')
  if (LEAK.test(response.head + response.body.toString('latin1'))) found.push('a leak')
  if (status >= 400 && response.body.length > 0) {
    if (headers['content-type'] !== PROBLEM_TYPE) found.push(`content-type ${headers['content-type']}`)
    try {
      const problem = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>
      if (problem['status'] !== status || problem['request_id'] !== headers['x-request-id'] || typeof problem['type'] !== 'string')
        found.push('problem members')
    } catch {
      found.push('a problem body that is not JSON')
    }
  }
  return found
}

t.test(`${REQUESTS} generated hostile requests keep every invariant (FUZZ_SEED=${SEED})`, async (t) => {
  const replay = `replay with FUZZ_SEED=${SEED} FUZZ_REQUESTS=${REQUESTS}`
  t.comment(replay)
  const closed = `http://127.0.0.1:${await closedPort()}`
  const { base, lines } = await startApp(t, {
    SVC_DRAIN_TIMEOUT_MS: '200',
    SVC_MAX_BODY_BYTES: String(MAX_BODY),
    // Rate upstreams that refuse at once, should a request reach them: no test waits on the Internet.
    SVC_RATE_COINGECKO_URL: closed,
    SVC_RATE_COINBASE_URL: closed,
  })
  const port = Number(new URL(base).port)
  const root = (await (await fetch(base)).json()) as { endpoints: Array<{ method: string; path: string }> }
  const templates = new Set(['<unmatched>', ...root.endpoints.map((e) => e.path)])
  const getPaths = root.endpoints.filter((e) => e.method === 'GET' && !e.path.includes('{') && e.path !== '/api/external-data').map((e) => e.path)
  const fuzzer = createFuzzer(SEED, { getPaths, maxBodyBytes: MAX_BODY })

  const failures: string[] = []
  const byShape = new Map<string, number>()
  const statuses = new Map<number, number>()
  const seriesCounts: number[] = []
  let sent = 0
  let unanswered = 0
  let fresh = 0
  const started = performance.now()

  const worker = async (): Promise<void> => {
    let conn: RawConnection | undefined
    while (sent < REQUESTS) {
      const shot = fuzzer.next()
      const index = sent++
      byShape.set(shot.shape, (byShape.get(shot.shape) ?? 0) + 1)
      if (shot.isFresh || conn === undefined || conn.isClosed) {
        conn?.destroy()
        conn = await RawConnection.open(port)
        fresh++
      }
      conn.send(shot.bytes, shot.isHead)
      // An incomplete request: the server sees the end of the stream and must not wait for more.
      if (shot.shape === 'garbage') conn.socket.end()
      const response = await conn.next(5000)
      if (response === undefined) unanswered++
      else statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
      const found = violations(shot, response)
      if (found.length > 0 && failures.length < 20) {
        failures.push(`#${index} ${shot.shape}: ${found.join('; ')} — sent ${JSON.stringify(shot.bytes.subarray(0, 200).toString('latin1'))}`)
      }
      if (shot.isFresh || response === undefined || /close/i.test(response.headers['connection'] ?? '')) {
        conn.destroy()
        conn = undefined
      }
      if ((index + 1) % 5000 === 0) seriesCounts.push(httpSeries(await scrape(base)).length)
    }
    conn?.destroy()
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  const elapsedS = (performance.now() - started) / 1000

  t.comment(`${sent} requests in ${elapsedS.toFixed(1)} s (${Math.round(sent / elapsedS)}/s), ${fresh} connections, ${unanswered} closed unanswered`)
  t.comment(`shapes: ${JSON.stringify(Object.fromEntries([...byShape].sort()))}`)
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`)
  t.comment(`http_* samples every 5000 requests: ${seriesCounts.join(', ')}`)
  t.same(failures, [], `every answer keeps the invariants (${replay})`)

  const text = await scrape(base)
  const endpoints = labelValues(text, 'http_requests_total', 'endpoint')
  const methods = labelValues(text, 'http_requests_total', 'method')
  t.same(
    [...endpoints].filter((e) => !templates.has(e)),
    [],
    `endpoint labels are route templates or <unmatched> (${endpoints.size}; ${replay})`,
  )
  t.same(
    [...methods].filter((m) => !STANDARD_METHODS.includes(m)),
    [],
    `method labels are standard or OTHER (${methods.size}; ${replay})`,
  )
  t.same(
    [...labelValues(text, 'http_requests_total', 'status')].filter((s) => Number(s) >= 500),
    [],
    `no 5xx was counted (${replay})`,
  )
  // A fixed ceiling, whatever the request count: every (endpoint, method) has one histogram (17
  // samples) and at most a dozen statuses.
  t.ok(
    httpSeries(text).length <= templates.size * methods.size * (17 + 12) + 1,
    `${httpSeries(text).length} http_* samples stay under the label-set ceiling (${replay})`,
  )

  const logged = lines()
  t.notOk(
    logged.some((l) => l.level === 'error'),
    `no error was logged (${replay})`,
  )
  t.notMatch(JSON.stringify(logged.filter((l) => l.event === 'request_rejected')), LEAK, `no rejection log line leaks (${replay})`)
  t.equal((await fetch(base)).status, 200, `the service still serves (${replay})`)
  t.equal((await fetch(`${base}/health`)).status, 200, `and is healthy (${replay})`)
})
