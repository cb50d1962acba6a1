// What never becomes a routed request, on a bare node:http server over loopback with the refusals
// wired in: each answered on the socket as a problem with Connection: close and the request id in
// header and body, logged as request_rejected, and a connection over the cap refused at once.
import { createServer, type Server } from 'node:http'
import t, { type Test } from 'tap'
import { refuseBeforeRouting } from '../../lib/server/refusals.js'
import { type LoggedLine, logLines } from '../fixtures/log-lines.js'
import { exchange, RawConnection } from '../fixtures/raw-http.js'
import { serve } from '../fixtures/tcp.js'

type Setup = Readonly<{ port: number; lines: () => LoggedLine[] }>

const setup = async (t: Test, maxConnections = 0): Promise<Setup> => {
  const { logger, lines } = logLines('info')
  const http: Server = createServer({ maxHeaderSize: 1024 }, (_req, res) => res.end('routed'))
  refuseBeforeRouting(http, { logger, metrics: undefined, maxHeaderBytes: 1024, maxConnections })
  const { port } = await serve(t, http)
  return { port, lines }
}

const refused = async (port: number, bytes: string) => {
  const { responses, isClosed } = await exchange(port, bytes)
  const response = responses[0]
  if (response === undefined) throw new Error('no answer')
  return { response, body: JSON.parse(response.body.toString('utf8')) as Record<string, unknown>, isClosed }
}

t.test('bytes that are not HTTP: 400 BAD_REQUEST, closed, logged with the reason', async (t) => {
  const { port, lines } = await setup(t)
  const { response, body, isClosed } = await refused(port, 'HELLO\r\n\r\n')
  t.equal(response.status, 400)
  t.equal(response.headers['content-type'], 'application/problem+json')
  t.equal(response.headers['connection'], 'close')
  t.equal(response.headers['x-content-type-options'], 'nosniff')
  t.equal(response.headers['cache-control'], 'no-store')
  t.equal(Number(response.headers['content-length']), response.body.length, 'the length counts the spliced id')
  t.match(body, { type: 'urn:svc:problem:bad-request', status: 400, detail: 'The request is not valid HTTP/1.1' })
  t.equal(body['request_id'], response.headers['x-request-id'])
  t.notOk('instance' in body)
  t.ok(isClosed)
  t.match(lines(), [{ level: 'info', event: 'request_rejected', status: 400, code: 'BAD_REQUEST', request_id: body['request_id'] }])
  t.match(lines()[0]?.['reason'], /^HPE_/)
})

t.test('each of Node refusals gets its own answer', async (t) => {
  const { port } = await setup(t)
  const big = await refused(port, `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(2000)}\r\n\r\n`)
  t.match(big.body, { status: 431, detail: 'Request line and headers exceed 1024 bytes' })
  const framing = await refused(port, 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n')
  t.match(framing.body, { status: 400, type: 'urn:svc:problem:invalid-framing' })
})

t.test('CONNECT is refused as a target that is not a path', async (t) => {
  const { port, lines } = await setup(t)
  const { body } = await refused(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
  t.match(body, { status: 400, type: 'urn:svc:problem:invalid-target' })
  t.match(lines(), [{ code: 'INVALID_TARGET', reason: 'CONNECT' }])
})

t.test('a connection over the cap gets 503 with Retry-After, logged as a warning; the others are served', async (t) => {
  const { port, lines } = await setup(t, 1)
  const first = await RawConnection.open(port)
  t.teardown(() => first.destroy())
  first.send('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
  t.equal((await first.next())?.body.toString(), 'routed')
  const { response, body } = await refused(port, 'GET / HTTP/1.1\r\nHost: a\r\n\r\n')
  t.equal(response.status, 503)
  t.equal(response.headers['retry-after'], '1')
  t.match(body, { type: 'urn:svc:problem:too-many-connections' })
  t.match(lines(), [{ level: 'warning', event: 'request_rejected', code: 'TOO_MANY_CONNECTIONS', reason: 'MAX_CONNECTIONS' }])
})
