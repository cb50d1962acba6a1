// The real server on a real socket: request ids, log lines, error bodies, HEAD/OPTIONS, streams.
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { Handler } from '../../lib/core/pipeline.js'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { streamState, testRoutes } from '../fixtures/routes.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Sends raw bytes and resolves with everything the server answers before closing. */
const raw = (port: number, bytes: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes))
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => (text += d))
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })

const portOf = (base: string): number => Number(new URL(base).port)

t.test('every response carries a UUID X-Request-ID equal to the request_id of its log lines', async (t) => {
  const { base, lines } = await startApp(t, {}, testRoutes())
  const cases: Array<[string, RequestInit]> = [
    ['/', {}],
    ['/nope', {}],
    ['/', { method: 'DELETE' }],
    ['/', { method: 'OPTIONS' }],
    ['/', { method: 'HEAD' }],
    ['/test/throw', {}],
    ['/test/echo', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }],
  ]
  for (const [path, init] of cases) {
    const res = await fetch(base + path, init)
    await res.arrayBuffer()
    const id = res.headers.get('x-request-id') ?? ''
    t.match(id, UUID, `${init.method ?? 'GET'} ${path} has a UUID request id`)
    const mine = lines().filter((l) => l['request_id'] === id)
    t.same(
      mine.map((l) => l.event),
      ['request_started', 'request_completed'],
      `${path}: started precedes completed`,
    )
  }
  const ids = new Set(
    lines()
      .filter((l) => 'request_id' in l)
      .map((l) => l['request_id']),
  )
  t.equal(ids.size, cases.length, 'ids are unique per request')
})

