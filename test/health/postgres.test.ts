// The PostgreSQL check against a real server, and against the faults a real one will not stage.
import t from 'tap'
import { postgresCheck } from '../../lib/health/postgres.js'
import { startPostgres } from '../fixtures/postgres.js'
import { answeringServer, closedPort, closingServer, httpServer, silentServer } from '../fixtures/tcp.js'

const LOOPBACK = '127.0.0.1'

t.test('a real PostgreSQL answers the SSLRequest and the check is ok with a latency', async (t) => {
  const target = await startPostgres(t)
  if (target === undefined) return
  const result = await postgresCheck(target, 2000)()
  t.same(Object.keys(result).sort(), ['latency_ms', 'status'], 'no error field on success')
  t.equal(result.status, 'ok')
  t.ok(result.latency_ms > 0 && result.latency_ms < 2000, `latency ${result.latency_ms} ms`)
  t.equal(result.latency_ms, Math.round(result.latency_ms * 10) / 10, 'rounded to 0.1 ms')
})

t.test('a server answering N and staying open is ok, and the check closes the connection itself', async (t) => {
  const server = await answeringServer(t, ['N'], { isClosing: false })
  t.match(await postgresCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'ok' })
  t.ok(await server.allClosed(), 'no socket left open after a success')
})

t.test('a server offering TLS (S) is ok too, and the check closes the connection after the answer', async (t) => {
  const server = await answeringServer(t, ['S'], { isClosing: false })
  t.match(await postgresCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'ok' })
  t.ok(await server.allClosed(), 'closed right after the answer')
})

t.test('a closed port fails with connection refused', async (t) => {
  const port = await closedPort()
  t.match(await postgresCheck({ host: LOOPBACK, port }, 1000)(), { status: 'fail', error: 'connection refused', latency_ms: Number })
})

t.test('a server that accepts but never answers fails with a timeout once the bound has passed, and not twice it', async (t) => {
  const server = await silentServer(t)
  const timeoutMs = 500
  const started = performance.now()
  const result = await postgresCheck({ host: LOOPBACK, port: server.port }, timeoutMs)()
  const elapsed = performance.now() - started
  t.match(result, { status: 'fail', error: `timeout after ${timeoutMs} ms` })
  // At least the bound (less 5 ms for timer granularity) and within twice it, which a second wait
  // would reach; the other half is slack for a loaded machine.
  const isWithin = (ms: number): boolean => ms >= timeoutMs - 5 && ms < 2 * timeoutMs
  t.ok(isWithin(elapsed), `resolved after ${elapsed.toFixed(1)} ms, bound ${timeoutMs} ms`)
  t.ok(isWithin(result.latency_ms), `latency_ms ${result.latency_ms}`)
})

t.test('after a timeout no socket is left open: the silent server sees its connection closed', async (t) => {
  const server = await silentServer(t)
  await postgresCheck({ host: LOOPBACK, port: server.port }, 100)()
  t.equal(server.accepted(), 1)
  t.ok(await server.allClosed(), 'the server saw the connection closed')
})

t.test('an HTTP server on the database port fails with unexpected reply', async (t) => {
  const server = await httpServer(t, (_req, res) => res.end('hello'))
  t.match(await postgresCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'unexpected reply' })
})

t.test('bytes after the one-byte answer are an unexpected reply', async (t) => {
  const server = await answeringServer(t, ['NE'])
  t.match(await postgresCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'unexpected reply' })
})

t.test('a byte other than S or N is an unexpected reply', async (t) => {
  const server = await answeringServer(t, ['E'], { isClosing: false })
  t.match(await postgresCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'unexpected reply' })
})

t.test('a server that closes at once fails with connection closed', async (t) => {
  const server = await closingServer(t)
  t.match(await postgresCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'connection closed' })
})

t.test('a host that does not resolve fails with host not found', async (t) => {
  t.match(await postgresCheck({ host: 'no-such-host.invalid', port: 5432 }, 5000)(), { status: 'fail', error: 'host not found' })
})

t.test('an out-of-range port fails with the error code instead of throwing', async (t) => {
  t.match(await postgresCheck({ host: LOOPBACK, port: 70_000 }, 1000)(), { status: 'fail', error: 'ERR_SOCKET_BAD_PORT' })
})
