// The probes over real sockets, against real PostgreSQL and Redis servers started here.
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer as createTcpServer, type Socket } from 'node:net'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { startPostgres } from '../fixtures/postgres.js'
import { startRedis } from '../fixtures/redis.js'
import { closedPort } from '../fixtures/tcp.js'

type Body = { status: string; checks: Record<string, { status: string; latency_ms?: number; error?: string }>; version: string; uptime_s: number }

const probe = async (base: string, path: string): Promise<{ status: number; body: Body; headers: Headers }> => {
  const res = await fetch(base + path)
  return { status: res.status, body: (await res.json()) as Body, headers: res.headers }
}

const listen = async (t: Test, server: Server | ReturnType<typeof createTcpServer>): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return (server.address() as { port: number }).port
}

/** A loopback HTTP "external API" that counts the requests it gets. */
const externalApi = async (t: Test, status = 200, headers: Readonly<Record<string, string>> = {}): Promise<{ url: string; hits: () => number }> => {
  let hits = 0
  const server = createHttpServer((_req, res) => {
    hits++
    res.writeHead(status, headers).end('{}')
  })
  const port = await listen(t, server)
  return { url: `http://127.0.0.1:${port}/status`, hits: () => hits }
}

t.test('with no dependency configured those checks are skipped, the shipped models serve, and all probes answer 200, GET and HEAD', async (t) => {
  const { base } = await startApp(t)
  for (const path of ['/health', '/ready', '/startup']) {
    const { status, body, headers } = await probe(base, path)
    t.equal(status, 200, path)
    t.equal(headers.get('cache-control'), 'no-store')
    t.match(headers.get('content-type'), /^application\/json/)
    t.same(body.checks, {
      database: { status: 'skipped' },
      cache: { status: 'skipped' },
      external_api: { status: 'skipped' },
      models: { status: 'ok', latency_ms: 0 },
    })
    t.match(body, { status: 'ok', version: PACKAGE_VERSION, uptime_s: Number })
    const head = await fetch(base + path, { method: 'HEAD' })
    t.equal(head.status, 200)
    t.equal(await head.text(), '', `HEAD ${path} has no body`)
  }
})

t.test('all dependencies up: every check ok with its latency, and the status gauge says so', async (t) => {
  const pg = await startPostgres(t)
  const redis = await startRedis(t)
  if (pg === undefined || redis === undefined) return
  const api = await externalApi(t)
  const { base } = await startApp(t, {
    SVC_DB_HOST: pg.host,
    SVC_DB_PORT: String(pg.port),
    SVC_CACHE_HOST: redis.host,
    SVC_CACHE_PORT: String(redis.port),
    SVC_EXTERNAL_API_URL: api.url,
  })
  const ready = await probe(base, '/ready')
  t.equal(ready.status, 200)
  t.equal(ready.body.status, 'ok')
  for (const component of ['database', 'cache', 'external_api']) {
    t.match(ready.body.checks[component], { status: 'ok', latency_ms: Number }, component)
    t.notOk('error' in (ready.body.checks[component] ?? {}))
  }
  const metrics = await (await fetch(`${base}/metrics`)).text()
  for (const component of ['database', 'cache', 'external_api']) {
    t.equal(sample(metrics, 'svc_health_check_status', { component, environment: 'dev' }), 1, `${component} gauge`)
    t.equal(sample(metrics, 'svc_health_check_duration_seconds_count', { component, environment: 'dev' }), 1)
  }
})

for (const [component, env] of [
  ['database', (port: number) => ({ SVC_DB_HOST: '127.0.0.1', SVC_DB_PORT: String(port) })],
  ['cache', (port: number) => ({ SVC_CACHE_HOST: '127.0.0.1', SVC_CACHE_PORT: String(port) })],
  ['external_api', (port: number) => ({ SVC_EXTERNAL_API_URL: `http://127.0.0.1:${port}/` })],
] as const) {
  t.test(`${component} down: /ready is 503, /health stays 200 and reports it failed`, async (t) => {
    const { base } = await startApp(t, env(await closedPort()))
    const ready = await probe(base, '/ready')
    t.equal(ready.status, 503)
    t.equal(ready.body.status, 'degraded')
    t.match(ready.body.checks[component], { status: 'fail', error: 'connection refused', latency_ms: Number })
    const health = await probe(base, '/health')
    t.equal(health.status, 200, 'liveness is not failed by a dependency')
    t.equal(health.body.status, 'degraded')
    t.equal((await probe(base, '/startup')).status, 200)
    const metrics = await (await fetch(`${base}/metrics`)).text()
    t.equal(sample(metrics, 'svc_health_check_status', { component, environment: 'dev' }), 0)
  })
}

