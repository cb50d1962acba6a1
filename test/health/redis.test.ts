// The Redis check against real servers (with and without requirepass) and scripted fakes.
import t from 'tap'
import { redisCheck } from '../../lib/health/redis.js'
import { startRedis } from '../fixtures/redis.js'
import { answeringServer, closedPort, httpServer, silentServer } from '../fixtures/tcp.js'

const LOOPBACK = '127.0.0.1'
const PASSWORD = 'correct horse\r\nbattery'

t.test('a real Redis answers PING and the check is ok with a latency', async (t) => {
  const target = await startRedis(t)
  if (target === undefined) return
  const result = await redisCheck(target, 2000)()
  t.same(Object.keys(result).sort(), ['latency_ms', 'status'], 'no error field on success')
  t.equal(result.status, 'ok')
  t.ok(result.latency_ms > 0 && result.latency_ms < 2000, `latency ${result.latency_ms} ms`)
})

t.test('a real Redis requiring a password fails with its NOAUTH reply when none is given', async (t) => {
  const target = await startRedis(t, { password: PASSWORD })
  if (target === undefined) return
  t.match(await redisCheck(target, 2000)(), { status: 'fail', error: 'NOAUTH Authentication required.' })
  t.match(await redisCheck({ ...target, password: '' }, 2000)(), { status: 'fail', error: 'NOAUTH Authentication required.' }, 'an empty password is none')
})

t.test('a real Redis requiring a password is ok with the right one, even one with spaces and CRLF', async (t) => {
  const target = await startRedis(t, { password: PASSWORD })
  if (target === undefined) return
  t.match(await redisCheck({ ...target, password: PASSWORD }, 2000)(), { status: 'ok' })
})

t.test('a wrong password fails with WRONGPASS and the error never contains the password', async (t) => {
  const target = await startRedis(t, { password: PASSWORD })
  if (target === undefined) return
  const wrong = 'hunter2-wrong'
  const result = await redisCheck({ ...target, password: wrong }, 2000)()
  t.equal(result.status, 'fail')
  t.match(result.error, /^WRONGPASS /)
  t.notMatch(JSON.stringify(result), wrong)
})

t.test('an error reply that quotes the password has it redacted', async (t) => {
  const server = await answeringServer(t, ["-ERR invalid password 'hunter2' for 'hunter2'\r\n"])
  const result = await redisCheck({ host: LOOPBACK, port: server.port, password: 'hunter2' }, 1000)()
  t.same(result.error, "ERR invalid password '***' for '***'")
})

t.test('a PONG split across TCP segments is reassembled and ok', async (t) => {
  const server = await answeringServer(t, ['+PO', 'NG\r\n'], { gapMs: 50 })
  t.match(await redisCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'ok' })
})

t.test('AUTH and PING replies split mid-line and across each other are reassembled and ok', async (t) => {
  const server = await answeringServer(t, ['+O', 'K\r\n+PO', 'NG\r', '\n'], { gapMs: 20 })
  t.match(await redisCheck({ host: LOOPBACK, port: server.port, password: 'secret' }, 1000)(), { status: 'ok' })
})

t.test('a server that closes after half a line fails with connection closed', async (t) => {
  const server = await answeringServer(t, ['+PO'])
  t.match(await redisCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'connection closed' })
})

t.test('an HTTP server on the cache port is an unexpected reply', async (t) => {
  const server = await httpServer(t, (_req, res) => res.end('hello'))
  t.match(await redisCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'unexpected reply' })
})

t.test('a reply that never ends its line is an unexpected reply once past 4 KiB, not buffered forever', async (t) => {
  const server = await answeringServer(t, [`+${'x'.repeat(5000)}`], { isClosing: false })
  t.match(await redisCheck({ host: LOOPBACK, port: server.port }, 1000)(), { status: 'fail', error: 'unexpected reply' })
})

t.test('a closed port fails with connection refused', async (t) => {
  const port = await closedPort()
  t.match(await redisCheck({ host: LOOPBACK, port }, 1000)(), { status: 'fail', error: 'connection refused' })
})

t.test('a server that never answers fails with a timeout and sees its connection closed', async (t) => {
  const server = await silentServer(t)
  const result = await redisCheck({ host: LOOPBACK, port: server.port }, 200)()
  t.match(result, { status: 'fail', error: 'timeout after 200 ms' })
  t.ok(result.latency_ms >= 195 && result.latency_ms < 400, `latency_ms ${result.latency_ms}`)
  t.ok(await server.allClosed(), 'no socket left open')
})
