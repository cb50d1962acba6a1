// The HTTP check against loopback HTTP and HTTPS servers.
import { createServer as createHttpsServer } from 'node:https'
import t from 'tap'
import { httpCheck } from '../../lib/health/http.js'
import { closedPort, httpServer, serve } from '../fixtures/tcp.js'
import { selfSigned } from '../fixtures/tls.js'

const urlOf = (port: number, path = '/'): URL => new URL(`http://127.0.0.1:${port}${path}`)

t.test('a 200 is ok: one GET to the URL path and query, on a connection that is then closed', async (t) => {
  const seen: string[] = []
  const server = await httpServer(t, (req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.connection}`)
    res.end('fine')
  })
  const result = await httpCheck(urlOf(server.port, '/healthz?deep=1'), 1000)()
  t.same(Object.keys(result).sort(), ['latency_ms', 'status'], 'no error field on success')
  t.equal(result.status, 'ok')
  t.ok(result.latency_ms > 0 && result.latency_ms < 1000, `latency ${result.latency_ms} ms`)
  t.same(seen, ['GET /healthz?deep=1 close'])
  t.ok(await server.allClosed(), 'no keep-alive socket left behind')
})

t.test('a 204 is ok', async (t) => {
  const server = await httpServer(t, (_req, res) => res.writeHead(204).end())
  t.match(await httpCheck(urlOf(server.port), 1000)(), { status: 'ok' })
})

t.test('a 503 fails with HTTP 503', async (t) => {
  const server = await httpServer(t, (_req, res) => res.writeHead(503).end('down'))
  t.match(await httpCheck(urlOf(server.port), 1000)(), { status: 'fail', error: 'HTTP 503' })
})

t.test('a 301 fails with HTTP 301 and its Location is never requested', async (t) => {
  const seen: Array<string | undefined> = []
  const server = await httpServer(t, (req, res) => {
    seen.push(req.url)
    if (req.url === '/old') res.writeHead(301, { location: '/new' }).end()
    else res.end('moved here')
  })
  t.match(await httpCheck(urlOf(server.port, '/old'), 1000)(), { status: 'fail', error: 'HTTP 301' })
  t.same(seen, ['/old'])
})

t.test('a server that never answers fails with a timeout and sees its connection closed', async (t) => {
  const server = await httpServer(t, () => {})
  const timeoutMs = 500
  const started = performance.now()
  const result = await httpCheck(urlOf(server.port), timeoutMs)()
  const elapsed = performance.now() - started
  t.match(result, { status: 'fail', error: `timeout after ${timeoutMs} ms` })
  // At least the bound (less 5 ms for timer granularity) and within twice it, which a second wait
  // would reach; the other half is slack for a loaded machine.
  t.ok(elapsed >= timeoutMs - 5 && elapsed < 2 * timeoutMs, `resolved after ${elapsed.toFixed(1)} ms, bound ${timeoutMs} ms`)
  t.equal(server.accepted(), 1)
  t.ok(await server.allClosed(), 'no socket left open')
})

t.test('a huge body is not read: the server sees the connection closed before it has sent it', async (t) => {
  const total = 256 * 1024 * 1024
  const chunk = Buffer.alloc(64 * 1024, 'x')
  let sent = 0
  let isFinished = false
  const server = await httpServer(t, (_req, res) => {
    res.writeHead(200, { 'content-length': total })
    const pump = (): void => {
      while (sent < total) {
        sent += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
      res.end()
    }
    res.on('finish', () => (isFinished = true))
    pump()
  })
  t.match(await httpCheck(urlOf(server.port), 2000)(), { status: 'ok' })
  t.ok(await server.allClosed(), 'the server saw the connection closed')
  t.notOk(isFinished, 'the response never finished')
  t.ok(sent < total / 8, `sent ${(sent / 1024 / 1024).toFixed(1)} MiB of ${total / 1024 / 1024} MiB before the close`)
})

t.test('a closed port fails with connection refused', async (t) => {
  const port = await closedPort()
  t.match(await httpCheck(urlOf(port), 1000)(), { status: 'fail', error: 'connection refused' })
})

t.test('a host that does not resolve fails with host not found', async (t) => {
  t.match(await httpCheck(new URL('http://no-such-host.invalid/'), 5000)(), { status: 'fail', error: 'host not found' })
})

t.test('an https URL speaks TLS: a self-signed certificate fails with a certificate error', async (t) => {
  const pair = await selfSigned(t)
  if (pair === undefined) return
  let isRequested = false
  const server = await serve(
    t,
    createHttpsServer(pair, (_req, res) => {
      isRequested = true
      res.end('ok')
    }),
  )
  const result = await httpCheck(new URL(`https://127.0.0.1:${server.port}/`), 2000)()
  t.match(result, { status: 'fail', error: /SELF_SIGNED/ })
  t.notOk(isRequested, 'no request got past the handshake')
})

t.test('a URL with an unsupported scheme fails with the error code instead of throwing', async (t) => {
  t.match(await httpCheck(new URL('ftp://127.0.0.1/'), 1000)(), { status: 'fail', error: 'ERR_INVALID_PROTOCOL' })
})
