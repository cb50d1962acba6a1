// A reply on the wire, over a real loopback socket: each kind with its headers, the last-resort 500
// for a body JSON cannot hold, the written hooks run once the last byte is out, and the connection
// closed once the process is no longer ready.
import type { ServerResponse } from 'node:http'
import { once } from 'node:events'
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { createLifecycle, type Lifecycle } from '../../lib/core/lifecycle.js'
import type { Reply } from '../../lib/core/pipeline.js'
import { createWriter } from '../../lib/server/write.js'
import { type LoggedLine, logLines } from '../fixtures/log-lines.js'
import { httpServer, stalledClient } from '../fixtures/tcp.js'

type Setup = Readonly<{ base: string; lines: () => LoggedLine[]; lifecycle: Lifecycle; heard: unknown[] }>

/** A bare node:http server whose every request is answered with `reply` through the writer. */
const setup = async (t: Test, reply: Reply | ((ctx: Ctx) => Reply), hook?: (error: unknown, ctx: Ctx) => void, writeTimeoutMs = 30_000): Promise<Setup> => {
  const { logger, lines } = logLines('info')
  const lifecycle = createLifecycle()
  lifecycle.state = 'ready'
  const writer = createWriter(logger, lifecycle, { streamStallMs: 1000, writeTimeoutMs }, undefined)
  const heard: unknown[] = []
  const server = await httpServer(t, (req, res: ServerResponse) => {
    const ctx = new Ctx(req, res, 1024)
    ctx.whenWritten((_ctx, error) => {
      heard.push(error)
      hook?.(error, ctx)
    })
    writer.write(ctx, res, typeof reply === 'function' ? reply(ctx) : reply)
  })
  return { base: `http://127.0.0.1:${server.port}`, lines, lifecycle, heard }
}

t.test('a JSON body is serialised, typed and measured', async (t) => {
  const { base, heard } = await setup(t, { kind: 'json', status: 201, body: { a: 'é' } })
  const res = await fetch(base)
  t.equal(res.status, 201)
  t.equal(res.headers.get('content-type'), 'application/json')
  t.equal(res.headers.get('content-length'), String(Buffer.byteLength('{"a":"é"}')))
  t.equal(res.headers.get('cache-control'), 'no-store')
  t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
  t.equal(await res.text(), '{"a":"é"}')
  t.same(heard, [undefined], 'the hooks hear success')
})

t.test('pre-serialised JSON is sent as it is; no body is an empty answer', async (t) => {
  const pre = await setup(t, { kind: 'json', status: 200, json: '{"x": 1}' })
  t.equal(await (await fetch(pre.base)).text(), '{"x": 1}')
  const empty = await setup(t, { kind: 'json', status: 204, headers: { etag: '"e"' } })
  const res = await fetch(empty.base)
  t.equal(res.status, 204)
  t.equal(res.headers.get('etag'), '"e"')
  t.equal(res.headers.get('content-type'), null)
  t.equal(await res.text(), '')
})

t.test("a text reply's `sent` runs once the whole body is out, after the client could read it all", async (t) => {
  // Larger than a slice (256 KiB), so written across turns: every byte arrives, in order.
  const body = Buffer.from(Uint8Array.from({ length: 4 * 1024 * 1024 + 7 }, (_, i) => i % 251))
  let sentCalls = 0
  const { base } = await setup(t, {
    kind: 'text',
    status: 200,
    text: body,
    sent: () => {
      sentCalls++
    },
  })
  const res = await fetch(base)
  t.equal(res.headers.get('content-length'), String(body.length))
  t.ok(Buffer.from(await res.arrayBuffer()).equals(body), 'the body, whole and in order')
  t.equal(sentCalls, 1)
})

