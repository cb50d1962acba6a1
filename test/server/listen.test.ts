// Binding a listener and draining it, on a bare node:http server over loopback: the lifecycle's
// states, the listen error, a drain that waits for the request in flight, and one cut at its timeout.
import { createServer, type Server } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { createLifecycle } from '../../lib/core/lifecycle.js'
import { createListener } from '../../lib/server/listen.js'

/** A server whose answers take `delayMs`, closed at teardown whatever the test did. */
const slowServer = (t: Test, delayMs: number): Server => {
  const http = createServer((_req, res) => void sleep(delayMs).then(() => res.end('done')))
  t.teardown(() => {
    http.closeAllConnections()
    http.close()
  })
  return http
}

t.test('listen binds, turns the lifecycle ready, and resolves with the address', async (t) => {
  const lifecycle = createLifecycle()
  const listener = createListener(slowServer(t, 0), lifecycle, { address: { host: '127.0.0.1', port: 0 }, shutdownDelayMs: 0, drainTimeoutMs: 1000 })
  const address = await listener.listen()
  t.equal(address.address, '127.0.0.1')
  t.ok(address.port > 0)
  t.equal(lifecycle.state, 'ready')
  t.equal(await (await fetch(`http://127.0.0.1:${address.port}/`)).text(), 'done')
})

t.test('a port already taken rejects listen, and the lifecycle stays starting', async (t) => {
  const first = createListener(slowServer(t, 0), createLifecycle(), { address: { host: '127.0.0.1', port: 0 }, shutdownDelayMs: 0, drainTimeoutMs: 1000 })
  const { port } = await first.listen()
  const lifecycle = createLifecycle()
  const second = createListener(slowServer(t, 0), lifecycle, { address: { host: '127.0.0.1', port }, shutdownDelayMs: 0, drainTimeoutMs: 1000 })
  await t.rejects(second.listen(), { code: 'EADDRINUSE' })
  t.equal(lifecycle.state, 'starting')
})

t.test('a drain is draining at once, waits for the request in flight, then is stopped', async (t) => {
  const lifecycle = createLifecycle()
  const listener = createListener(slowServer(t, 200), lifecycle, { address: { host: '127.0.0.1', port: 0 }, shutdownDelayMs: 50, drainTimeoutMs: 5000 })
  const { port } = await listener.listen()
  const answer = fetch(`http://127.0.0.1:${port}/`).then((res) => res.text())
  await sleep(20)
  const drained = listener.drain()
  t.equal(lifecycle.state, 'draining')
  t.notOk(lifecycle.closing.aborted, 'streams are told to end only after the shutdown delay')
  t.same(await drained, { isComplete: true })
  t.equal(await answer, 'done')
  t.equal(lifecycle.state, 'stopped')
  t.ok(lifecycle.closing.aborted)
})

t.test('a request longer than the drain timeout is cut, and the drain says so', async (t) => {
  const lifecycle = createLifecycle()
  const listener = createListener(slowServer(t, 10_000), lifecycle, { address: { host: '127.0.0.1', port: 0 }, shutdownDelayMs: 0, drainTimeoutMs: 100 })
  const { port } = await listener.listen()
  const answer = fetch(`http://127.0.0.1:${port}/`).then(
    () => 'answered',
    () => 'cut',
  )
  await sleep(20)
  t.same(await listener.drain(), { isComplete: false })
  t.equal(await answer, 'cut')
})

t.test('a keep-alive connection idle between requests does not hold the drain', async (t) => {
  const lifecycle = createLifecycle()
  const http = slowServer(t, 0)
  http.keepAliveTimeout = 60_000
  const listener = createListener(http, lifecycle, { address: { host: '127.0.0.1', port: 0 }, shutdownDelayMs: 0, drainTimeoutMs: 5000 })
  const { port } = await listener.listen()
  await (await fetch(`http://127.0.0.1:${port}/`)).text()
  const started = performance.now()
  t.same(await listener.drain(), { isComplete: true })
  t.ok(performance.now() - started < 4000, 'well before the drain timeout')
})
