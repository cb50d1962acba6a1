// Slow and idle clients: a slowloris trickling its headers, a body that never finishes, idle
// keep-alive and never-speaking sockets, stream readers that read slowly or not at all, and the
// cap on open connections. Timeouts are shortened through createServer's `limits`, so each case
// takes a fraction of a second; the production values are checked separately.
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { LIMITS } from '../../lib/server/server.js'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { checkResponse, exchange, RawConnection, startServer } from '../fixtures/raw-http.js'
import { testRoutes } from '../fixtures/routes.js'

const H = 'Host: svc.test\r\n'

/** Polls until `check` holds, for at most `withinMs`. */
const until = async (check: () => boolean, withinMs = 2000): Promise<boolean> => {
  const deadline = performance.now() + withinMs
  while (!check() && performance.now() < deadline) await sleep(5)
  return check()
}

/** Writes `bytes` one at a time, `gapMs` apart, until the connection closes. */
const trickle = async (conn: RawConnection, bytes: string, gapMs: number): Promise<void> => {
  for (const byte of bytes) {
    if (conn.isClosed || conn.socket.destroyed) return
    conn.socket.write(byte)
    await sleep(gapMs)
  }
}

t.test('the production limits: 10 s for headers, checked every second, 30 s per request, 65 s idle keep-alive', async (t) => {
  t.same(LIMITS, {
    headersTimeoutMs: 10_000,
    checkIntervalMs: 1_000,
    requestTimeoutMs: 30_000,
    maxHeaderBytes: 16_384,
    maxUrlBytes: 8_192,
    streamStallMs: 30_000,
  })
  const { base, app } = await startApp(t, { SVC_DRAIN_TIMEOUT_MS: '200' })
  t.equal(app.server.http.keepAliveTimeout, 65_000, 'SVC_KEEP_ALIVE_TIMEOUT_MS, by default')
  const { responses } = await exchange(Number(new URL(base).port), `GET / HTTP/1.1\r\n${H}\r\n`, { closeWithinMs: 0 })
  t.equal(responses[0]?.headers['keep-alive'], 'timeout=65', 'clients are told how long an idle connection is kept')
})

t.test('SVC_KEEP_ALIVE_TIMEOUT_MS: an idle connection is kept that long on both listeners, and clients are told so', async (t) => {
  const { base, adminBase, app } = await startApp(t, { SVC_KEEP_ALIVE_TIMEOUT_MS: '1000', SVC_ADMIN_PORT: '0', SVC_DRAIN_TIMEOUT_MS: '200' }, testRoutes())
  t.equal(app.admin?.http.keepAliveTimeout, 1000, 'the admin listener keeps the same setting')
  for (const [listener, url, path] of [
    ['public', base, '/test/empty'],
    ['admin', adminBase as string, '/health'],
  ] as const) {
    const conn = await RawConnection.open(Number(new URL(url).port))
    t.teardown(() => conn.destroy())
    conn.send(`GET ${path} HTTP/1.1\r\n${H}\r\n`)
    const response = await conn.next()
    t.equal(response?.headers['keep-alive'], 'timeout=1', `${listener}: Keep-Alive says 1 s`)
    const idleFrom = performance.now()
    t.notOk(await conn.closed(900), `${listener}: kept open while idle for less than the setting`)
    t.ok(await conn.closed(3000), `${listener}: then closed`)
    // Node closes a second after the setting (its keep-alive buffer, Node 20.20), never before it.
    const idle = performance.now() - idleFrom
    t.ok(idle >= 990 && idle < 3000, `${listener}: closed after ${Math.round(idle)} ms idle`)
  }
})

t.test('an idle keep-alive connection is not held to the headers timeout: the next request, sent later, is answered', async (t) => {
  // The headers timeout runs from a request's first byte, not over the idle time before it, so it
  // need not exceed the keep-alive timeout (lib/server/server.ts, LIMITS).
  const { port } = await startServer(t, {
    routes: testRoutes(),
    limits: { headersTimeoutMs: 100, requestTimeoutMs: 1000, checkIntervalMs: 25, keepAliveTimeoutMs: 5000 },
  })
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.send(`GET /test/empty HTTP/1.1\r\n${H}\r\n`)
  t.equal((await conn.next())?.status, 204)
  // Past the headers timeout plus Node's 1 s keep-alive buffer: open still, so neither closed it.
  t.notOk(await conn.closed(1500), 'idle for fifteen headers timeouts, and still open')
  conn.send(`GET /test/empty HTTP/1.1\r\n${H}\r\n`)
  t.equal((await conn.next())?.status, 204, 'and the next request on it is answered')
})

