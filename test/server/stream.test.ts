// A stream reply over a real loopback socket: the events in order, HEAD sending the head alone,
// a failing generator logged, and a client that leaves stopping the generator.
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { createStreamWriter } from '../../lib/server/stream.js'
import { rethrow } from '../fixtures/ctx.js'
import { logLines } from '../fixtures/log-lines.js'
import { httpServer } from '../fixtures/tcp.js'

type Setup = Readonly<{ base: string; events: () => string[]; written: Promise<unknown> }>

const setup = async (t: Test, stream: () => AsyncIterable<string>): Promise<Setup> => {
  const { logger, lines } = logLines('info')
  const writeStream = createStreamWriter(logger, 1000, rethrow)
  let heard: (error: unknown) => void = () => {}
  const written = new Promise<unknown>((resolve) => (heard = resolve))
  const server = await httpServer(t, (req, res: ServerResponse) => {
    const ctx = new Ctx(req, res, 1024)
    ctx.whenWritten((_ctx, error) => heard(error))
    void writeStream(ctx, res, { kind: 'stream', status: 200, headers: { 'x-extra': '1' }, stream: stream() })
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
