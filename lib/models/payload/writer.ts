// The payload log's writer (lib/README.md §10): events queued after the reply, built and written
// from a later turn to the file (file-sink.ts) or the HTTP sink (http-sink.ts). Never in the way of
// an answer:
// - `enqueue` is O(1) and allocates nothing: the caller's builder goes into a ring allocated once
//   (lib/core/ring.ts), and the event's JSON text is built in the drain turn, not the request's.
// - Bounded. At most SVC_PAYLOAD_LOG_QUEUE events wait; past that, or while the service is near
//   shedding (`isUnderPressure`, the shedding layer's half-way marks), an event is dropped and
//   counted, before any request is shed.
// - Drained from a later turn, outside the request's store, as lib/models/shadow/copies.ts does and
//   for the same reasons: a drain's log lines are not the request's, and no request's context is
//   kept alive by a queued event; `requestStore.exit` only inside a store (~0.4 µs on Node 20).
// - One write in flight. A batch is everything queued (at most MAX_BATCH events); a file's is written
//   from the next timer turn, a sink's once its oldest event has waited SVC_PAYLOAD_LOG_FLUSH_MS, sooner
//   when MAX_BATCH are waiting. Meanwhile events queue, then drop: a sink that hangs costs one POST
//   (bounded by `timeoutMs`) and a full queue, never memory beyond it.
// - A failed write (ENOSPC, EACCES, a refused connection, a 5xx, no answer in time) is retried after
//   each of `retryDelaysMs`, then its events are counted `failed`. Once a batch has used up its
//   retries the sink is down: later batches get one attempt each, until one is written. Each new
//   reason is logged once (`payload_log_failed`); the first write after failures logs
//   `payload_log_recovered`.
// - `stop` (shutdown) writes what is queued within its budget, without retries; what is left, the
//   write still in flight included, is counted `dropped`, and a late answer is not counted again.
import { performance } from 'node:perf_hooks'
import type { Registry } from 'prom-client'
import { describeError } from '../../core/net/describe-error.js'
import { createRing } from '../../core/ring.js'
import type { PayloadTarget } from '../../process/config/config.js'
import { observe } from '../../telemetry/cells.js'
import type { Logger } from '../../telemetry/logger.js'
import { requestStore } from '../../telemetry/request-store.js'
import { createFileSink } from './file-sink.js'
import { createHttpSink } from './http-sink.js'
import { createPayloadMetrics, type PayloadCells } from './metrics.js'
import { type Sink, SinkError } from './sink.js'

/** Most events in one write: a sink's POST body stays around a megabyte at ~1 kB an event. */
export const MAX_BATCH = 1000
/** How long one write or POST may take before it counts as failed. */
export const WRITE_TIMEOUT_MS = 5000
/** The waits before each retry of a failed batch: about 2.6 s, then its events are `failed`. */
export const RETRY_DELAYS_MS: readonly number[] = [100, 500, 2000]

export type PayloadWriter = Readonly<{
  /** hot path: after the reply; queues `event` (a function building the event's JSON text, run in the drain turn) or drops it (queue full, under pressure). Never throws. */
  enqueue(build: () => string): void
  /** Shutdown: writes what is queued within budgetMs; what is left is counted dropped. */
  stop(budgetMs: number): Promise<void>
}>

export type PayloadWriterOptions = Readonly<{
  target: PayloadTarget
  /** Most events waiting (SVC_PAYLOAD_LOG_QUEUE). */
  capacity: number
  /** Longest an event waits for a sink's POST (SVC_PAYLOAD_LOG_FLUSH_MS); a file is written from the next turn. */
  flushMs: number
  /** A file's size past which it is rotated (SVC_PAYLOAD_LOG_MAX_BYTES). */
  maxBytes: number
  /** Rotated files kept (SVC_PAYLOAD_LOG_FILES). */
  files: number
  metrics: Registry
  logger: Logger
  /** True while the service is near shedding: events are dropped instead of queued or built. */
  isUnderPressure: () => boolean
  /** WRITE_TIMEOUT_MS unless a test brings its own. */
  timeoutMs?: number
  /** RETRY_DELAYS_MS unless a test brings its own. */
  retryDelaysMs?: readonly number[]
}>

const sinkFor = ({ target, flushMs, maxBytes, files }: PayloadWriterOptions): Sink =>
  target.kind === 'file' ? createFileSink({ path: target.path, maxBytes, files }) : createHttpSink({ url: target.url, flushMs })

/** Why a write failed, in a few stable words: a sink's own reason, or an errno's code (`ENOSPC`). */
const reasonOf = (error: unknown): string => (error instanceof SinkError ? error.message : describeError(error))

/** Logs a failure when its reason is new, and a recovery once after failures. */
const failureLog = (logger: Logger, sink: PayloadTarget['kind']) => {
  let last: string | undefined
  return {
    failed: (reason: string): void => {
      if (reason === last) return
      last = reason
      logger.warning('payload_log_failed', { sink, reason })
    },
    written: (): void => {
      if (last === undefined) return
      last = undefined
      logger.info('payload_log_recovered', { sink })
    },
  }
}