t.test('slowloris: headers trickled a byte at a time are cut at headersTimeout with a 408', async (t) => {
  const { port, lines, registry } = await startServer(t, { limits: { headersTimeoutMs: 300, requestTimeoutMs: 2000, checkIntervalMs: 25 } })
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  const started = performance.now()
  void trickle(conn, `GET / HTTP/1.1\r\n${H}X-Slow: ${'z'.repeat(1000)}\r\n\r\n`, 20)
  const response = await conn.next(3000)
  t.ok(await conn.closed(1000), 'the connection is closed')
  const elapsed = performance.now() - started
  t.ok(elapsed >= 290 && elapsed < 1500, `cut after ${Math.round(elapsed)} ms`)
  t.equal(response?.status, 408)
  if (response !== undefined) t.match(checkResponse(t, response, 'slowloris'), { type: 'urn:svc:problem:request-timeout' })
  t.match(
    lines().filter((l) => l.event === 'request_rejected'),
    [{ status: 408, code: 'REQUEST_TIMEOUT', reason: 'ERR_HTTP_REQUEST_TIMEOUT' }],
  )
  const text = (await registry.render(undefined)).text
  t.equal(sample(text, 'http_requests_total', { method: 'OTHER', endpoint: '<unmatched>', status: '408', environment: 'dev' }), 1)
})

t.test('a body trickled past requestTimeout is cut, and its request completes as a 400', async (t) => {
  const { port, lines } = await startServer(t, { routes: testRoutes(), limits: { headersTimeoutMs: 200, requestTimeoutMs: 400, checkIntervalMs: 25 } })
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  const started = performance.now()
  conn.send(`POST /test/size HTTP/1.1\r\n${H}Content-Length: 1000\r\n\r\n`)
  void trickle(conn, 'b'.repeat(1000), 20)
  t.ok(await conn.closed(3000), 'the connection is closed')
  const elapsed = performance.now() - started
  t.ok(elapsed >= 390 && elapsed < 1500, `cut after ${Math.round(elapsed)} ms`)
  t.ok(await until(() => lines().some((l) => l.event === 'request_completed')))
  t.match(
    lines().find((l) => l.event === 'request_completed'),
    { path: '/test/size', status: 400 },
  )
})

t.test('an idle keep-alive connection is closed after keepAliveTimeout', async (t) => {
  const { port } = await startServer(t, { routes: testRoutes(), limits: { keepAliveTimeoutMs: 200 } })
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.send(`GET /test/empty HTTP/1.1\r\n${H}\r\n`)
  t.equal((await conn.next())?.status, 204)
  const idleFrom = performance.now()
  t.notOk(await conn.closed(100), 'kept open at first')
  t.ok(await conn.closed(3000), 'then closed')
  const idle = performance.now() - idleFrom
  // Node closes it somewhat after keepAliveTimeout (about a second after, measured on Node 20.20).
  t.ok(idle >= 190 && idle < 2500, `closed after ${Math.round(idle)} ms idle`)
  t.equal(conn.received.toString('latin1').match(/HTTP\/1\.1 /g)?.length, 1, 'closed without another answer')
})

t.test('a socket that never sends a byte is closed at headersTimeout, without an answer or a log line', async (t) => {
  const { port, lines } = await startServer(t, { limits: { headersTimeoutMs: 150, requestTimeoutMs: 1000, checkIntervalMs: 25 } })
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  t.ok(await conn.closed(2000), 'closed')
  t.equal(conn.received.length, 0, 'no answer')
  t.same(
    lines().filter((l) => l.event === 'request_rejected'),
    [],
  )
})

/** A stream of 64 KiB chunks for as long as the client takes them; counts what it produced. */
const firehose = () => {
  const state = { produced: 0, isStopped: false }
  const chunk = 'x'.repeat(64 * 1024)
  return {
    state,
    route: {
      method: 'GET' as const,
      path: '/test/firehose',
      handler: () => ({
        kind: 'stream' as const,
        status: 200,
        stream: (async function* () {
          try {
            for (;;) {
              state.produced++
              yield chunk
            }
          } finally {
            state.isStopped = true
          }
        })(),
      }),
    },
  }
}

t.test('a stream reader that reads nothing is buffered a bounded amount, then dropped after streamStallMs', async (t) => {
  const { state, route } = firehose()
  const { server, port, lines } = await startServer(t, { routes: [route], limits: { streamStallMs: 300 } })
  const sockets: Socket[] = []
  server.http.on('connection', (socket: Socket) => sockets.push(socket))
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.socket.pause()
  conn.send(`GET /test/firehose HTTP/1.1\r\n${H}\r\n`)
  let buffered = 0
  const started = performance.now()
  while (performance.now() - started < 200) {
    buffered = Math.max(buffered, sockets[0]?.writableLength ?? 0)
    await sleep(5)
  }
  t.ok(buffered <= 128 * 1024, `at most ${Math.round(buffered / 1024)} KiB waits in the process (one chunk and the high-water mark)`)
  t.ok(state.produced < 400, `the producer waited, after ${state.produced} chunks (the rest sits in kernel buffers)`)
  t.ok(await until(() => sockets[0]?.destroyed === true), 'the stalled response is dropped')
  t.ok(await until(() => state.isStopped), 'and its stream stopped')
  t.match(
    lines().find((l) => l.event === 'stream_stalled'),
    { level: 'warning', path: '/test/firehose', stalled_ms: 300 },
  )
  t.ok(await until(() => lines().some((l) => l.event === 'request_completed')), 'the request completes')
})

