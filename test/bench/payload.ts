// The payload log (lib/serving/payload/) in process, for the benchmark, on the shipped iris as the
// service serves it, CPU µs:
// - building one batch-1 `svc.prediction` event (`events.prediction`, what the writer's drain turn
//   runs for each queued request), the median of 5 quarter-second samples;
// - `enqueue` alone, as a reply's hook calls it: 50 a turn as 50 connections bring them, timed
//   around the 50 calls only;
// - the writer per event, all of it: `enqueue`, the drain's timer turn and a write of the event's
//   bytes to a file (an event built once, so building is not counted twice), 50 a turn, less the
//   same turns without events. The written share is read from the writer's own series.
// - and, named by BENCH_ONLY (`payload log: backlog`), a backlog drained: 3 000 `svc.prediction`
//   events of 100 rows of iris (about 20 kB each) queued while an HTTP sink on loopback, on a
//   worker thread, refuses (503), then drained once it answers 202, the writer as the service builds
//   it (its defaults, retries included); the longest turn of the loop meanwhile, as the main thread's CPU between two
//   ticks of a 1 ms interval (`loopProbe`: on a loaded machine the wall clock mostly measures the
//   wait for a core) and as perf_hooks' event-loop delay (wall).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { Registry } from 'prom-client'
import { encodeInputs } from '../../lib/models/inference/features.js'
import { readPredictRequest } from '../../lib/models/inference/request.js'
import { createPayloadEvents, type PredictionCapture } from '../../lib/serving/payload/events.js'
import { heldBytes } from '../../lib/serving/payload/log.js'
import { createPayloadWriter, type PayloadWriter } from '../../lib/serving/payload/writer.js'
import { createModelRegistry, type ServedModel } from '../../lib/models/registry/registry.js'
import type { Prediction } from '../../lib/models/runtime.js'
import { createStore } from '../../lib/models/store/open.js'
import { readConfig } from '../../lib/config/config.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { cpuUs, perCallUs } from './feedback.js'
import { metricTotal } from './load-tools.js'
import { loopProbe, predictionEvents } from '../fixtures/payload.js'

const TURNS = 20_000
const PER_TURN = 50
const silent = createLogger({ name: 'bench', level: 'error', format: 'json', write: () => {} })
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export type PayloadUs = Readonly<{
  /** One batch-1 prediction event's JSON text. */
  build: number
  /** Its length in bytes. */
  bytes: number
  /** One `enqueue`, the drain not included. */
  enqueue: number
  /** One event through the writer to a file: enqueue, drain, write. */
  writer: number
  /** Events written over events queued (1 when none was dropped or failed). */
  written: number
}>

/** The shipped iris, as the service serves it. */
const shippedIris = async (): Promise<ServedModel> => {
  const config = readConfig({})
  const registry = createModelRegistry({ store: createStore(config.models.store), logger: silent, metrics: new Registry(), reloadIntervalS: 0 })
  await registry.load()
  const served = registry.resolve('iris')
  if (served === undefined) throw new Error('the shipped iris did not load')
  return served
}

/** A writer to `target` (SVC_PAYLOAD_LOG) at the service's defaults, as that variable alone set gives them. */
const writerAt = (target: string): Readonly<{ writer: PayloadWriter; metrics: Registry }> => {
  const log = readConfig({ SVC_PAYLOAD_LOG: target }).models.payloadLog
  if (log === undefined) throw new Error('SVC_PAYLOAD_LOG set but no payload log configured')
  const metrics = new Registry()
  const writer = createPayloadWriter({
    target: log.target,
    capacity: log.queue,
    capacityBytes: log.queueBytes,
    flushMs: log.flushMs,
    maxBytes: log.maxBytes,
    files: log.files,
    metrics,
    logger: silent,
    isUnderPressure: () => false,
  })
  return { writer, metrics }
}