t.test('a dependency that accepts but never answers fails by timeout, within the bound', async (t) => {
  const sockets: Socket[] = []
  const silent = createTcpServer((socket) => void sockets.push(socket))
  const port = await listen(t, silent)
  t.teardown(() => {
    for (const s of sockets) s.destroy()
  })
  const timeoutMs = 500
  const { base } = await startApp(t, { SVC_DB_HOST: '127.0.0.1', SVC_DB_PORT: String(port), SVC_HEALTH_TIMEOUT_MS: String(timeoutMs) })
  const started = performance.now()
  const ready = await probe(base, '/ready')
  const elapsed = performance.now() - started
  t.equal(ready.status, 503)
  t.match(ready.body.checks['database'], { status: 'fail', error: `timeout after ${timeoutMs} ms` })
  // The answer comes when the check's bound fires: at least the bound (less 5 ms for timer
  // granularity), and within twice it, which a second wait (a retry, a bound per phase) would reach;
  // the other half is slack for a loaded machine.
  t.ok(elapsed >= timeoutMs - 5 && elapsed < 2 * timeoutMs, `answered in ${elapsed.toFixed(0)} ms, bound ${timeoutMs} ms`)
})

t.test('an HTTP server on the database port is a failure, not a PostgreSQL', async (t) => {
  const port = await listen(
    t,
    createHttpServer((_req, res) => res.end('hello')),
  )
  const { base } = await startApp(t, { SVC_DB_HOST: '127.0.0.1', SVC_DB_PORT: String(port) })
  const ready = await probe(base, '/ready')
  t.equal(ready.status, 503)
  t.match(ready.body.checks['database'], { status: 'fail', error: 'unexpected reply' })
})

t.test('Redis that requires a password: refused without it, ok with it, and the password is never shown', async (t) => {
  const password = 's3cret-pass-42'
  const redis = await startRedis(t, { password })
  if (redis === undefined) return
  const cache = { SVC_CACHE_HOST: redis.host, SVC_CACHE_PORT: String(redis.port) }
  const without = await startApp(t, cache)
  const refused = await probe(without.base, '/ready')
  t.equal(refused.status, 503)
  t.match(refused.body.checks['cache'], { status: 'fail', error: /^NOAUTH/ })

  const wrong = await startApp(t, { ...cache, SVC_CACHE_PASSWORD: 'not-it' })
  const denied = await probe(wrong.base, '/ready')
  t.match(denied.body.checks['cache'], { status: 'fail', error: /^WRONGPASS/ })
  t.notMatch(JSON.stringify(denied.body), /not-it/)

  const withIt = await startApp(t, { ...cache, SVC_CACHE_PASSWORD: password })
  const ok = await probe(withIt.base, '/ready')
  t.equal(ok.status, 200)
  t.match(ok.body.checks['cache'], { status: 'ok' })
  for (const running of [without, wrong, withIt]) t.notMatch(JSON.stringify(running.lines()), /s3cret|not-it/, 'no password in any log line')
})

t.test('results are reused within the cache window and concurrent probes share one round', async (t) => {
  // Two services, so that no assertion depends on how fast this machine is: a window no test outlasts
  // for the reuse, a short one to see expire. test/health/monitor.test.ts walks a window on a clock.
  const api = await externalApi(t)
  const { base } = await startApp(t, { SVC_EXTERNAL_API_URL: api.url, SVC_HEALTH_CACHE_MS: '600000' })
  const storm = await Promise.all(Array.from({ length: 20 }, (_, i) => probe(base, ['/health', '/ready', '/startup'][i % 3] as string)))
  t.ok(storm.every((p) => p.body.checks['external_api']?.status === 'ok'))
  t.equal(api.hits(), 1, '20 concurrent probes, one check')
  await probe(base, '/ready')
  t.equal(api.hits(), 1, 'a probe within the window does not touch the dependency')

  const windowMs = 50
  const short = await externalApi(t)
  const expiring = await startApp(t, { SVC_EXTERNAL_API_URL: short.url, SVC_HEALTH_CACHE_MS: String(windowMs) })
  await probe(expiring.base, '/ready')
  // A sleep can only overshoot: the window has passed when it ends.
  await new Promise((resolve) => setTimeout(resolve, windowMs + 10))
  await probe(expiring.base, '/ready')
  t.equal(short.hits(), 2, 'after the window a new round runs')
})