t.test('request_completed carries method, path, route, status and duration_ms; secrets in the query are not logged', async (t) => {
  const { base, lines } = await startApp(t, {}, testRoutes())
  await (await fetch(`${base}/test/items/a%20b/parts/7?token=hunter2`)).json()
  const completed = lines().find((l) => l.event === 'request_completed')
  t.match(completed, {
    level: 'info',
    'service.name': 'svc',
    method: 'GET',
    path: '/test/items/a%20b/parts/7',
    route: '/test/items/{id}/parts/{part}',
    status: 200,
  })
  t.type(completed?.['duration_ms'], 'number')
  t.notMatch(JSON.stringify(lines()), /hunter2/)
  t.match(completed?.['timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

t.test('log calls inside an endpoint carry the request id without being passed it', async (t) => {
  let running: Awaited<ReturnType<typeof startApp>> | undefined
  running = await startApp(t, {}, [
    {
      method: 'GET',
      path: '/test/log',
      handler: async () => {
        await sleep(5)
        running?.logger.info('inside_endpoint', { step: 1 })
        return { kind: 'json', status: 200, body: {} }
      },
    },
  ])
  const res = await fetch(`${running.base}/test/log`)
  const inside = running.lines().find((l) => l.event === 'inside_endpoint')
  t.equal(inside?.['request_id'], res.headers.get('x-request-id'))
})

t.test('GET / describes the service and links the other endpoints', async (t) => {
  const { base } = await startApp(t, { APP_NAME: 'demo', SVC_ENVIRONMENT: 'stage' })
  const res = await fetch(base)
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^application\/json/)
  t.same(await res.json(), {
    service: 'demo',
    version: PACKAGE_VERSION,
    environment: 'stage',
    endpoints: [
      ...['/', '/metrics', '/health', '/ready', '/startup', '/api/external-data', '/api/insights'].map((path) => ({ method: 'GET', path })),
      { method: 'POST', path: '/api/v1/predict' },
      { method: 'GET', path: '/api/v1/models' },
      { method: 'GET', path: '/api/v1/models/{name}' },
      { method: 'POST', path: '/api/v1/feedback' },
      { method: 'POST', path: '/v2/models/{name}/infer' },
      { method: 'POST', path: '/v2/models/{name}/versions/{version}/infer' },
      { method: 'GET', path: '/v2/models/{name}' },
      { method: 'GET', path: '/v2/models/{name}/versions/{version}' },
      { method: 'GET', path: '/v2/models/{name}/ready' },
      { method: 'GET', path: '/v2/models/{name}/versions/{version}/ready' },
      { method: 'GET', path: '/v2/health/live' },
      { method: 'GET', path: '/v2/health/ready' },
      { method: 'GET', path: '/v2' },
      { method: 'GET', path: '/docs' },
      { method: 'GET', path: '/docs/{asset}' },
      { method: 'GET', path: '/demo' },
      { method: 'GET', path: '/demo/{asset}' },
      { method: 'GET', path: '/openapi.json' },
    ],
  })
})

t.test('errors are problem+json with the right status', async (t) => {
  const { base } = await startApp(t, { SVC_MAX_BODY_BYTES: '100' }, testRoutes())
  const check = async (path: string, init: RequestInit, status: number, type: string, detail: RegExp) => {
    const res = await fetch(base + path, init)
    t.equal(res.status, status, `${path} → ${status}`)
    t.equal(res.headers.get('content-type'), 'application/problem+json')
    const body = (await res.json()) as Record<string, unknown>
    t.match(body, { type, title: String, status, detail, instance: path.split('?')[0], request_id: res.headers.get('x-request-id') })
    return { res, body }
  }
  await check('/nope', {}, 404, 'urn:svc:problem:not-found', /No route/)
  const { res } = await check('/metrics', { method: 'POST' }, 405, 'urn:svc:problem:method-not-allowed', /GET, HEAD, OPTIONS/)
  t.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS')
  await check('/test/size', { method: 'POST', body: 'x'.repeat(101) }, 413, 'urn:svc:problem:payload-too-large', /100 bytes/)
  await check('/test/items/%E0%A4%A/parts/1', {}, 400, 'urn:svc:problem:invalid-path-parameter', /id/)
  await check(
    '/test/echo',
    { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } },
    415,
    'urn:svc:problem:unsupported-media-type',
    /application\/json/,
  )
  await check(
    '/test/echo',
    { method: 'POST', body: '{"a":', headers: { 'content-type': 'application/json' } },
    400,
    'urn:svc:problem:invalid-json',
    /not valid JSON/,
  )
  await check('/test/echo', { method: 'POST' }, 415, 'urn:svc:problem:unsupported-media-type', /got none/)
  await check('/test/teapot', {}, 418, 'urn:svc:problem:teapot', /short and stout/)
  const { body } = await check('/test/throw', {}, 500, 'urn:svc:problem:internal-error', /request_id/)
  t.notMatch(JSON.stringify(body), /secret|passwd|BoomError|at /, 'no internals in a 500 body')
  await check('/test/reject', {}, 500, 'urn:svc:problem:internal-error', /request_id/)
})

t.test('a JSON body within the limit is parsed, with +json media types accepted', async (t) => {
  const { base } = await startApp(t, {}, testRoutes())
  const res = await fetch(`${base}/test/echo`, {
    method: 'POST',
    body: '{"__proto__":{"x":1},"a":[1]}',
    headers: { 'content-type': 'application/merge-patch+json; charset=utf-8' },
  })
  t.same(await res.json(), { received: { ['__proto__']: { x: 1 }, a: [1] } })
  t.equal(({} as Record<string, unknown>)['x'], undefined, 'no prototype pollution')
})

t.test('a chunked body over the limit is answered 413 without reading it all, and the connection closes', async (t) => {
  const { base } = await startApp(t, { SVC_MAX_BODY_BYTES: '1024' }, testRoutes())
  const res = await new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
    const req = httpRequest(`${base}/test/size`, { method: 'POST', headers: { 'transfer-encoding': 'chunked' } }, (r) => {
      let body = ''
      r.on('data', (d: Buffer) => (body += d.toString()))
      r.on('end', () => resolve({ status: r.statusCode ?? 0, connection: r.headers.connection, body }))
    })
    req.on('error', reject)
    // 64 KiB in 1 KiB chunks: far past the limit; the server answers after the first 2 KiB or so.
    for (let i = 0; i < 64; i++) req.write('y'.repeat(1024))
    req.end()
  })
  t.equal(res.status, 413)
  t.equal(res.connection, 'close')
  t.match(JSON.parse(res.body), { status: 413 })
})

