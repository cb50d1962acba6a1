// A stream reply over a real loopback socket: the events in order, HEAD sending the head alone,
// a failing generator logged, a client that leaves stopping the generator, and the written hooks
// once the stream's last byte is out.
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { createStreamWriter } from '../../lib/server/stream.js'
import { rethrow } from '../fixtures/ctx.js'
import { logLines } from '../fixtures/log-lines.js'
import { httpServer, stalledClient } from '../fixtures/tcp.js'

type Setup = Readonly<{ base: string; events: () => string[]; written: Promise<unknown> }>

const setup = async (t: Test, stream: (res: ServerResponse) => AsyncIterable<string>, stallMs = 1000): Promise<Setup> => {
  const { logger, lines } = logLines('info')
  const writeStream = createStreamWriter(logger, stallMs, rethrow)
  let heard: (error: unknown) => void = () => {}
  const written = new Promise<unknown>((resolve) => (heard = resolve))
  const server = await httpServer(t, (req, res: ServerResponse) => {
    const ctx = new Ctx(req, res, 1024)
    ctx.whenWritten((_ctx, error) => heard(error))
    void writeStream(ctx, res, { kind: 'stream', status: 200, headers: { 'x-extra': '1' }, stream: stream(res) })
  })
  const events = () => lines().map(({ event }) => event)
  return { base: `http://127.0.0.1:${server.port}/events`, events, written }
}

t.test('the events in order, as server-sent events, and the hooks hear success', async (t) => {
  const { base, written } = await setup(t, async function* () {
    yield 'data: 1\n\n'
    yield 'data: 2\n\n'
  })
  const res = await fetch(base)
  t.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8')
  t.equal(res.headers.get('cache-control'), 'no-cache')
  t.equal(res.headers.get('x-extra'), '1')
  t.equal(await res.text(), 'data: 1\n\ndata: 2\n\n')
  t.equal(await written, undefined)
})

t.test('HEAD sends the head alone: nothing is pulled, and the stream is still stopped', async (t) => {
  const calls: string[] = []
  const { base, written } = await setup(t, () => ({
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        calls.push('next')
        return { done: false, value: 'data: never\n\n' }
      },
      return: async () => {
        calls.push('return')
        return { done: true, value: undefined }
      },
    }),
  }))
  const res = await fetch(base, { method: 'HEAD' })
  t.equal(res.status, 200)
  t.equal(await res.text(), '')
  t.equal(await written, undefined)
  t.same(calls, ['return'])
})

t.test('a generator that throws is logged as stream_failed and the hooks hear the error', async (t) => {
  const { base, events, written } = await setup(t, async function* () {
    yield 'data: 1\n\n'
    throw new Error('source gone')
  })
  t.equal(await (await fetch(base)).text(), 'data: 1\n\n')
  t.match(await written, { message: 'source gone' })
  t.same(events(), ['stream_failed'])
})

t.test('a client that leaves stops the generator, which runs its cleanup', async (t) => {
  let isCleaned = false
  const { base, written } = await setup(t, async function* () {
    try {
      for (;;) {
        yield 'data: tick\n\n'
        await sleep(10)
      }
    } finally {
      isCleaned = true
    }
  })
  const controller = new AbortController()
  const res = await fetch(base, { signal: controller.signal })
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  await reader.read()
  controller.abort()
  await written
  t.ok(isCleaned)
})

/**
 * Events until the kernel's buffers are full and one waits in Node's: the stream's end is not out at
 * end(). A turn between events, for Node uncorks a chunked reply's socket on the next tick.
 */
const untilQueued = async function* (res: ServerResponse): AsyncIterable<string> {
  const event = `data: ${'x'.repeat(1016)}\n\n`
  do {
    yield event
    await new Promise((resolve) => setImmediate(resolve))
  } while (res.writableLength === 0)
}

t.test("the hooks of a stream whose end still waits in the process's buffers run once the client has it", async (t) => {
  let isHeard = false
  const { base, written } = await setup(t, untilQueued)
  void written.then(() => (isHeard = true))
  const resume = await stalledClient(t, base, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.notOk(isHeard, 'no hook while the end of the stream is still in the process')
  t.ok((await resume()) > 0)
  t.equal(await written, undefined, 'then the hooks heard success')
})

t.test('a client that reads none of the end of a stream for the stall time is dropped, and the hooks hear why', async (t) => {
  const { base, written, events } = await setup(t, untilQueued, 200)
  await stalledClient(t, base, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  t.match(await written, { message: /read none of the stream/ })
  t.same(events(), ['stream_stalled'])
})

t.test('a client that reads nothing mid-stream is dropped after the stall time, and the hooks hear why', async (t) => {
  const { base, written, events } = await setup(
    t,
    async function* () {
      for (;;) yield `data: ${'y'.repeat(65_000)}\n\n`
    },
    200,
  )
  await stalledClient(t, base, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
  t.match(await written, { message: /read none of the stream/ })
  t.same(events(), ['stream_stalled'])
})