t.test('a slow reader that keeps reading is waited for, not dropped', async (t) => {
  const { state, route } = firehose()
  // Pauses of 150 ms against a 1 s stall limit: wide enough that a busy machine's late timers
  // cannot turn a pause into a stall.
  const { port, lines } = await startServer(t, { routes: [route], limits: { streamStallMs: 1000 } })
  // A client that only counts what it reads, so its own parsing never slows it.
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  let received = 0
  socket.on('data', (chunk: Buffer) => (received += chunk.length))
  socket.write(`GET /test/firehose HTTP/1.1\r\n${H}\r\n`)
  for (let i = 0; i < 4; i++) {
    socket.pause()
    await sleep(150)
    socket.resume()
    await sleep(20)
  }
  t.notOk(socket.destroyed || socket.readableEnded, `still streaming after ${Math.round(received / 1024 / 1024)} MiB`)
  t.notOk(state.isStopped)
  t.notOk(lines().some((l) => l.event === 'stream_stalled'))
})

t.test('a client that never reads /api/insights cannot make the process buffer: the stream ends and frees its slot', async (t) => {
  const { app, base, lines } = await startApp(t, { SVC_DRAIN_TIMEOUT_MS: '200', SVC_MAX_STREAMS: '1' })
  const sockets: Socket[] = []
  app.server.http.on('connection', (socket: Socket) => sockets.push(socket))
  const conn = await RawConnection.open(Number(new URL(base).port))
  t.teardown(() => conn.destroy())
  conn.socket.pause()
  conn.send(`GET /api/insights?count=20&interval=0 HTTP/1.1\r\n${H}\r\n`)
  let buffered = 0
  const completed = (): boolean => lines().some((l) => l.event === 'request_completed' && l['path'] === '/api/insights')
  const deadline = performance.now() + 3000
  while (!completed() && performance.now() < deadline) {
    buffered = Math.max(buffered, sockets[0]?.writableLength ?? 0)
    await sleep(2)
  }
  t.ok(completed(), 'the stream completed without the client reading')
  t.ok(buffered <= 16 * 1024, `at most ${buffered} bytes waited in the process`)
  const next = await fetch(`${base}/api/insights?count=1&interval=0`)
  t.equal(next.status, 200, 'the stream slot was released')
  await next.text()
})

t.test('SVC_MAX_CONNECTIONS: a connection over the cap gets a 503 with Retry-After, and none of its request runs', async (t) => {
  let hits = 0
  const counted = {
    method: 'GET' as const,
    path: '/test/hit',
    handler: () => {
      hits += 1
      return { kind: 'json' as const, status: 204 }
    },
  }
  const { port, lines, registry } = await startServer(t, { routes: [counted], maxConnections: 2 })
  const held = [await RawConnection.open(port), await RawConnection.open(port)]
  t.teardown(() => {
    for (const c of held) c.destroy()
  })
  held[0]?.send(`GET /test/hit HTTP/1.1\r\n${H}\r\n`)
  t.equal((await held[0]?.next())?.status, 204, 'connections within the cap are served')

  for (let i = 0; i < 3; i++) {
    const { responses, isClosed } = await exchange(port, `GET /test/hit HTTP/1.1\r\n${H}\r\n`, { closeWithinMs: 1000 })
    const [response] = responses
    t.equal(response?.status, 503)
    t.equal(response?.headers['retry-after'], '1')
    if (response !== undefined) t.match(checkResponse(t, response, 'over the cap'), { type: 'urn:svc:problem:too-many-connections' })
    t.ok(isClosed, 'and closed')
  }
  t.equal((await fetch(`http://127.0.0.1:${port}/test/hit`).catch(() => undefined))?.status, 503, 'fetch sees the 503 too')
  t.equal(hits, 1, 'no refused request reached the endpoint')
  t.match(lines().filter((l) => l.event === 'request_rejected')[0], { level: 'warning', status: 503, code: 'TOO_MANY_CONNECTIONS', reason: 'MAX_CONNECTIONS' })
  const text = (await registry.render(undefined)).text
  t.equal(sample(text, 'http_requests_total', { method: 'OTHER', endpoint: '<unmatched>', status: '503', environment: 'dev' }), 4)

  held[1]?.destroy()
  await sleep(50)
  const { responses } = await exchange(port, `GET /test/hit HTTP/1.1\r\n${H}\r\n`, { closeWithinMs: 0 })
  t.equal(responses[0]?.status, 204, 'a freed slot serves again')
})
