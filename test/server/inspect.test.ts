// What the request head decides before the pipeline runs (rows 3–8 of inspect.ts's table), over a
// real loopback socket with raw request bytes: each refusal, which of several wins, whether the
// body is abandoned, and 100 Continue only for a request nothing refused.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { closesConnection, createInspector, type Expect } from '../../lib/server/inspect.js'
import { exchange } from '../fixtures/raw-http.js'
import { serve } from '../fixtures/tcp.js'

const MAX_BODY = 100
const MAX_URL = 40

/** Answers each request with what the inspector decided: the refusal's code and whether the body is abandoned. */
const inspecting = async (t: Test): Promise<number> => {
  const inspect = createInspector(MAX_BODY, MAX_URL)
  const answer = (expect: Expect) => (req: IncomingMessage, res: ServerResponse) => {
    const ctx = new Ctx(req, res, MAX_BODY)
    inspect(ctx, req, res, expect)
    const body = JSON.stringify({
      code: ctx.rejection?.code ?? null,
      abandoned: ctx.isBodyAbandoned,
      chunked: ctx.hasChunkedBody,
      type: ctx.contentType ?? null,
    })
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(body)
  }
  // As the server sets it: a missing Host is row 5's to refuse, with svc's answer, not Node's.
  const server = createServer({ requireHostHeader: false }, answer('none'))
  server.on('checkContinue', answer('continue'))
  server.on('checkExpectation', answer('unsupported'))
  return (await serve(t, server)).port
}

const decided = async (port: number, head: string): Promise<Record<string, unknown>> => {
  const { responses } = await exchange(port, `${head}\r\n\r\n`)
  const body = responses.at(-1)?.body.toString('utf8') ?? ''
  return body.startsWith('{') ? (JSON.parse(body) as Record<string, unknown>) : { status: responses.at(-1)?.status, body }
}

t.test('a plain request passes, its content type kept', async (t) => {
  const port = await inspecting(t)
  t.same(await decided(port, 'POST /p HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 0'), {
    code: null,
    abandoned: false,
    chunked: false,
    type: 'application/json',
  })
})

t.test('each row refuses what it owns, abandoning the body for rows 3 to 6', async (t) => {
  const port = await inspecting(t)
  const cases: Array<[string, string, boolean]> = [
    ['GET / HTTP/1.1\r\nHost: a\r\nExpect: magic', 'EXPECTATION_FAILED', true],
    ['POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked', 'INVALID_FRAMING', true],
    ['POST / HTTP/1.0\r\nTransfer-Encoding: chunked', 'INVALID_FRAMING', true],
    ['GET / HTTP/1.1', 'INVALID_HOST', true],
    ['GET / HTTP/1.1\r\nHost: a\r\nHost: b', 'INVALID_HOST', true],
    ['POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101', 'PAYLOAD_TOO_LARGE', true],
    [`GET /${'x'.repeat(MAX_URL)} HTTP/1.1\r\nHost: a`, 'URI_TOO_LONG', false],
    ['GET ftp://a/ HTTP/1.1\r\nHost: a', 'INVALID_TARGET', false],
    ['GET * HTTP/1.1\r\nHost: a', 'INVALID_TARGET', false],
  ]
  for (const [head, code, abandoned] of cases) t.match(await decided(port, head), { code, abandoned }, head.split('\r\n')[0] ?? head)
})

t.test('accepted targets: a path, an http(s) URL, `*` for OPTIONS; HTTP/1.0 needs no Host', async (t) => {
  const port = await inspecting(t)
  for (const head of [
    'GET http://a/x HTTP/1.1\r\nHost: a',
    'OPTIONS * HTTP/1.1\r\nHost: a',
    'GET / HTTP/1.0',
    'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100',
  ]) {
    t.match(await decided(port, head), { code: null }, head.split('\r\n')[0] ?? head)
  }
})

t.test('the first row that applies answers', async (t) => {
  const port = await inspecting(t)
  t.match(await decided(port, 'POST / HTTP/1.1\r\nExpect: magic\r\nContent-Length: 101'), { code: 'EXPECTATION_FAILED' })
  t.match(await decided(port, 'POST / HTTP/1.1\r\nContent-Length: 101'), { code: 'INVALID_HOST' })
  t.match(await decided(port, `POST /${'x'.repeat(MAX_URL)} HTTP/1.1\r\nHost: a\r\nContent-Length: 101`), { code: 'PAYLOAD_TOO_LARGE' })
})

t.test('100 Continue is sent to a waiting client only when nothing refused the request', async (t) => {
  const port = await inspecting(t)
  const accepted = await exchange(port, 'POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n', { expect: 2 })
  t.same(
    accepted.responses.map((r) => r.status),
    [100, 200],
  )
  const refused = await exchange(port, 'POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 500\r\n\r\n', { expect: 2 })
  t.same(
    refused.responses.map((r) => r.status),
    [200],
  )
})

t.test('a chunked body is noted; the server closes after it while it is still arriving', async (t) => {
  const port = await inspecting(t)
  t.match(await decided(port, 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked'), { code: null, chunked: true })
  const ctx = { isBodyAbandoned: false, hasChunkedBody: true, req: { complete: false } } as Ctx
  t.ok(closesConnection(ctx, false))
  t.notOk(closesConnection({ ...ctx, req: { complete: true } } as Ctx, false))
  t.ok(closesConnection({ ...ctx, hasChunkedBody: false, isBodyAbandoned: true } as Ctx, false))
  t.ok(closesConnection({ ...ctx, hasChunkedBody: false } as Ctx, true), 'stopping closes every connection')
  t.notOk(closesConnection({ ...ctx, hasChunkedBody: false } as Ctx, false))
})
