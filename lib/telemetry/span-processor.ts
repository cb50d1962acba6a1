// A batch span processor with a bounded queue, as the SDK's BatchSpanProcessor (same OTEL_BSP_*
// settings, one export in flight at a time, one past its deadline included), written here because that one neither says how many
// spans it dropped nor why an export failed: both are what an operator needs (svc_spans_dropped_total,
// the export-failure log). Spans are kept, never copied, until their batch is exported.
import { TraceFlags, type Context } from '@opentelemetry/api'
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { SvcError } from '../core/errors.js'
import type { TracingConfig } from '../config/config.js'
import { requestStore } from './request-store.js'

export type DropReason = 'queue_full' | 'export_failed'

/** What becomes of the spans: the export reporter logs and counts from these. */
export type ExportEvents = Readonly<{
  exported(count: number): void
  failed(error: unknown, count: number): void
  dropped(reason: 'queue_full', count: number): void
}>

/** The one field of the SDK's ExportResult read here: 0 is success (ExportResultCode.SUCCESS). */
type ExportResult = Readonly<{ code: number; error?: unknown }>

/**
 * Reported when an exporter neither succeeds nor fails within OTEL_BSP_EXPORT_TIMEOUT. The export
 * still holds its slot until the exporter answers: the OTLP exporter gives up by its own timeout
 * (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s by default), and spans meanwhile queue within OTEL_BSP_MAX_QUEUE_SIZE.
 */
export class ExportTimeoutError extends SvcError<number> {
  override name = 'ExportTimeoutError'
  /** gRPC's DEADLINE_EXCEEDED, the code a collector that never answers would end with: numeric, as the exporters' errors are. */
  readonly code = 4
}

export class BoundedBatchProcessor implements SpanProcessor {
  readonly #exporter: SpanExporter
  readonly #events: ExportEvents
  readonly #maxQueueSize: number
  readonly #maxBatchSize: number
  readonly #timeoutMs: number
  readonly #timer: NodeJS.Timeout
  #queue: ReadableSpan[] = []
  #isExporting = false
  /** Resolvers of forceFlush(), called when the queue is empty and no export is in flight. */
  #flushed: Array<() => void> = []

  constructor(exporter: SpanExporter, batch: TracingConfig['batch'], events: ExportEvents) {
    this.#exporter = exporter
    this.#events = events
    this.#maxQueueSize = batch.maxQueueSize
    this.#maxBatchSize = batch.maxExportBatchSize
    this.#timeoutMs = batch.exportTimeoutMs
    // One timer for the process's life, created outside any request, so exports never run in (and
    // log with) the async context of whichever request happened to fill a batch.
    this.#timer = setInterval(this.#exportNext, batch.scheduleDelayMs).unref()
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return
    if (this.#queue.length >= this.#maxQueueSize) return this.#events.dropped('queue_full', 1)
    this.#queue.push(span)
    if (this.#queue.length >= this.#maxBatchSize && !this.#isExporting) requestStore.exit(this.#exportNext)
  }

  /** Exports everything queued, batch after batch; resolves when the queue is empty. */
  forceFlush(): Promise<void> {
    if (this.#queue.length === 0 && !this.#isExporting) return Promise.resolve()
    const flushed = new Promise<void>((resolve) => this.#flushed.push(resolve))
    requestStore.exit(this.#exportNext)
    return flushed
  }

  async shutdown(): Promise<void> {
    clearInterval(this.#timer)
    await this.forceFlush()
    await this.#exporter.shutdown()
  }

  readonly #exportNext = (): void => {
    if (this.#isExporting || this.#queue.length === 0) return
    this.#isExporting = true
    const batch = this.#queue.length <= this.#maxBatchSize ? this.#queue : this.#queue.slice(0, this.#maxBatchSize)
    this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#maxBatchSize)
    let isReported = false
    let isDone = false
    const report = (result: ExportResult): void => {
      if (isReported) return
      isReported = true
      if (result.code === 0) this.#events.exported(batch.length)
      else this.#events.failed(result.error, batch.length)
    }
    // Past the deadline the batch is failed, but the export holds the slot until the exporter
    // answers: its request is still under way, so starting the next beside it would pile them up.
    const done = (result: ExportResult): void => {
      if (isDone) return
      isDone = true
      clearTimeout(deadline)
      report(result)
      this.#isExporting = false
      this.#continue()
    }
    const deadline = setTimeout(
      () => report({ code: 1, error: new ExportTimeoutError(`export did not finish within ${this.#timeoutMs} ms`) }),
      this.#timeoutMs,
    ).unref()
    try {
      this.#exporter.export(batch, done)
    } catch (error: unknown) {
      done({ code: 1, error })
    }
  }

  /** After an export: the next batch if one is full or a flush waits, else wake the flushers. */
  #continue(): void {
    if (this.#queue.length > 0 && (this.#flushed.length > 0 || this.#queue.length >= this.#maxBatchSize)) return this.#exportNext()
    if (this.#queue.length > 0) return
    const flushed = this.#flushed
    this.#flushed = []
    for (const resolve of flushed) resolve()
  }
}
