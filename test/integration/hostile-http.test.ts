// Hostile request heads on raw sockets, against the real service: malformed request lines, methods,
// targets, encodings, limits, request-smuggling shapes, Host, Expect and header values. Every case
// checks the status, a problem+json body, the security headers, that nothing internal leaks,
// whether the connection closes, and the service still serves afterwards.
import t, { type Test } from 'tap'
import { startApp } from '../fixtures/app.js'
import { checkResponse, exchange, httpSeries, LEAK, RawConnection, scrape, startServer } from '../fixtures/raw-http.js'
import { sample } from '../fixtures/metrics-text.js'
import { testRoutes } from '../fixtures/routes.js'

const ENV = { SVC_DRAIN_TIMEOUT_MS: '200' }
const H = 'Host: svc.test\r\n'

type Case = Readonly<{
  name: string
  bytes: string
  status: number
  /** The problem type's suffix (`urn:svc:problem:<code>`), for error answers. */
  code?: string
  /** The server must close the connection after answering (framing it cannot trust). */
  isClosed?: boolean
}>

const REQUEST_LINES: readonly Case[] = [
  { name: 'a request line that is not HTTP', bytes: 'GARBAGE\r\n\r\n', status: 400, code: 'bad-request', isClosed: true },
  { name: 'a lower-case method', bytes: `get / HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'an unknown method token', bytes: `FROB / HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a 100-character method', bytes: `${'A'.repeat(100)} / HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a known method no route serves, on a known path', bytes: `PROPFIND / HTTP/1.1\r\n${H}\r\n`, status: 405, code: 'method-not-allowed' },
  { name: 'a known method no route serves, on an unknown path', bytes: `MKCOL /nope HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'not-found' },
  { name: 'an unknown HTTP version', bytes: `GET / HTTP/9.9\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'no version at all', bytes: `GET / FOO\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a TLS ClientHello on the plain-text port', bytes: '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03', status: 400, code: 'bad-request', isClosed: true },
  { name: 'the HTTP/2 connection preface', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', status: 400, code: 'bad-request', isClosed: true },
  { name: 'a space inside the path', bytes: `GET /a b HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a control byte inside the path', bytes: `GET /a\x01b HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'raw UTF-8 in the path', bytes: `GET /caf\xc3\xa9 HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a byte that is not UTF-8 in the path', bytes: `GET /\xff\xfe HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'LF-only line endings', bytes: `GET / HTTP/1.1\nHost: x\n\n`, status: 400, code: 'bad-request', isClosed: true },
]

const TARGETS: readonly Case[] = [
  { name: 'absolute-form, routed by its path', bytes: `GET http://user:secret@svc.test/test/empty?probe=1 HTTP/1.1\r\n${H}\r\n`, status: 204 },
  { name: 'absolute-form without a path', bytes: `GET HTTP://svc.test HTTP/1.1\r\n${H}\r\n`, status: 200 },
  { name: 'absolute-form with a query and no path', bytes: `GET http://svc.test?x=1 HTTP/1.1\r\n${H}\r\n`, status: 200 },
  { name: 'absolute-form of another scheme', bytes: `GET ftp://user:secret@svc.test/ HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'invalid-target' },
  { name: 'asterisk-form with GET', bytes: `GET * HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'invalid-target' },
  { name: 'asterisk-form with OPTIONS: no resource', bytes: `OPTIONS * HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'not-found' },
  { name: 'authority-form (CONNECT): not a proxy', bytes: `CONNECT svc.test:443 HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'invalid-target', isClosed: true },
  {
    name: 'malformed percent-encoding in a path parameter',
    bytes: `GET /api/v1/models/%E0%A4%A HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'invalid-path-parameter',
  },
  {
    name: 'percent-encoded bytes that are not UTF-8 in a path parameter',
    bytes: `GET /api/v1/models/%FF%FE HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'invalid-path-parameter',
  },
  { name: 'a truncated escape in a path parameter', bytes: `GET /v2/models/iris%/ready HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'invalid-path-parameter' },
  { name: 'a percent-encoded NUL in a path parameter', bytes: `GET /api/v1/models/%00 HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'model-not-found' },
  { name: 'malformed percent-encoding in a static path', bytes: `GET /%zz HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'not-found' },
  { name: 'dot segments (never normalised into another route)', bytes: `GET /api/../metrics HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'not-found' },
  { name: 'malformed percent-encoding in the query', bytes: `GET /api/insights?count=%zz HTTP/1.1\r\n${H}\r\n`, status: 400, code: 'invalid-parameter' },
  { name: 'a fragment sent by a broken client', bytes: `GET /#top HTTP/1.1\r\n${H}\r\n`, status: 404, code: 'not-found' },
]

const LIMITS: readonly Case[] = [
  { name: 'a 9 KiB target (over the 8 KiB limit)', bytes: `GET /${'a'.repeat(9 * 1024)} HTTP/1.1\r\n${H}\r\n`, status: 414, code: 'uri-too-long' },
  { name: 'a 9 KiB query', bytes: `GET /?q=${'a'.repeat(9 * 1024)} HTTP/1.1\r\n${H}\r\n`, status: 414, code: 'uri-too-long' },
  {
    name: 'a 20 KiB target (over the whole head limit)',
    bytes: `GET /${'a'.repeat(20 * 1024)} HTTP/1.1\r\n${H}\r\n`,
    status: 431,
    code: 'headers-too-large',
    isClosed: true,
  },
  { name: 'a 20 KiB header', bytes: `GET / HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, status: 431, code: 'headers-too-large', isClosed: true },
  {
    name: '3000 small headers',
    bytes: `GET / HTTP/1.1\r\n${H}${Array.from({ length: 3000 }, (_, i) => `X-${i}: 1\r\n`).join('')}\r\n`,
    status: 431,
    code: 'headers-too-large',
    isClosed: true,
  },
]

const FRAMING: readonly Case[] = [
  {
    name: 'Content-Length and Transfer-Encoding (CL.TE)',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding then Content-Length (TE.CL)',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'two different Content-Lengths',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: 4\r\nContent-Length: 5\r\n\r\nabcde`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'two equal Content-Lengths',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: 4\r\nContent-Length: 4\r\n\r\nabcd`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'a Content-Length list',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: 4, 4\r\n\r\nabcd`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'a negative Content-Length',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'a signed Content-Length',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: +4\r\n\r\nabcd`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'a hexadecimal Content-Length',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: 0x4\r\n\r\nabcd`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'a Content-Length past 2^64',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Content-Length: 99999999999999999999999\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding gzip (chunked not last)',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\nabcd`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding deflate',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: deflate\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding CHUNKED (codings are case-insensitive)',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Transfer-Encoding: CHUNKED\r\n\r\n2\r\nab\r\n0\r\n\r\n`,
    status: 200,
  },
  {
    name: 'Transfer-Encoding identity',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: identity\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding gzip, chunked',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding chunked, gzip',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding twice',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding in HTTP/1.0',
    bytes: `POST /test/size HTTP/1.0\r\n${H}Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding with a space before the colon',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'bad-request',
    isClosed: true,
  },
  {
    name: 'Transfer-Encoding with a vertical tab',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: \x0bchunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'bad-request',
    isClosed: true,
  },
  { name: 'an obs-fold continuation line', bytes: `GET / HTTP/1.1\r\n${H}X-A: a\r\n b\r\n\r\n`, status: 400, code: 'bad-request', isClosed: true },
  {
    name: 'Transfer-Encoding folded onto a second line',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    code: 'bad-request',
    isClosed: true,
  },
  { name: 'a header name with a space', bytes: `GET / HTTP/1.1\r\n${H}X A: b\r\n\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a header line without a colon', bytes: `GET / HTTP/1.1\r\n${H}XAB\r\n\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'a header line starting with a space', bytes: `GET / HTTP/1.1\r\n ${H}\r\n`, status: 400, code: 'bad-request', isClosed: true },
  {
    name: 'a chunk size that is not hexadecimal, on a route that does not read its body',
    bytes: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nzz\r\nabcd\r\n0\r\n\r\n`,
    status: 405,
    code: 'method-not-allowed',
    isClosed: true,
  },
  {
    name: 'a chunk size past 2^64',
    bytes: `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nabcd\r\n0\r\n\r\n`,
    status: 405,
    code: 'method-not-allowed',
    isClosed: true,
  },
  { name: 'no Host in HTTP/1.1', bytes: 'GET / HTTP/1.1\r\n\r\n', status: 400, code: 'invalid-host', isClosed: true },
  { name: 'two Hosts', bytes: `GET / HTTP/1.1\r\n${H}Host: other.test\r\n\r\n`, status: 400, code: 'invalid-host', isClosed: true },
  { name: 'no Host in HTTP/1.0 (allowed)', bytes: 'GET / HTTP/1.0\r\n\r\n', status: 200, isClosed: true },
]

const HEADER_VALUES: readonly Case[] = [
  {
    name: 'a bare CR in X-Request-ID',
    bytes: `GET / HTTP/1.1\r\n${H}X-Request-ID: abc\rSet-Cookie: a=b\r\n\r\n`,
    status: 400,
    code: 'bad-request',
    isClosed: true,
  },
  {
    name: 'a bare CR in traceparent',
    bytes: `GET / HTTP/1.1\r\n${H}traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\rX-Injected: 1\r\n\r\n`,
    status: 400,
    code: 'bad-request',
    isClosed: true,
  },
  { name: 'a NUL in a header value', bytes: `GET / HTTP/1.1\r\n${H}X-A: a\x00b\r\n\r\n`, status: 400, code: 'bad-request', isClosed: true },
  { name: 'bytes that are not UTF-8 in a header value', bytes: `GET / HTTP/1.1\r\n${H}User-Agent: \xff\xfe\xc3\r\n\r\n`, status: 200 },
  { name: 'a malformed traceparent', bytes: `GET / HTTP/1.1\r\n${H}traceparent: zz-\xff-<script>\r\ntracestate: ,,,=\r\n\r\n`, status: 200 },
  { name: 'a forged X-Request-ID', bytes: `GET / HTTP/1.1\r\n${H}X-Request-ID: ../../etc/passwd\r\n\r\n`, status: 200 },
  {
    name: 'a Content-Type that is not UTF-8',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Content-Type: application/json\xff\r\nContent-Length: 2\r\n\r\n{}`,
    status: 415,
    code: 'unsupported-media-type',
  },
  {
    name: 'an unsupported expectation',
    bytes: `POST /test/size HTTP/1.1\r\n${H}Expect: 200-ok\r\nContent-Length: 2\r\n\r\nab`,
    status: 417,
    code: 'expectation-failed',
    isClosed: true,
  },
  { name: 'a WebSocket upgrade, answered as a plain request', bytes: `GET / HTTP/1.1\r\n${H}Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n`, status: 200 },
]

const ALL_CASES: readonly Case[] = [...REQUEST_LINES, ...TARGETS, ...LIMITS, ...FRAMING, ...HEADER_VALUES]

/**
 * The precedence table of lib/server/inspect.ts, row against row: each case is wrong in two ways,
 * and the row that wins answers; rows 3–6 close the connection whichever row answered.
 */
const PRECEDENCE: readonly Case[] = [
  {
    name: 'an unsupported Expect (row 3) over invalid framing (row 4)',
    bytes: `POST /test/echo HTTP/1.1\r\n${H}Expect: 200-ok\r\nTransfer-Encoding: gzip\r\n\r\n`,
    status: 417,
    code: 'expectation-failed',
    isClosed: true,
  },
  {
    name: 'invalid framing (row 4) over a missing Host (row 5)',
    bytes: 'POST /test/echo HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n',
    status: 400,
    code: 'invalid-framing',
    isClosed: true,
  },
  {
    name: 'a missing Host (row 5) over a body too large (row 6)',
    bytes: 'POST /test/size HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n',
    status: 400,
    code: 'invalid-host',
    isClosed: true,
  },
  {
    name: 'a body too large (row 6) over a target too long (row 7)',
    bytes: `POST /test/${'a'.repeat(9 * 1024)} HTTP/1.1\r\n${H}Content-Length: 99999999\r\n\r\n`,
    status: 413,
    code: 'payload-too-large',
    isClosed: true,
  },
  {
    name: 'a target too long (row 7) over another scheme (row 8)',
    bytes: `GET ftp://svc.test/${'a'.repeat(9 * 1024)} HTTP/1.1\r\n${H}\r\n`,
    status: 414,
    code: 'uri-too-long',
  },
  {
    name: 'another scheme (row 8) over a bad path parameter (row 9)',
    bytes: `GET ftp://svc.test/test/items/%E0%A4%A/parts/1 HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'invalid-target',
  },
  {
    name: 'a bad path parameter (row 9) over a method not declared (row 10)',
    bytes: `DELETE /test/items/%E0%A4%A/parts/1 HTTP/1.1\r\n${H}\r\n`,
    status: 400,
    code: 'invalid-path-parameter',
  },
  {
    name: 'a target too long (row 7) over no route (row 10)',
    bytes: `GET /nope-${'a'.repeat(9 * 1024)} HTTP/1.1\r\n${H}\r\n`,
    status: 414,
    code: 'uri-too-long',
  },
]

const portOf = (base: string): number => Number(new URL(base).port)

/** Sends each case on its own connection and checks its one answer. */
const runCases = async (t: Test, base: string, cases: readonly Case[]): Promise<void> => {
  const port = portOf(base)
  for (const c of cases) {
    const { responses, isClosed } = await exchange(port, c.bytes, { closeWithinMs: c.isClosed === true ? 2000 : 50 })
    t.equal(responses.length, 1, `${c.name}: one answer`)
    const [response] = responses
    if (response === undefined) continue
    t.equal(response.status, c.status, `${c.name}: ${c.status}`)
    const problem = checkResponse(t, response, c.name)
    if (c.code !== undefined) t.equal(problem?.['type'], `urn:svc:problem:${c.code}`, `${c.name}: ${c.code}`)
    if (c.isClosed === true) t.ok(isClosed, `${c.name}: the connection is closed`)
    else t.notOk(isClosed, `${c.name}: the connection stays open`)
  }
  t.equal((await fetch(base)).status, 200, 'the service still serves')
}

t.test('malformed request lines and methods get a 400 from the server itself, or the router’s 404/405', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  await runCases(t, base, REQUEST_LINES)
})

t.test('request targets: absolute-form is routed by its path, other forms and bad encodings are 4xx', async (t) => {
  const { base, lines } = await startApp(t, ENV, testRoutes())
  await runCases(t, base, TARGETS)
  const logged = JSON.stringify(lines())
  t.notMatch(logged, /secret|svc\.test/, 'the authority of an absolute-form target is never logged')
  t.ok(
    lines().some((l) => l['path'] === '/test/empty' && l.event === 'request_completed'),
    'absolute-form logs the path it routed',
  )
})

t.test('an overlong target is 414, overlong headers 431', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  await runCases(t, base, LIMITS)
})

t.test('when a request is wrong in several ways, the first row of the precedence table answers', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  await runCases(t, base, PRECEDENCE)
})

t.test('a missing token (row 1) answers before a body too large (row 6), and the connection still closes', async (t) => {
  const { base } = await startApp(t, { ...ENV, SVC_API_TOKENS: 'client-token-0123456789' }, testRoutes())
  await runCases(t, base, [
    {
      name: 'no token, Content-Length over the limit',
      bytes: `POST /api/v1/predict HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 99999999\r\n\r\n`,
      status: 401,
      code: 'unauthorized',
      isClosed: true,
    },
  ])
})

t.test('request-smuggling shapes and a bad Host get a 400 and the connection closed', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  await runCases(t, base, FRAMING)
})

t.test('header values: no CR/LF gets through to be echoed, odd bytes harm nothing', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  await runCases(t, base, HEADER_VALUES)
  const { responses } = await exchange(portOf(base), `GET / HTTP/1.1\r\n${H}X-Request-ID: forged\r\n\r\n`, { closeWithinMs: 0 })
  const [response] = responses
  t.equal(response?.headerCounts['x-request-id'], 1, 'one X-Request-ID')
  t.not(response?.headers['x-request-id'], 'forged', 'an inbound X-Request-ID is not echoed')
  t.notOk(response !== undefined && ('set-cookie' in response.headers || 'x-injected' in response.headers))
})

t.test('a smuggled request behind an invalid Transfer-Encoding is never run', async (t) => {
  const { base, lines } = await startApp(t, ENV, testRoutes())
  const smuggled = `POST /test/echo HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\nGET /test/teapot HTTP/1.1\r\n${H}\r\n`
  const { responses, isClosed } = await exchange(portOf(base), smuggled, { expect: 2, closeWithinMs: 2000 })
  t.same(
    responses.map((r) => r.status),
    [400],
    'one answer',
  )
  t.ok(isClosed)
  t.notOk(
    lines().some((l) => l['path'] === '/test/teapot'),
    'the second request was never parsed',
  )
})

t.test('a chunk that breaks its framing while the endpoint reads the body cuts the connection; the request completes as a 400', async (t) => {
  const { base, lines } = await startApp(t, ENV, testRoutes())
  const { responses, isClosed } = await exchange(portOf(base), `POST /test/size HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\nzz\r\n`, {
    closeWithinMs: 2000,
  })
  t.same(responses, [], 'no answer can follow broken framing on this connection')
  t.ok(isClosed)
  for (let i = 0; i < 100 && !lines().some((l) => l.event === 'request_completed'); i++) await new Promise((r) => setTimeout(r, 10))
  t.match(
    lines().find((l) => l.event === 'request_completed'),
    { path: '/test/size', status: 400 },
  )
  t.equal((await fetch(base)).status, 200)
})

t.test('Expect: 100-continue gets 100 before a body within the limit, and a 413 without 100 over it', async (t) => {
  const { base } = await startApp(t, { ...ENV, SVC_MAX_BODY_BYTES: '1024' }, testRoutes())
  const conn = await RawConnection.open(portOf(base))
  t.teardown(() => conn.destroy())
  conn.send(`POST /test/size HTTP/1.1\r\n${H}Expect: 100-continue\r\nContent-Length: 2\r\n\r\n`)
  t.equal((await conn.next())?.status, 100, '100 Continue first')
  conn.send('ab')
  const ok = await conn.next()
  t.equal(ok?.status, 200)
  t.equal(ok?.body.toString(), '{"bytes":2}')

  const { responses, isClosed, received } = await exchange(
    portOf(base),
    `POST /test/size HTTP/1.1\r\n${H}Expect: 100-continue\r\nContent-Length: 5000\r\n\r\n`,
    { closeWithinMs: 2000 },
  )
  t.same(
    responses.map((r) => r.status),
    [413],
    'refused at once, no 100 Continue',
  )
  t.notMatch(received.toString('latin1'), /100 Continue/)
  t.ok(isClosed)
})

t.test('every answer carries nosniff and Cache-Control, and none X-Powered-By: success, problem, 404, 405, stream, refusal', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  const port = portOf(base)
  const cases: Array<[string, string, string]> = [
    ['GET /', `GET / HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['GET /health (its own Cache-Control)', `GET /health HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['GET /metrics', `GET /metrics HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['HEAD /', `HEAD / HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['OPTIONS /', `OPTIONS / HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['204', `GET /test/empty HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['404', `GET /nope HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['405', `DELETE / HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['500', `GET /test/throw HTTP/1.1\r\n${H}\r\n`, 'no-store'],
    ['stream', `GET /test/stream?count=1 HTTP/1.1\r\n${H}\r\n`, 'no-cache'],
    ['SSE', `GET /api/insights?count=1&interval=0 HTTP/1.1\r\n${H}\r\n`, 'no-cache'],
    ['refused by the parser', 'GARBAGE\r\n\r\n', 'no-store'],
  ]
  for (const [name, bytes, cacheControl] of cases) {
    const { responses } = await exchange(port, bytes, { isHead: name.startsWith('HEAD'), closeWithinMs: 0 })
    const [response] = responses
    if (response === undefined) {
      t.fail(`${name}: no answer`)
      continue
    }
    checkResponse(t, response, name)
    t.equal(response.headers['cache-control'], cacheControl, `${name}: Cache-Control ${cacheControl}`)
    t.equal(response.headerCounts['cache-control'], 1, `${name}: one Cache-Control`)
  }
})

t.test('no hostile head mints metric series: a second round of every case leaves the http_* series unchanged', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  const port = portOf(base)
  const round = async (salt: string): Promise<void> => {
    for (const c of ALL_CASES) {
      // The same shapes with different bytes where the path allows it: no label follows them.
      await exchange(port, c.bytes.replace(/ \/nope /, ` /nope-${salt} `).replace(/ \/%zz /, ` /%zz${salt} `), { closeWithinMs: 0 })
    }
  }
  await round('a')
  const first = httpSeries(await scrape(base))
  await round('b')
  const second = httpSeries(await scrape(base)).map((line) => line.replace(/ [\d.e+-]+$/, ''))
  t.equal(second.length, first.length, `${first.length} http_* samples before and after`)
  t.same(new Set(second), new Set(first.map((line) => line.replace(/ [\d.e+-]+$/, ''))), 'the same series')
  t.notMatch(second.join('\n'), /nope-|%zz|svc\.test/, 'no label carries a path')
})

t.test('what Node refuses before routing is answered, logged once as request_rejected and counted under <unmatched>', async (t) => {
  const { base, port, registry, lines } = await startServer(t, { routes: testRoutes() })
  const sent: Array<[string, number, string]> = [
    ['GARBAGE\r\n\r\n', 400, 'HPE_INVALID_METHOD'],
    [`GET / HTTP/1.1\r\n${H}X-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, 431, 'HPE_HEADER_OVERFLOW'],
    [`POST / HTTP/1.1\r\n${H}Content-Length: 1\r\nContent-Length: 2\r\n\r\n`, 400, 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  ]
  for (const [bytes, status] of sent) {
    const { responses } = await exchange(port, bytes, { closeWithinMs: 0 })
    t.equal(responses[0]?.status, status)
  }
  const connect = await exchange(port, `CONNECT svc.test:443 HTTP/1.1\r\n${H}\r\n`, { closeWithinMs: 0 })
  t.equal(connect.responses[0]?.status, 400)

  const rejected = lines().filter((l) => l.event === 'request_rejected')
  t.match(rejected, [
    { level: 'info', status: 400, code: 'BAD_REQUEST', reason: 'HPE_INVALID_METHOD', request_id: /^[0-9a-f-]{36}$/ },
    { level: 'info', status: 431, code: 'HEADERS_TOO_LARGE', reason: 'HPE_HEADER_OVERFLOW' },
    { level: 'info', status: 400, code: 'INVALID_FRAMING', reason: 'HPE_UNEXPECTED_CONTENT_LENGTH' },
    { level: 'info', status: 400, code: 'INVALID_TARGET', reason: 'CONNECT' },
  ])
  t.equal(rejected.length, 4, 'one line per refusal')
  t.notOk(
    lines().some((l) => l.event === 'request_started'),
    'no request_started: no request was parsed',
  )
  t.notMatch(JSON.stringify(rejected), LEAK)

  const text = (await registry.render(undefined)).text
  const unmatched = (method: string, status: string) => sample(text, 'http_requests_total', { method, endpoint: '<unmatched>', status, environment: 'dev' })
  t.equal(unmatched('OTHER', '400'), 2)
  t.equal(unmatched('OTHER', '431'), 1)
  t.equal(unmatched('CONNECT', '400'), 1)
  t.equal((await fetch(`${base}/test/empty`)).status, 204)
})

t.test('refusals are still answered and counted when request lines are below the log level', async (t) => {
  const { port, lines, registry } = await startServer(t, { env: { LOG_LEVEL: 'ERROR' } })
  t.equal((await exchange(port, 'GARBAGE\r\n\r\n', { closeWithinMs: 0 })).responses[0]?.status, 400)
  t.same(lines(), [])
  const text = (await registry.render(undefined)).text
  t.equal(sample(text, 'http_requests_total', { method: 'OTHER', endpoint: '<unmatched>', status: '400', environment: 'dev' }), 1)
})