t.test('a declared Content-Length over the limit is refused before any body is read, on any route', async (t) => {
  const { base } = await startApp(t, { SVC_MAX_BODY_BYTES: '10' }, testRoutes())
  const answer = await raw(portOf(base), 'POST /test/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{')
  t.match(answer, /^HTTP\/1\.1 413 /)
  t.match(answer, /Connection: close/i)
  t.match(answer, /x-request-id: [0-9a-f-]{36}/)
})

t.test('HEAD answers like GET without a body; OPTIONS answers 204 with Allow', async (t) => {
  const { base } = await startApp(t)
  const get = await fetch(base)
  const getBody = await get.text()
  const head = await fetch(base, { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(await head.text(), '')
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)))
  const options = await fetch(`${base}/metrics`, { method: 'OPTIONS' })
  t.equal(options.status, 204)
  t.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS')
  t.match(options.headers.get('x-request-id'), UUID)
})

t.test('an empty reply sends no body; a query string is parsed on demand', async (t) => {
  const { base } = await startApp(t, {}, testRoutes())
  const empty = await fetch(`${base}/test/empty`)
  t.equal(empty.status, 204)
  t.equal(await empty.text(), '')
  t.same(await (await fetch(`${base}/test/query?q=a%20b&z=1`)).json(), { q: 'a b', raw: 'q=a%20b&z=1' })
})

t.test('a stream reply is sent as Server-Sent Events and stops when the client leaves', async (t) => {
  const { base, lines } = await startApp(t, {}, testRoutes())
  const res = await fetch(`${base}/test/stream?count=3`)
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(res.headers.get('cache-control'), 'no-cache')
  t.equal(await res.text(), 'data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n')

  const head = await fetch(`${base}/test/stream`, { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(await head.text(), '')

  const before = streamState.finished
  const controller = new AbortController()
  const endless = await fetch(`${base}/test/stream?count=100000&interval=5`, { signal: controller.signal })
  const reader = endless.body?.getReader()
  await reader?.read()
  controller.abort()
  for (let i = 0; i < 100 && streamState.finished === before; i++) await sleep(10)
  t.equal(streamState.finished, before + 1, 'the generator was stopped')

  const failing = await fetch(`${base}/test/stream-fail`)
  t.equal(await failing.text(), 'data: {}\n\n', 'a stream that throws ends the response after what it sent')
  t.match(
    lines().find((l) => l.event === 'stream_failed'),
    { level: 'error', error: { message: 'stream broke' } },
  )
})

t.test('a stream request completes when its stream does: log line, duration, in-flight', async (t) => {
  const { base, app, lines } = await startApp(t, {}, testRoutes(10))
  const inFlight = async () => sample((await app.metrics.render(undefined)).text, 'http_requests_in_flight', { environment: 'dev' })
  const started = performance.now()
  const res = await fetch(`${base}/test/stream?count=3&interval=100`)
  await sleep(50)
  t.equal(await inFlight(), 1, 'the stream is in flight while it runs')
  t.notOk(
    lines().some((l) => l.event === 'request_completed'),
    'not completed when the endpoint returned',
  )
  await res.text()
  const elapsed = performance.now() - started
  const completed = lines().find((l) => l.event === 'request_completed')
  t.match(completed, { level: 'info', status: 200, route: '/test/stream' })
  t.ok(
    Number(completed?.['duration_ms']) >= 250 && Number(completed?.['duration_ms']) <= elapsed + 5,
    `duration_ms ${String(completed?.['duration_ms'])} covers the stream`,
  )
  const text = (await app.metrics.render(undefined)).text
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', endpoint: '/test/stream', environment: 'dev', le: '0.25' }), 0)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', endpoint: '/test/stream', environment: 'dev' }), 1)
  t.equal(await inFlight(), 0)

  const controller = new AbortController()
  const endless = await fetch(`${base}/test/stream?count=100000&interval=5`, { signal: controller.signal })
  await endless.body?.getReader().read()
  controller.abort()
  for (let i = 0; i < 100 && (await inFlight()) !== 0; i++) await sleep(10)
  t.equal(await inFlight(), 0, 'a client that leaves ends the request')
  t.equal(lines().filter((l) => l.event === 'request_completed').length, 2)

  t.equal((await fetch(`${base}/test/stream`, { method: 'HEAD' })).status, 200)
  await (await fetch(`${base}/test/stream-fail`)).text()
  for (let i = 0; i < 100 && lines().filter((l) => l.event === 'request_completed').length < 4; i++) await sleep(10)
  const [head, broken] = lines()
    .filter((l) => l.event === 'request_completed')
    .slice(2)
  t.match(head, { method: 'HEAD', status: 200 }, 'HEAD on a stream completes without reading it')
  t.match(broken, { level: 'error', status: 200, error: { type: 'Error', message: 'stream broke' } }, 'a stream that breaks completes as an error')
  const after = (await app.metrics.render(undefined)).text
  t.equal(sample(after, 'http_exceptions_total', { exception_type: 'Error', environment: 'dev' }), 1)
  t.equal(await inFlight(), 0)
})

