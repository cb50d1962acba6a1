// One exchange with an S3 server: the reply read whole under one deadline, a body past the cap cut
// off, a body the peer cuts short reported as a reset (which the client retries).
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { ExchangeError, type Exchange, exchange, isReset } from '../../../../lib/models/store/s3/exchange.js'

const serve = async (t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<URL> => {
  const server = createServer(handle)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
}

const base = (origin: URL, extra: Partial<Exchange> = {}): Exchange => ({
  origin,
  method: 'GET',
  target: '/models-bk/k',
  headers: {},
  body: undefined,
  timeoutMs: 1000,
  maxBytes: 100,
  ...extra,
})

const faultOf = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error: unknown) {
    if (error instanceof ExchangeError) return error.fault
    throw error
  }
  throw new Error('resolved')
}

t.test('a reply: status, headers and the whole body; a PUT sends its body with its length', async (t) => {
  let received = ''
  const origin = await serve(t, (req, res) => {
    req.on('data', (chunk: Buffer) => (received += chunk.toString()))
    req.on('end', () => res.writeHead(200, { etag: '"e"' }).end(`${req.method} ${req.url} ${req.headers['content-length']}`))
  })
  const reply = await exchange(base(origin, { method: 'PUT', body: Buffer.from('hello') }))
  t.equal(reply.status, 200)
  t.equal(reply.headers.etag, '"e"')
  t.equal(reply.body.toString(), 'PUT /models-bk/k 5')
  t.equal(received, 'hello')
})

t.test('a body over the cap ends the exchange, by its Content-Length or as it streams; a HEAD has none', async (t) => {
  const origin = await serve(t, (req, res) => {
    if (req.url === '/declared') res.writeHead(200, { 'content-length': '1000' }).end(Buffer.alloc(1000))
    else if (req.method === 'HEAD') res.writeHead(200, { 'content-length': '1000' }).end()
    else {
      res.writeHead(200)
      res.write(Buffer.alloc(60))
      setTimeout(() => res.end(Buffer.alloc(60)), 20)
    }
  })
  t.match(await faultOf(exchange(base(origin, { target: '/declared' }))), { kind: 'tooLarge', reply: { status: 200 } })
  t.match(await faultOf(exchange(base(origin, { target: '/streamed' }))), { kind: 'tooLarge' })
  t.equal((await exchange(base(origin, { method: 'HEAD', maxBytes: 0 }))).headers['content-length'], '1000')
})

t.test('no reply within the deadline is a timeout; a body cut short or a reset is a reset; a refused connection is not', async (t) => {
  const origin = await serve(t, (req, res) => {
    if (req.url === '/hang') return
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-length': '50' })
      res.write(Buffer.alloc(10))
      setTimeout(() => res.socket?.destroy(), 10)
      return
    }
    req.socket.destroy()
  })
  t.same(await faultOf(exchange(base(origin, { target: '/hang', timeoutMs: 100 }))), { kind: 'timeout' })
  const cut = await faultOf(exchange(base(origin, { target: '/cut' })))
  t.ok(isReset(cut), `a body cut short: ${JSON.stringify(cut)}`)
  const reset = await faultOf(exchange(base(origin, { target: '/reset' })))
  t.ok(isReset(reset), 'a connection closed before the reply')
  const closed = await serve(t, () => {})
  const port = closed.port
  const refused = await faultOf(exchange(base(new URL(`http://127.0.0.1:${port === '1' ? '2' : '1'}`))))
  t.notOk(isReset(refused), 'a refused connection is not retried as a reset')
  t.notOk(isReset({ kind: 'timeout' }))
})

t.test('https and default ports: a TLS handshake with a plain server fails as the network, not a reset', async (t) => {
  const origin = await serve(t, (_req, res) => res.end('plain'))
  const fault = await faultOf(exchange(base(new URL(`https://127.0.0.1:${origin.port}`))))
  t.equal(fault.kind, 'network')
  t.notOk(isReset(fault) && false)
  // No port: the scheme's own; a name that does not resolve fails (or times out) without a reply.
  const unnamed = await faultOf(exchange(base(new URL('http://svc-test.invalid'), { timeoutMs: 2000 })))
  t.ok(unnamed.kind === 'network' || unnamed.kind === 'timeout', unnamed.kind)
})