export const createPayloadWriter = (options: PayloadWriterOptions): PayloadWriter => {
  const { capacity, metrics, isUnderPressure } = options
  const queue = createRing<() => string>(capacity)
  const cells = createPayloadMetrics(metrics, () => queue.size)
  const batches = createBatches(sinkFor(options), queue, cells, options)
  return {
    enqueue: (build) => {
      if (batches.isStopping() || isUnderPressure() || !queue.put(build)) cells.outcomes.dropped.value++
      else batches.queued()
    },
    stop: batches.stop,
  }
}

type Queue = ReturnType<typeof createRing<() => string>>

/** The drain: builds batches from `queue`, writes them one at a time, retries and counts them. */
const createBatches = (sink: Sink, queue: Queue, cells: PayloadCells, options: PayloadWriterOptions) => {
  const { isUnderPressure, timeoutMs = WRITE_TIMEOUT_MS, retryDelaysMs = RETRY_DELAYS_MS } = options
  const log = failureLog(options.logger, options.target.kind)
  const { outcomes } = cells
  /** The batch being written or waiting for its retry, and its failed attempts. */
  let [batch, attempts] = [undefined as string[] | undefined, 0]
  let [isWriting, isSinkDown, isStopping, isClosed] = [false, false, false, false]
  let wake: ReturnType<typeof setTimeout> | undefined
  /** When the oldest queued event came: a sink's batch leaves `lingerMs` after it. */
  let oldestAt = 0
  let onIdle: (() => void) | undefined

  const arm = (delayMs: number): void => {
    wake = setTimeout(drain, delayMs)
  }
  // Outside the request's store (header); `exit` only inside one: on Node 20 it toggles async hooks.
  const schedule = (delayMs: number): void => {
    if (wake !== undefined || isWriting || isClosed) return
    if (requestStore.getStore() === undefined) arm(delayMs)
    else requestStore.exit(arm, delayMs)
  }
  const dueIn = (): number => (isStopping || queue.size >= MAX_BATCH ? 0 : Math.max(0, oldestAt + sink.lingerMs - performance.now()))

  /** Builds up to MAX_BATCH events; a builder that throws fails its event alone. */
  const take = (): string[] => {
    const events: string[] = []
    for (let n = Math.min(queue.size, MAX_BATCH); n > 0; n--) {
      try {
        events.push(queue.take()())
      } catch (error: unknown) {
        outcomes.failed.value++
        log.failed(`event not built: ${describeError(error)}`)
      }
    }
    oldestAt = performance.now()
    return events
  }

  const dropQueued = (): void => {
    while (queue.size > 0) {
      queue.take()
      outcomes.dropped.value++
    }
  }

  const drain = (): void => {
    wake = undefined
    if (batch === undefined) {
      if (isUnderPressure() && !isStopping) dropQueued()
      ;[batch, attempts] = [take(), 0]
    }
    if (batch.length > 0) return void write(batch)
    batch = undefined
    next()
  }

  /** After a batch: the next one, or, stopping with nothing left, the end of `stop`'s wait. */
  const next = (): void => {
    if (batch !== undefined || queue.size > 0) return schedule(batch === undefined ? dueIn() : 0)
    if (isStopping) onIdle?.()
  }

  const write = async (events: string[]): Promise<void> => {
    const start = performance.now()
    const signal = AbortSignal.timeout(timeoutMs)
    isWriting = true
    let reason: string | undefined
    try {
      await sink.write(events, signal)
    } catch (error: unknown) {
      reason = signal.aborted ? `no answer within ${timeoutMs} ms` : reasonOf(error)
    }
    isWriting = false
    // `stop` gave up on this write and counted its events dropped.
    if (isClosed) return
    observe(cells.duration, (performance.now() - start) / 1000, undefined)
    if (reason === undefined) written(events)
    else failed(events, reason)
  }

  const written = (events: string[]): void => {
    outcomes.written.value += events.length
    ;[batch, isSinkDown] = [undefined, false]
    log.written()
    next()
  }

  const failed = (events: string[], reason: string): void => {
    log.failed(reason)
    const delayMs = isStopping || isSinkDown ? undefined : retryDelaysMs[attempts++]
    if (delayMs !== undefined) return schedule(delayMs)
    outcomes.failed.value += events.length
    batch = undefined
    isSinkDown = !isStopping
    next()
  }

  /** An event is in the queue: a drain is due unless one is already, or sooner once MAX_BATCH wait. */
  const queued = (): void => {
    if (queue.size === 1) oldestAt = performance.now()
    if (wake === undefined) {
      if (!isWriting) schedule(dueIn())
    } else if (queue.size === MAX_BATCH && batch === undefined) {
      clearTimeout(wake)
      wake = undefined
      schedule(0)
    }
  }

  const stop = async (budgetMs: number): Promise<void> => {
    isStopping = true
    // A linger or a retry's wait is cut short: what is queued goes now.
    clearTimeout(wake)
    wake = undefined
    let deadline: ReturnType<typeof setTimeout> | undefined
    const idle = new Promise<void>((resolve) => {
      onIdle = resolve
      deadline = setTimeout(resolve, budgetMs)
    })
    next()
    await idle
    clearTimeout(deadline)
    isClosed = true
    clearTimeout(wake)
    outcomes.dropped.value += batch?.length ?? 0
    batch = undefined
    dropQueued()
    await sink.close()
  }

  let stopped: Promise<void> | undefined
  return { isStopping: () => isStopping, queued, stop: (budgetMs: number): Promise<void> => (stopped ??= stop(budgetMs)) }
}