t.test('a slow reader of a stream is waited for, not buffered without bound', async (t) => {
  const chunk = 'x'.repeat(64 * 1024)
  let produced = 0
  const { base } = await startApp(t, {}, [
    {
      method: 'GET',
      path: '/test/firehose',
      handler: () => ({
        kind: 'stream',
        status: 200,
        stream: (async function* () {
          for (;;) {
            produced++
            yield chunk
          }
        })(),
      }),
    },
  ])
  const socket = connect(portOf(base), '127.0.0.1')
  socket.write('GET /test/firehose HTTP/1.1\r\nHost: x\r\n\r\n')
  socket.pause()
  await sleep(300)
  t.ok(produced < 200, `producer paused by backpressure after ${produced} chunks (${(produced * 64) / 1024} MiB)`)
  socket.destroy()
})

t.test('malformed requests and oversized headers get problem+json from the server itself', async (t) => {
  const { base } = await startApp(t)
  const port = portOf(base)
  const bad = await raw(port, 'GARBAGE\r\n\r\n')
  t.match(bad, /^HTTP\/1\.1 400 Bad Request/)
  t.match(bad, /application\/problem\+json/)
  t.match(bad, /"request_id":"[0-9a-f-]{36}"/)
  const big = await raw(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`)
  t.match(big, /^HTTP\/1\.1 431 /)
})

t.test('draining finishes a slow in-flight request, refuses new connections and closes keep-alive sockets', async (t) => {
  const { app, base } = await startApp(t, {}, testRoutes(300))
  t.equal(app.server.state(), 'ready')
  const slow = fetch(`${base}/test/slow`)
  await sleep(50)
  const drained = app.server.drain()
  t.equal(app.server.state(), 'draining')
  const res = await slow
  t.equal(res.status, 200)
  t.equal(res.headers.get('connection'), 'close', 'the last response tells the client the connection ends')
  t.same(await res.json(), { slow: true })
  t.same(await drained, { isComplete: true })
  t.equal(app.server.state(), 'stopped')
  await t.rejects(fetch(base), 'no new connections after the drain')
})

t.test('a drain that outlasts its timeout closes what is left', async (t) => {
  const { app, base } = await startApp(t, { SVC_DRAIN_TIMEOUT_MS: '50' }, testRoutes(2000))
  const slow = fetch(`${base}/test/slow`).catch((error: unknown) => error)
  await sleep(50)
  t.same(await app.server.drain(), { isComplete: false })
  t.type(await slow, Error, 'the cut request fails on the client')
})

t.test('a stream open on a keep-alive connection when the drain begins: its connection closes as it ends, and the drain with it', async (t) => {
  const { RawConnection } = await import('../fixtures/raw-http.js')
  const { app, base, adminBase } = await startApp(t, { SVC_ADMIN_PORT: '0', SVC_DRAIN_TIMEOUT_MS: '5000' }, testRoutes(100))
  const conn = await RawConnection.open(portOf(base))
  t.teardown(() => conn.destroy())
  conn.send('GET /test/empty HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal((await conn.next())?.headers['connection'], 'keep-alive', 'the connection is kept alive')
  conn.send('GET /test/stream?count=3&interval=150 HTTP/1.1\r\nHost: x\r\n\r\n')
  await sleep(50)
  const slow = fetch(`${base}/test/slow`)
  await sleep(20)
  const drainedAt = performance.now()
  const drained = app.server.drain()
  // The other listener answers during the drain: its replies are none of this listener's business.
  t.equal((await fetch(`${adminBase as string}/health`)).status, 200)
  t.equal((await slow).headers.get('connection'), 'close', 'a reply written during the drain closes its connection')
  const stream = await conn.next()
  t.equal(stream?.headers['connection'], 'keep-alive', 'the stream went out keep-alive, before the drain')
  t.equal(stream?.body.toString(), 'data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n', 'and ran to its end')
  t.ok(await conn.closed(500), 'then its connection, idle, was closed')
  t.same(await drained, { isComplete: true })
  const ms = performance.now() - drainedAt
  t.ok(ms < 1000, `the drain completed ${ms.toFixed(0)} ms after it began, as the stream ended, not at the 5000 ms timeout`)
  // The listeners share one lifecycle, now `stopped`, which the fixture's teardown reads as all stopped.
  await app.admin?.drain()
})

t.test('with an admin listener, an answer written after the other listener has stopped still closes its connection', async (t) => {
  const { app, base, adminBase } = await startApp(t, { SVC_ADMIN_PORT: '0', SVC_DRAIN_TIMEOUT_MS: '5000' }, testRoutes(300))
  t.equal((await fetch(`${adminBase as string}/ready`)).status, 200)
  const slow = fetch(`${base}/test/slow`)
  await sleep(50)
  const drained = Promise.all([app.server.drain(), app.admin?.drain()])
  await sleep(100)
  t.equal(app.lifecycle.state, 'stopped', 'the admin listener, idle, finished its drain first')
  const res = await slow
  t.equal(res.status, 200)
  t.equal(res.headers.get('connection'), 'close', 'the public answer still closes its connection')
  t.same(await drained, [{ isComplete: true }, { isComplete: true }])
})

t.test('a layer that fails (not an endpoint) still gets a 500 problem answer and a log line', async (t) => {
  const { createServer } = await import('../../lib/server/server.js')
  const { createRouter } = await import('../../lib/core/router.js')
  const { readConfig } = await import('../../lib/config/config.js')
  const { captureLogger } = await import('../fixtures/app.js')
  const config = readConfig({ PORT: '0' })
  const { logger, lines } = captureLogger(config)
  const router = createRouter(
    [
      { method: 'GET', path: '/sync', handler: () => ({ kind: 'json', status: 200 }) },
      { method: 'GET', path: '/async', handler: async () => ({ kind: 'json', status: 200 }) },
    ],
    [
      (next, route) => (ctx) => {
        if (route.template === '/sync') throw new Error('layer broke')
        const reply = next(ctx)
        return Promise.resolve(reply).then(() => Promise.reject(new Error('layer broke later')))
      },
    ],
  )
  const server = createServer({ config, router, logger })
  const { port } = await server.listen()
  t.teardown(() => server.drain())
  for (const path of ['/sync', '/async']) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`)
    t.equal(res.status, 500)
    const body = (await res.json()) as Record<string, unknown>
    t.match(body, { status: 500, type: 'urn:svc:problem:internal-error', request_id: res.headers.get('x-request-id') })
    t.notMatch(JSON.stringify(body), /layer broke/)
  }
  t.match(
    lines().map((l) => [l.event, (l['error'] as { message?: string } | undefined)?.message]),
    [
      ['request_failed', 'layer broke'],
      ['request_failed', 'layer broke later'],
    ],
  )
})