t.test('the written hooks of a body sent in slices run once its last byte is out, not at end()', async (t) => {
  const body = Buffer.alloc(4 * 1024 * 1024, 'y')
  const { base, heard } = await setup(t, { kind: 'text', status: 200, text: body })
  const resume = await stalledClient(t, base, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.same(heard, [], 'no hook while the body is still being sent')
  t.ok((await resume()) > body.length, 'the client read the whole reply')
  t.same(heard, [undefined], 'the hooks ran once, after the last byte, and heard success')
})

t.test('the hooks of a small reply still queued behind a large one run once it is out too', async (t) => {
  const heard: string[] = []
  const { base } = await setup(
    t,
    (ctx) => ({ kind: 'text', status: 200, text: ctx.path === '/large' ? Buffer.alloc(4 * 1024 * 1024, 'z') : 'small' }),
    (_, ctx) => heard.push(ctx.path),
  )
  // Pipelined: the small reply waits in Node's buffers until the large one is out.
  const resume = await stalledClient(t, base, 'GET /large HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.same(heard, [], 'neither reply is out')
  await resume()
  t.same(heard, ['/large', '/small'], 'each ran once its reply was out, in order')
})

t.test('a reply whose client reads none of it for the write timeout is dropped, logged, and its hooks hear why', async (t) => {
  const { base, heard, lines } = await setup(t, { kind: 'text', status: 200, text: Buffer.alloc(16 * 1024 * 1024, 's') }, undefined, 300)
  const socket = connect(Number(new URL(base).port), '127.0.0.1')
  t.teardown(() => socket.destroy())
  await once(socket, 'connect')
  socket.pause()
  socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n')
  const started = performance.now()
  await sleep(150)
  t.same(heard, [], 'not yet: the client has had less than the timeout')
  // Reading now, after the server closed the connection, ends with the FIN (or a reset).
  await new Promise<void>((resolve) => {
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
    setTimeout(() => socket.resume(), 1000)
  })
  t.ok(performance.now() - started >= 300, 'not before the timeout')
  t.match(lines(), [{ level: 'warning', event: 'reply_stalled', path: '/big', stalled_ms: 300 }])
  t.equal(heard.length, 1)
  t.match(heard[0], { message: /read none of the reply/ }, 'the hooks hear that the reply was cut')
})

t.test('a client that reads slowly, but reads, is never cut by the write timeout', async (t) => {
  const body = Buffer.alloc(12 * 1024 * 1024, 'r')
  const { base, heard, lines } = await setup(t, { kind: 'text', status: 200, text: body }, undefined, 1000)
  const socket = connect(Number(new URL(base).port), '127.0.0.1')
  t.teardown(() => socket.destroy())
  await once(socket, 'connect')
  socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  let received = 0
  // At most 64 KiB (a read) every 20 ms: the server sees progress only when the kernel frees a large
  // part of its send buffer (megabytes on loopback), which this pace does within the timeout; the
  // whole reply takes several timeouts.
  const started = performance.now()
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length
    socket.pause()
    setTimeout(() => socket.resume(), 20)
  })
  await once(socket, 'end')
  t.ok(received > body.length, 'the whole reply arrived')
  t.ok(performance.now() - started > 2000, 'over more than two timeouts')
  await sleep(20)
  t.same(heard, [undefined])
  t.notOk(lines().some((line) => line.event === 'reply_stalled'))
})

t.test('a large body whose client goes away stops being written, never runs `sent`, and the server answers on', async (t) => {
  let sentCalls = 0
  const { base, heard } = await setup(t, {
    kind: 'text',
    status: 200,
    text: Buffer.alloc(64 * 1024 * 1024, 'x'),
    sent: () => {
      sentCalls++
    },
  })
  // The client never reads; once the sockets' buffers are full, it closes.
  await new Promise<void>((resolve) => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1', () => {
      socket.pause()
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
      setTimeout(() => {
        socket.destroy()
        resolve()
      }, 200)
    })
  })
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(sentCalls, 0, 'the body never went out whole')
  t.equal(heard.length, 1, 'the written hooks still ran once, when the connection ended')
  const again = await fetch(base, { method: 'HEAD' })
  t.equal(again.status, 200, 'the server still answers')
})

t.test('text and problem replies carry their own types', async (t) => {
  const text = await setup(t, { kind: 'text', status: 200, text: 'ok\n' })
  const res = await fetch(text.base)
  t.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
  t.equal(await res.text(), 'ok\n')
  const problem = await setup(t, {
    kind: 'problem',
    status: 404,
    problem: { type: 'urn:svc:problem:not-found', status: 404, title: 'Not Found', detail: 'none here' },
  })
  const answer = await fetch(problem.base)
  t.equal(answer.status, 404)
  t.equal(answer.headers.get('content-type'), 'application/problem+json')
  t.match(await answer.json(), { status: 404, detail: 'none here' })
})

t.test('a body JSON cannot hold is a logged 500, and the hooks hear why', async (t) => {
  const cycle: Record<string, unknown> = {}
  cycle['self'] = cycle
  const { base, lines, heard } = await setup(t, { kind: 'json', status: 200, body: cycle })
  const res = await fetch(`${base}/x`)
  t.equal(res.status, 500)
  t.match(await res.json(), { status: 500 })
  t.match(lines(), [{ level: 'error', event: 'request_failed', method: 'GET', path: '/x' }])
  t.type(heard[0], TypeError)
})

t.test('a hook that throws is logged as reply_hook_failed; the answer is already out', async (t) => {
  const { base, lines } = await setup(t, { kind: 'text', status: 200, text: 'fine' }, () => {
    throw new Error('hook broke')
  })
  t.equal(await (await fetch(base)).text(), 'fine')
  t.match(lines(), [{ event: 'reply_hook_failed', error: { message: 'hook broke' } }])
})

t.test('once the process is no longer ready, the answer closes its connection', async (t) => {
  const { base, lifecycle } = await setup(t, { kind: 'text', status: 200, text: 'bye' })
  t.equal((await fetch(base)).headers.get('connection'), 'keep-alive')
  lifecycle.state = 'draining'
  t.equal((await fetch(base)).headers.get('connection'), 'close')
})