/** The payload log's in-process figures for `body`, a batch-1 /api/v1/predict request of iris. */
export const inProcessPayloadUs = async (body: string): Promise<PayloadUs> => {
  const served = await shippedIris()
  const request = readPredictRequest(JSON.parse(body), { maxBatch: 1000 })
  const features = encodeInputs(request, served.model)
  const prediction = served.predictor.predict(features, request.rows) as Prediction
  const capture: PredictionCapture = {
    served,
    requestId: '0b6f8c1e-5d4a-4f7e-9c3b-2a1d0e9f8c7b',
    role: 'default',
    rows: request.rows,
    features,
    prediction,
    tokens: undefined,
    durationMs: 0.042,
    traceId: undefined,
  }
  const events = createPayloadEvents({ source: () => 'svc://bench:8000', exclude: [] })
  let sink = 0
  const build = perCallUs(() => (sink += events.prediction(capture, Date.now()).length))
  const event = events.prediction(capture, Date.now())

  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-payload-'))
  const { writer, metrics } = writerAt(join(dir, 'payload.jsonl'))
  const builder = (): string => event
  const EVENT_HELD_BYTES = heldBytes(capture)
  let enqueueMs = 0
  const turns = async (count: number, withEvents: boolean): Promise<number> => {
    const before = cpuUs()
    for (let t = 0; t < count; t++) {
      if (withEvents) {
        const start = performance.now()
        for (let e = 0; e < PER_TURN; e++) writer.enqueue(builder, EVENT_HELD_BYTES)
        enqueueMs += performance.now() - start
      }
      await nextTurn()
    }
    return cpuUs() - before
  }
  await turns(TURNS / 10, true)
  await turns(TURNS / 10, false)
  enqueueMs = 0
  const queued = (TURNS / 10 + TURNS) * PER_TURN
  const withEvents = await turns(TURNS, true)
  const without = await turns(TURNS, false)
  await writer.stop(5000)
  const written = metricTotal(await metrics.metrics(), 'svc_payload_log_events_total', { outcome: 'written' }) / queued
  await rm(dir, { recursive: true, force: true })
  if (sink < 0) throw new Error('unreachable: a length is never negative')
  return {
    build,
    bytes: Buffer.byteLength(event),
    enqueue: (enqueueMs * 1000) / (TURNS * PER_TURN),
    writer: (withEvents - without) / (TURNS * PER_TURN),
    written,
  }
}

export const BACKLOG_NAME = 'payload log: backlog of 100-row events'
const BACKLOG_EVENTS = 3000
/** How long the sink refuses: the default retries (100, 500, 2 000 ms) keep the first batch until it answers. */
const SINK_DOWN_MS = 1500

export type Backlog = Readonly<{
  /** The most main-thread CPU in one turn, ms. */
  longestCpuMs: number
  /** The event loop's longest delay, ms (wall). */
  longestDelayMs: number
  /** From the sink's recovery to the last event written, ms. */
  drainMs: number
  written: number
  posts: number
}>

/**
 * The sink, on a worker thread of its own: on loopback the kernel delivers a write in the sender's
 * call, and a sink on the main thread would count its reads as the writer's turns. Answers 503 until
 * told `up`, then 202; tells each POST's end.
 */
const SINK_THREAD = `
const { createServer } = require('node:http')
const { parentPort } = require('node:worker_threads')
let isUp = false
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    parentPort.postMessage('post')
    res.writeHead(isUp ? 202 : 503).end()
  })
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port))
parentPort.on('message', (message) => {
  if (message === 'up') isUp = true
  else server.close(() => parentPort.close())
})`

/** A backlog of 100-row events, queued while the sink is down, drained once it is up. */
export const payloadBacklog = async (): Promise<Backlog> => {
  const sink = new Worker(SINK_THREAD, { eval: true })
  let posts = 0
  const port = await new Promise<number>((resolve) =>
    sink.on('message', (message: unknown) => {
      if (typeof message === 'number') resolve(message)
      else posts++
    }),
  )
  const { writer, metrics } = writerAt(`http://127.0.0.1:${port}/events`)
  const { build, bytes } = predictionEvents(await shippedIris(), 100)
  const written = async (): Promise<number> => metricTotal(await metrics.metrics(), 'svc_payload_log_events_total', { outcome: 'written' })
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const probe = loopProbe()
  // Queued 100 a turn, as replies' hooks would bring them.
  for (let queued = 0; queued < BACKLOG_EVENTS; queued += 100) {
    for (let i = 0; i < 100; i++) writer.enqueue(build, bytes)
    await nextTurn()
  }
  await new Promise((resolve) => setTimeout(resolve, SINK_DOWN_MS))
  sink.postMessage('up')
  const upAt = performance.now()
  while ((await written()) < BACKLOG_EVENTS && performance.now() - upAt < 60_000) await new Promise((resolve) => setTimeout(resolve, 10))
  const drainMs = performance.now() - upAt
  const longestCpuMs = probe.stop()
  delay.disable()
  const result = { longestCpuMs, longestDelayMs: delay.max / 1e6, drainMs, written: await written(), posts }
  await writer.stop(1000)
  sink.postMessage('stop')
  await once(sink, 'exit')
  return result
}