t.test('an external API answering 503 or a redirect is a failure; redirects are not followed', async (t) => {
  const unavailable = await externalApi(t, 503)
  const down = await startApp(t, { SVC_EXTERNAL_API_URL: unavailable.url })
  t.match((await probe(down.base, '/ready')).body.checks['external_api'], { status: 'fail', error: 'HTTP 503' })

  // The redirect points at a healthy endpoint: following it would turn the check green.
  const healthy = await externalApi(t)
  const moved = await externalApi(t, 302, { location: healthy.url })
  const redirected = await startApp(t, { SVC_EXTERNAL_API_URL: moved.url })
  const ready = await probe(redirected.base, '/ready')
  t.equal(ready.status, 503)
  t.match(ready.body.checks['external_api'], { status: 'fail', error: 'HTTP 302' })
  t.same({ redirect: moved.hits(), target: healthy.hits() }, { redirect: 1, target: 0 }, 'the redirect was asked once, its target never')
})

t.test('probe requests are counted in the HTTP metrics but logged at debug only', async (t) => {
  const quiet = await startApp(t)
  await probe(quiet.base, '/health')
  await fetch(quiet.base)
  t.same(
    quiet.lines().filter((l) => l['path'] === '/health'),
    [],
    'no probe lines at INFO',
  )
  t.equal(quiet.lines().filter((l) => l['path'] === '/').length, 2, 'other requests still logged')
  const metrics = await (await fetch(`${quiet.base}/metrics`)).text()
  t.equal(sample(metrics, 'http_requests_total', { method: 'GET', endpoint: '/health', status: '200', environment: 'dev' }), 1)

  const verbose = await startApp(t, { LOG_LEVEL: 'DEBUG' })
  await probe(verbose.base, '/ready')
  t.match(
    verbose.lines().filter((l) => l['path'] === '/ready'),
    [
      { event: 'request_started', level: 'debug' },
      { event: 'request_completed', level: 'debug', status: 200 },
    ],
  )
})

t.test('bad health configuration stops start-up naming each variable', async (t) => {
  const { readConfig, ConfigError } = await import('../../lib/config/config.js')
  const error = t.throws(() =>
    readConfig({
      SVC_DB_HOST: 'db',
      SVC_DB_PORT: '99999',
      SVC_CACHE_PORT: '6380',
      SVC_EXTERNAL_API_URL: 'ftp://x',
      SVC_HEALTH_TIMEOUT_MS: '0',
      SVC_HEALTH_CACHE_MS: 'soon',
    }),
  ) as InstanceType<typeof ConfigError>
  t.same(error.problems, [
    'SVC_DB_PORT=99999: expected an integer from 1 to 65535',
    'SVC_CACHE_PORT=6380: set SVC_CACHE_HOST too, or unset SVC_CACHE_PORT',
    'SVC_EXTERNAL_API_URL=ftp://x: expected an http:// or https:// URL',
    'SVC_HEALTH_TIMEOUT_MS=0: expected an integer from 1 to 60000',
    'SVC_HEALTH_CACHE_MS=soon: expected an integer from 0 to 600000',
  ])
})

t.test('readiness is 503 from the first moment of a shutdown, while a slow request still drains', async (t) => {
  const { testRoutes } = await import('../fixtures/routes.js')
  // The two probes below must land within the delay: 1 s leaves a loaded machine plenty of room.
  const { app, base } = await startApp(t, { SVC_SHUTDOWN_DELAY_MS: '1000' }, testRoutes(600))
  t.equal((await probe(base, '/ready')).status, 200)
  const slow = fetch(`${base}/test/slow`)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const drained = app.server.drain()
  const ready = await probe(base, '/ready')
  t.equal(ready.status, 503, 'a new connection during the shutdown delay is told not to send traffic')
  t.equal(ready.body.status, 'draining')
  t.equal((await probe(base, '/health')).status, 200, 'liveness holds while draining')
  t.equal((await slow).status, 200, 'the slow request still completes')
  t.same(await drained, { isComplete: true })
  await t.rejects(fetch(`${base}/ready`), 'after the delay the listener is closed')
})

t.test('an empty model store: liveness stays 200, readiness is 503 and says why', async (t) => {
  const empty = await mkdtemp(join(tmpdir(), 'svc-models-'))
  const { base } = await startApp(t, { SVC_MODEL_STORE: empty })
  const live = await probe(base, '/health')
  t.equal(live.status, 200)
  const ready = await probe(base, '/ready')
  t.equal(ready.status, 503)
  t.match(ready.body, { status: 'degraded', checks: { models: { status: 'fail', error: 'no model in the store' } } })
})