t.test('a written hook that throws is logged and counted, the hooks after it still run, and the process serves on', async (t) => {
  const { createServer } = await import('../../lib/server/server.js')
  const { createRouter } = await import('../../lib/core/router.js')
  const { readConfig } = await import('../../lib/config/config.js')
  const { createMetricsRegistry } = await import('../../lib/telemetry/metrics/registry.js')
  const { captureLogger } = await import('../fixtures/app.js')
  class HookError extends Error {
    override name = 'HookError'
  }
  const config = readConfig({ PORT: '0' })
  const { logger, lines } = captureLogger(config)
  const registry = createMetricsRegistry({ environment: config.environment, version: 'test' })
  const after: string[] = []
  const router = createRouter(
    [
      { method: 'GET', path: '/json', handler: () => ({ kind: 'json', status: 200, body: { ok: true } }) },
      { method: 'GET', path: '/empty', handler: () => ({ kind: 'json', status: 204 }) },
      {
        method: 'GET',
        path: '/stream',
        handler: () => ({
          kind: 'stream',
          status: 200,
          stream: (async function* () {
            yield 'data: {}\n\n'
          })(),
        }),
      },
    ],
    [
      (next) => (ctx) => {
        ctx.whenWritten(() => {
          throw new HookError(`hook broke on ${ctx.path}`)
        })
        ctx.whenWritten((c) => void after.push(c.path))
        return next(ctx)
      },
    ],
  )
  const server = createServer({ config, router, logger, metrics: registry.http })
  const { port } = await server.listen()
  t.teardown(() => server.drain())
  for (const [path, status] of [
    ['/json', 200],
    ['/empty', 204],
    ['/stream', 200],
  ] as const) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`)
    t.equal(res.status, status, `${path} answered`)
    await res.arrayBuffer()
  }
  await sleep(20)
  t.same(after, ['/json', '/empty', '/stream'], 'the hook after the one that threw ran every time')
  const failed = lines().filter((l) => l.event === 'reply_hook_failed')
  t.match(failed, [
    { level: 'error', method: 'GET', path: '/json', request_id: String, error: { type: 'HookError', message: 'hook broke on /json', stack: /HookError/ } },
    { path: '/empty', error: { message: 'hook broke on /empty' } },
    { path: '/stream', error: { message: 'hook broke on /stream' } },
  ])
  t.equal(failed.length, 3)
  const text = (await registry.render(undefined)).text
  t.equal(sample(text, 'http_exceptions_total', { exception_type: 'HookError', environment: 'dev' }), 3, 'counted in http_exceptions_total by class')
})

t.test('a reply replaced by the last-resort 500 is an error to the written hooks, even when a layer threw undefined', async (t) => {
  const { createServer } = await import('../../lib/server/server.js')
  const { createRouter } = await import('../../lib/core/router.js')
  const { readConfig } = await import('../../lib/config/config.js')
  const { captureLogger } = await import('../fixtures/app.js')
  const config = readConfig({ PORT: '0' })
  const { logger } = captureLogger(config)
  const heard: unknown[] = []
  const ok: Handler = () => ({ kind: 'json', status: 200, body: { ok: true } })
  // Layers are not guarded (an endpoint's throw is answered as a problem by the pipeline): what they throw reaches the server.
  const router = createRouter(
    [
      { method: 'GET', path: '/throws-nothing', handler: ok },
      { method: 'GET', path: '/rejects-null', handler: ok },
      { method: 'GET', path: '/fine', handler: ok },
    ],
    [
      (next) => (ctx) => {
        ctx.whenWritten((_, error) => void heard.push(error))
        return next(ctx)
      },
      (next, route) => {
        if (route.template === '/throws-nothing') {
          return () => {
            throw undefined
          }
        }
        return route.template === '/rejects-null' ? () => Promise.reject(null) : next
      },
    ],
  )
  const server = createServer({ config, router, logger })
  const { port } = await server.listen()
  t.teardown(() => server.drain())
  for (const [path, status] of [
    ['/throws-nothing', 500],
    ['/rejects-null', 500],
    ['/fine', 200],
  ] as const) {
    const res = await fetch(`http://127.0.0.1:${port}${path}`)
    t.equal(res.status, status, path)
    await res.arrayBuffer()
  }
  await sleep(20)
  t.equal(heard.length, 3)
  t.ok(heard[0] instanceof Error, 'throw undefined: the hooks hear an error')
  t.ok(heard[1] instanceof Error, 'a rejection with null: the hooks hear an error')
  t.equal(heard[2], undefined, 'a reply written as returned: no error')
})

