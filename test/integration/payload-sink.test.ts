// The payload log to an HTTP sink (lib/serving/payload/http-sink.ts) over a real socket: batches
// POSTed as CloudEvents' JSON batch format at the flush interval, or at once when MAX_BATCH wait; a
// sink answering 500 then recovering (failed, then written, each logged once); a sink that hangs
// (each POST bounded by its timeout, one in flight, events dropped, enqueue still O(1)); one that
// refuses connections; credentials sent as Basic auth; shutdown flushing within its budget.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { MAX_BATCH } from '../../lib/serving/payload/writer.js'
import { EVENT_BYTES, eventually, payloadHarness } from '../fixtures/payload.js'

type Posted = Readonly<{ contentType: string | undefined; authorization: string | undefined; body: unknown }>
type Behaviour = 'ok' | 'hang' | number

/** A sink on 127.0.0.1:0 that keeps what it is sent and answers as `behaviour.now` says. */
const sink = async (t: Test): Promise<{ url: URL; posted: Posted[]; behaviour: { now: Behaviour }; hung: ServerResponse[] }> => {
  const posted: Posted[] = []
  const hung: ServerResponse[] = []
  const behaviour: { now: Behaviour } = { now: 'ok' }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const answer = behaviour.now
      if (answer === 'hang') return void hung.push(res)
      posted.push({ contentType: req.headers['content-type'], authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString()) })
      res.writeHead(answer === 'ok' ? 202 : answer).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const res of hung) res.destroy()
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/events`), posted, behaviour, hung }
}

const event = (i: number): string => JSON.stringify({ specversion: '1.0', id: `e-${i}`, source: 'svc://test', type: 'svc.prediction', data: { i } })

t.test('a batch is a JSON array of events, POSTed as application/cloudevents-batch+json within the flush interval', async (t) => {
  const { url, posted } = await sink(t)
  const { writer, outcomes } = payloadHarness(t, { target: { kind: 'http', url }, flushMs: 200 })
  const started = performance.now()
  for (let i = 0; i < 3; i++) writer.enqueue(() => event(i), EVENT_BYTES)
  await eventually(() => posted.length === 1)
  const waited = performance.now() - started
  t.ok(waited >= 150 && waited < 1000, `one POST after the flush interval (${Math.round(waited)} ms)`)
  t.same(posted, [{ contentType: 'application/cloudevents-batch+json', authorization: undefined, body: [0, 1, 2].map((i) => JSON.parse(event(i))) }])
  await eventually(async () => (await outcomes()).written === 3)
  t.same(await outcomes(), { written: 3, dropped: 0, failed: 0 })
})

t.test('once MAX_BATCH events wait, they are POSTed at once, without waiting for the flush interval', async (t) => {
  const { url, posted } = await sink(t)
  const { writer, outcomes } = payloadHarness(t, { target: { kind: 'http', url }, flushMs: 60_000, capacity: 3 * MAX_BATCH })
  for (let i = 0; i < 2 * MAX_BATCH + 1; i++) writer.enqueue(() => event(i), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 2 * MAX_BATCH)
  t.same(
    posted.map((p) => (p.body as unknown[]).length),
    [MAX_BATCH, MAX_BATCH],
    'two full batches; the last event waits for its interval',
  )
})

t.test('a sink answering 500 fails its batches, logged once, retried; once it recovers, events are written and the recovery logged', async (t) => {
  const { url, posted, behaviour } = await sink(t)
  behaviour.now = 500
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'http', url }, flushMs: 20, retryDelaysMs: [10, 10] })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await outcomes()).failed === 1)
  t.equal(posted.length, 3, 'one POST and two retries')
  writer.enqueue(() => event(2), EVENT_BYTES)
  await eventually(async () => (await outcomes()).failed === 2)
  t.equal(posted.length, 4, 'a sink that is down: one attempt a batch')
  behaviour.now = 'ok'
  writer.enqueue(() => event(3), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 1)
  t.same(await outcomes(), { written: 1, dropped: 0, failed: 2 })
  t.same(logs(), [
    { event: 'payload_log_failed', level: 'warning', sink: 'http', reason: 'HTTP 500' },
    { event: 'payload_log_recovered', level: 'info', sink: 'http' },
  ])
  behaviour.now = 503
  writer.enqueue(() => event(4), EVENT_BYTES)
  await eventually(() => logs().length === 3)
  t.same(logs()[2], { event: 'payload_log_failed', level: 'warning', sink: 'http', reason: 'HTTP 503' }, 'a new reason is logged')
})

t.test('a sink that hangs: each POST ends at its timeout, one in flight; events queue then drop; enqueue stays O(1)', async (t) => {
  const s = await sink(t)
  s.behaviour.now = 'hang'
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'http', url: s.url }, flushMs: 10, capacity: 100, timeoutMs: 300, retryDelaysMs: [] })
  writer.enqueue(() => event(0), EVENT_BYTES)
  await eventually(() => s.hung.length === 1)
  const started = performance.now()
  for (let i = 0; i < 100_000; i++) writer.enqueue(() => event(i), EVENT_BYTES)
  const perEvent = ((performance.now() - started) * 1000) / 100_000
  t.ok(perEvent < 5, `${perEvent.toFixed(3)} µs an enqueue while the sink hangs`)
  t.same(await outcomes(), { written: 0, dropped: 100_000 - 100, failed: 0 }, 'the queue filled, the rest dropped')
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(s.hung.length, 1, 'one POST at a time: none while the first hangs')
  await eventually(async () => (await outcomes()).failed === 1, 3000)
  await eventually(() => s.hung.length === 2)
  t.same(await outcomes(), { written: 0, dropped: 100_000 - 100, failed: 1 }, 'then the queued batch is POSTed, and hangs in turn')
  t.same(logs()[0], { event: 'payload_log_failed', level: 'warning', sink: 'http', reason: 'no answer within 300 ms' })
})

t.test('a sink that refuses connections is counted failed, with why', async (t) => {
  const { url } = await sink(t)
  const closed = new URL(url)
  // A port nothing listens on: this sink's own, once it has closed.
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  closed.port = String((probe.address() as AddressInfo).port)
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'http', url: closed }, flushMs: 10, retryDelaysMs: [] })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await outcomes()).failed === 1)
  t.equal(logs()[0]?.reason, 'connection refused')
})

t.test("the URL's credentials are sent as Basic auth, never in the URL", async (t) => {
  const { url, posted } = await sink(t)
  const secured = new URL(url)
  secured.username = 'user'
  secured.password = 'p%40ss'
  const { writer } = payloadHarness(t, { target: { kind: 'http', url: secured }, flushMs: 10 })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(() => posted.length === 1)
  t.equal(posted[0]?.authorization, `Basic ${Buffer.from('user:p@ss').toString('base64')}`)
})

t.test('stop flushes what is queued at once, without the flush interval; against a hung sink, what is left at the budget is dropped', async (t) => {
  const ok = await sink(t)
  const flushed = payloadHarness(t, { target: { kind: 'http', url: ok.url }, flushMs: 60_000 })
  for (let i = 0; i < 10; i++) flushed.writer.enqueue(() => event(i), EVENT_BYTES)
  const started = performance.now()
  await flushed.writer.stop(2000)
  t.ok(performance.now() - started < 1000, 'written without waiting for the interval')
  t.same(await flushed.outcomes(), { written: 10, dropped: 0, failed: 0 })

  const stuck = await sink(t)
  stuck.behaviour.now = 'hang'
  const left = payloadHarness(t, { target: { kind: 'http', url: stuck.url }, flushMs: 10, timeoutMs: 60_000 })
  left.writer.enqueue(() => event(0), EVENT_BYTES)
  await eventually(() => stuck.hung.length === 1)
  for (let i = 1; i < 5; i++) left.writer.enqueue(() => event(i), EVENT_BYTES)
  const at = performance.now()
  await left.writer.stop(200)
  const took = performance.now() - at
  t.ok(took >= 150 && took < 1000, `stop kept to its budget (${Math.round(took)} ms)`)
  t.same(await left.outcomes(), { written: 0, dropped: 5, failed: 0 }, 'the POST in flight and the queued events are dropped')
  stuck.hung[0]?.writeHead(200).end()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(await left.outcomes(), { written: 0, dropped: 5, failed: 0 }, 'a late answer is not counted again')
})
