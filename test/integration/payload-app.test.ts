// The payload log in the running service: built only with SVC_PAYLOAD_LOG (its series at 0 from
// start-up, none without it), handed out as `app.payloadLog`, and flushed on SIGTERM after the
// drain: queued events reach the sink before the process exits, and against a sink that hangs, the
// flush keeps to its budget and counts what is left as dropped.
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { PAYLOAD_FLUSH_TIMEOUT_MS, stopOnSignals } from '../../lib/process/shutdown.js'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { EVENT_BYTES, eventually } from '../fixtures/payload.js'

const event = (i: number): string => JSON.stringify({ specversion: '1.0', id: `e-${i}`, type: 'svc.prediction' })

const metricsOf = async (base: string): Promise<string> => (await fetch(`${base}/metrics`)).text()

t.test('unset, nothing is built: no writer, no series', async (t) => {
  const running = await startApp(t)
  t.equal(running.app.payloadLog, undefined)
  t.notMatch(await metricsOf(running.base), /svc_payload_log/)
})

t.test('with a file, the writer is on App, its series at 0 from start-up, and what it is given reaches the file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-app-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'payload.jsonl')
  const running = await startApp(t, { SVC_PAYLOAD_LOG: path })
  const before = await metricsOf(running.base)
  for (const outcome of ['written', 'dropped', 'failed']) t.equal(sample(before, 'svc_payload_log_events_total', { outcome, environment: 'dev' }), 0, outcome)
  t.equal(sample(before, 'svc_payload_log_queue_depth', { environment: 'dev' }), 0)
  t.equal(sample(before, 'svc_payload_log_write_duration_seconds_count', { environment: 'dev' }), 0)
  running.app.payloadLog?.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await readFile(path, 'utf8').catch(() => '')) === `${event(1)}\n`)
  await eventually(async () => sample(await metricsOf(running.base), 'svc_payload_log_events_total', { outcome: 'written', environment: 'dev' }) === 1)
})

type Sink = Readonly<{ url: string; bodies: unknown[]; hung: ServerResponse[] }>

/** A sink on 127.0.0.1:0 answering 200 after `delayMs`, or never. */
const slowSink = async (t: Test, delayMs: number | 'never'): Promise<Sink> => {
  const bodies: unknown[] = []
  const hung: ServerResponse[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (delayMs === 'never') return void hung.push(res)
      setTimeout(() => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString()))
        res.writeHead(200).end()
      }, delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    for (const res of hung) res.destroy()
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, bodies, hung }
}

/** SIGTERM through stopOnSignals, as start.ts wires it: resolves with the exit code and how long it took. */
const terminate = async (t: Test, running: Awaited<ReturnType<typeof startApp>>): Promise<{ code: number; ms: number }> => {
  const listeners = process.listeners('SIGTERM')
  t.teardown(() => {
    for (const listener of process.listeners('SIGTERM')) if (!listeners.includes(listener)) process.off('SIGTERM', listener)
  })
  return new Promise((resolve) => {
    const started = performance.now()
    stopOnSignals(running.app, running.logger, { drainTimeoutMs: 1000, shutdownDelayMs: 0 }, (code) => resolve({ code, ms: performance.now() - started }))
    process.emit('SIGTERM', 'SIGTERM')
  })
}

t.test('on SIGTERM, queued events are written before the process exits, without waiting for the flush interval', async (t) => {
  const sink = await slowSink(t, 300)
  const running = await startApp(t, { SVC_PAYLOAD_LOG: sink.url, SVC_PAYLOAD_LOG_FLUSH_MS: '60000' })
  for (let i = 0; i < 5; i++) running.app.payloadLog?.enqueue(() => event(i), EVENT_BYTES)
  const { code } = await terminate(t, running)
  t.equal(code, 0)
  t.same(sink.bodies, [[0, 1, 2, 3, 4].map((i) => JSON.parse(event(i)))], 'the sink had them when the process exited')
  const text = await running.app.metrics.prom.metrics()
  t.equal(sample(text, 'svc_payload_log_events_total', { outcome: 'written', environment: 'dev' }), 5)
})

t.test('a prediction answered just before SIGTERM is written at the flush, its source the port the listener had', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-app-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'payload.jsonl')
  const running = await startApp(t, { SVC_PAYLOAD_LOG: path })
  const instances = [{ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }]
  const answer = await fetch(`${running.base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'iris', instances }),
  })
  t.equal(answer.status, 200)
  // Within the file's linger: the event is built by the flush, after the listener has closed.
  const { code } = await terminate(t, running)
  t.equal(code, 0)
  const lines = (await readFile(path, 'utf8')).trim().split('\n')
  t.equal(lines.length, 1)
  t.equal(JSON.parse(lines[0] as string).source, `svc://${hostname()}:${new URL(running.base).port}`)
})

t.test('on SIGTERM against a sink that hangs, the flush keeps to its budget and what is left is dropped', async (t) => {
  const sink = await slowSink(t, 'never')
  const running = await startApp(t, { SVC_PAYLOAD_LOG: sink.url, SVC_PAYLOAD_LOG_FLUSH_MS: '10' })
  running.app.payloadLog?.enqueue(() => event(0), EVENT_BYTES)
  await eventually(() => sink.hung.length === 1)
  for (let i = 1; i < 5; i++) running.app.payloadLog?.enqueue(() => event(i), EVENT_BYTES)
  const { code, ms } = await terminate(t, running)
  t.equal(code, 0)
  t.ok(ms >= PAYLOAD_FLUSH_TIMEOUT_MS - 100 && ms < PAYLOAD_FLUSH_TIMEOUT_MS + 2000, `exit after ${Math.round(ms)} ms`)
  const text = await running.app.metrics.prom.metrics()
  const of = (outcome: string): number | undefined => sample(text, 'svc_payload_log_events_total', { outcome, environment: 'dev' })
  t.equal(of('written'), 0)
  // The POST in flight since before the signal may reach its own 5 s timeout first (failed); the rest waited in the queue (dropped).
  t.ok((of('dropped') ?? 0) >= 4, `${of('dropped')} dropped`)
  t.equal((of('dropped') ?? 0) + (of('failed') ?? 0), 5, 'every event counted lost, once')
})