t.test('ctx.signal aborts when the client goes away, and a body cut short is a 400', async (t) => {
  let aborted: Promise<boolean> | undefined
  const { base, lines } = await startApp(t, {}, [
    ...testRoutes(),
    {
      method: 'GET',
      path: '/test/wait',
      handler: (ctx) => {
        const signal = ctx.signal
        t.equal(ctx.signal, signal, 'one signal per request')
        aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(true)))
        return aborted.then(() => ({ kind: 'json', status: 200 }))
      },
    },
  ])
  const controller = new AbortController()
  const pending = fetch(`${base}/test/wait`, { signal: controller.signal }).catch(() => 'aborted')
  for (let i = 0; i < 100 && aborted === undefined; i++) await sleep(10)
  controller.abort()
  t.equal(await pending, 'aborted')
  t.equal(await aborted, true)

  const socket = connect(portOf(base), '127.0.0.1')
  socket.write('POST /test/size HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789')
  await sleep(50)
  socket.destroy()
  for (let i = 0; i < 100 && !lines().some((l) => l['path'] === '/test/size' && l.event === 'request_completed'); i++) await sleep(10)
  t.match(
    lines().find((l) => l['path'] === '/test/size' && l.event === 'request_completed'),
    { status: 400 },
  )
})

t.test('a stream may choose its own content type', async (t) => {
  const { base } = await startApp(t, {}, [
    {
      method: 'GET',
      path: '/test/ndjson',
      handler: () => ({
        kind: 'stream',
        status: 200,
        headers: { 'content-type': 'application/x-ndjson' },
        stream: (async function* () {
          yield '{}\n'
        })(),
      }),
    },
  ])
  const res = await fetch(`${base}/test/ndjson`)
  t.equal(res.headers.get('content-type'), 'application/x-ndjson')
  t.equal(await res.text(), '{}\n')
})

t.test('a client that resets the connection mid-request does not disturb the server', async (t) => {
  const { base } = await startApp(t)
  const socket = connect(portOf(base), '127.0.0.1')
  await new Promise((r) => socket.once('connect', r))
  socket.write('GET / HTTP/1.1\r\nHost')
  await sleep(20)
  socket.resetAndDestroy()
  await sleep(20)
  t.equal((await fetch(base)).status, 200)
})

t.test('a client that half-closes in the middle of its headers gets a 400 and harms nothing', async (t) => {
  const { base } = await startApp(t)
  t.match(await raw(portOf(base), 'GET / HTTP/1.1\r\nHost: x\r\n'), /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.equal((await fetch(base)).status, 200)
})
