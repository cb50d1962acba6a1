import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { requestStore } from '../../lib/telemetry/request-store.js'
import { BoundedBatchProcessor, ExportTimeoutError, type ExportEvents } from '../../lib/telemetry/span-processor.js'

const span = (id: number, isSampled = true): ReadableSpan => ({ id, spanContext: () => ({ traceFlags: isSampled ? 1 : 0 }) }) as unknown as ReadableSpan

type Call = { spans: ReadableSpan[]; done(code: number, error?: Error): void; store: unknown }

/** An exporter that holds each export until the test completes it. */
const heldExporter = () => {
  const calls: Call[] = []
  let isShutDown = false
  const exporter: SpanExporter = {
    export: (spans, callback) =>
      void calls.push({ spans: [...spans], done: (code, error) => callback(error === undefined ? { code } : { code, error }), store: requestStore.getStore() }),
    shutdown: async () => void (isShutDown = true),
  }
  return { exporter, calls, isShutDown: () => isShutDown }
}

const recorder = () => {
  const log: string[] = []
  const events: ExportEvents = {
    exported: (n) => void log.push(`exported ${n}`),
    failed: (error, n) => void log.push(`failed ${n} ${(error as Error).name}`),
    dropped: (reason, n) => void log.push(`dropped ${n} ${reason}`),
  }
  return { log, events }
}

const BATCH = { scheduleDelayMs: 60_000, exportTimeoutMs: 1000, maxQueueSize: 4, maxExportBatchSize: 2 }

t.test('a full batch is exported at once, outside the request that filled it; one export at a time', async (t) => {
  const { exporter, calls } = heldExporter()
  const { log, events } = recorder()
  const processor = new BoundedBatchProcessor(exporter, BATCH, events)
  t.teardown(() => processor.shutdown())
  requestStore.run({ requestId: 'r1', traceId: undefined, spanId: undefined, traceContext: undefined }, () => {
    processor.onEnd(span(1))
    processor.onEnd(span(2))
    processor.onEnd(span(3))
    processor.onEnd(span(4))
  })
  t.equal(calls.length, 1, 'the second full batch waits for the first export')
  t.same(
    calls[0]?.spans.map((s) => (s as unknown as { id: number }).id),
    [1, 2],
  )
  t.equal(calls[0]?.store, undefined, 'the export runs outside the request store')
  calls[0]?.done(0)
  t.equal(calls.length, 2, 'the next full batch follows as soon as the first is done')
  calls[1]?.done(0)
  t.same(log, ['exported 2', 'exported 2'])
})

t.test('unsampled spans are ignored; a full queue drops and counts', async (t) => {
  const { exporter, calls } = heldExporter()
  const { log, events } = recorder()
  const processor = new BoundedBatchProcessor(exporter, { ...BATCH, maxExportBatchSize: 4 }, events)
  processor.onEnd(span(0, false))
  for (let i = 1; i <= 6; i++) processor.onEnd(span(i))
  t.same(log, [], 'an export is in flight')
  processor.onEnd(span(7))
  t.equal(calls.length, 1)
  t.same(calls[0]?.spans.length, 4, 'the unsampled span was never queued')
  t.same(log, [])
  for (let i = 8; i <= 9; i++) processor.onEnd(span(i))
  t.same(log, ['dropped 1 queue_full'], 'four queued behind the export, the fifth is dropped')
  calls[0]?.done(0)
  const flushed = processor.forceFlush()
  calls[1]?.done(0)
  await flushed
  t.equal(calls.length, 2)
})

t.test('the schedule exports a partial batch', async (t) => {
  const { exporter, calls } = heldExporter()
  const processor = new BoundedBatchProcessor(exporter, { ...BATCH, scheduleDelayMs: 10 }, recorder().events)
  t.teardown(() => processor.shutdown())
  processor.onEnd(span(1))
  await sleep(40)
  t.equal(calls.length, 1)
  calls[0]?.done(0)
})

t.test('forceFlush resolves once every queued span is out, failed exports included', async (t) => {
  const { exporter, calls } = heldExporter()
  const { log, events } = recorder()
  const processor = new BoundedBatchProcessor(exporter, { ...BATCH, maxExportBatchSize: 3, maxQueueSize: 10 }, events)
  await processor.forceFlush()
  t.equal(calls.length, 0, 'nothing queued: resolves at once')
  for (let i = 1; i <= 7; i++) processor.onEnd(span(i))
  t.equal(calls.length, 1)
  let isFlushed = false
  const flushed = processor.forceFlush().then(() => void (isFlushed = true))
  calls[0]?.done(0)
  t.equal(calls.length, 2)
  calls[1]?.done(1, new Error('refused'))
  t.equal(calls.length, 3, 'a partial batch goes out while a flush waits')
  t.equal(calls[2]?.spans.length, 1)
  await sleep(1)
  t.notOk(isFlushed)
  calls[2]?.done(0)
  await flushed
  t.same(log, ['exported 3', 'failed 3 Error', 'exported 1'])
})

t.test('an export past its deadline fails as DEADLINE_EXCEEDED, but holds the one slot until the exporter answers', async (t) => {
  const { exporter, calls } = heldExporter()
  const { log, events } = recorder()
  const processor = new BoundedBatchProcessor(exporter, { ...BATCH, exportTimeoutMs: 20 }, events)
  processor.onEnd(span(1))
  processor.onEnd(span(2))
  await sleep(60)
  t.same(log, ['failed 2 ExportTimeoutError'])
  t.equal(new ExportTimeoutError('x').code, 4)
  for (let id = 3; id <= 7; id++) processor.onEnd(span(id))
  await sleep(60)
  t.equal(calls.length, 1, 'no export starts beside the one still under way')
  t.same(log, ['failed 2 ExportTimeoutError', 'dropped 1 queue_full'], 'what comes meanwhile queues, within its bound')
  calls[0]?.done(0)
  t.equal(calls.length, 2, 'the next batch goes once it answered')
  calls[0]?.done(0)
  t.equal(calls.length, 2, 'an answer given twice is heard once')
  calls[1]?.done(0)
  t.equal(calls.length, 3)
  processor.onEnd(span(8))
  calls[2]?.done(0)
  t.equal(calls.length, 3, 'a partial batch waits for the schedule')
  t.same(log, ['failed 2 ExportTimeoutError', 'dropped 1 queue_full', 'exported 2', 'exported 2'], 'the late answer is not counted')
})

t.test('an exporter that throws fails its batch and the processor carries on', async (t) => {
  const { log, events } = recorder()
  let attempts = 0
  const exporter: SpanExporter = {
    export: (_spans, callback) => {
      if (++attempts === 1) throw new TypeError('serialise failed')
      callback({ code: 0 })
    },
    shutdown: async () => {},
  }
  const processor = new BoundedBatchProcessor(exporter, BATCH, events)
  for (let i = 1; i <= 4; i++) processor.onEnd(span(i))
  t.same(log, ['failed 2 TypeError', 'exported 2'])
  await processor.shutdown()
})

t.test('shutdown stops the schedule, flushes and shuts the exporter down', async (t) => {
  const { exporter, calls, isShutDown } = heldExporter()
  const processor = new BoundedBatchProcessor(exporter, { ...BATCH, scheduleDelayMs: 10 }, recorder().events)
  processor.onEnd(span(1))
  const done = processor.shutdown()
  t.equal(calls.length, 1)
  calls[0]?.done(0)
  await done
  t.ok(isShutDown())
  processor.onStart(span(2) as never, undefined as never)
  await sleep(30)
  t.equal(calls.length, 1, 'no scheduled export after shutdown')
})
