// The payload log's writer (lib/README.md §10): events queued after the reply, built and written
// from a later turn to the file (file-sink.ts) or the HTTP sink (http-sink.ts). Never in the way of
// an answer:
// - `enqueue` is O(1) and allocates nothing: the caller's builder goes into a ring allocated once
//   (lib/core/ring.ts), and the event's JSON text is built in the drain turn, not the request's.
// - Bounded, in events and in bytes. At most SVC_PAYLOAD_LOG_QUEUE events wait, holding at most
//   SVC_PAYLOAD_LOG_QUEUE_BYTES (what each keeps alive, as its caller estimates it: rows, answers,
//   tokens); past either, or while the service is near shedding (`isUnderPressure`, the shedding
//   layer's half-way marks), an event is dropped and counted by reason, before any request is shed.
// - Drained from a later turn, outside the request's store, as lib/serving/shadow/copies.ts does and
//   for the same reasons: a drain's log lines are not the request's, and no request's context is
//   kept alive by a queued event; `requestStore.exit` only inside a store (~0.4 µs on Node 20).
// - Built and encoded in slices of the loop, as /metrics is (lib/core/schedule/slices.ts): each event
//   is built, then encoded into the batch's buffer at once, and the clock is read between events, so
//   no turn joins or encodes a whole batch. 1 000 events of 100 rows built in one turn stalled the
//   loop 528 ms; in slices, test/bench/README.md (Payload log) has the longest turn. A batch is
//   built once: its retries resend the same bytes.
// - One write in flight. A batch is everything queued (at most MAX_BATCH events), written once its
//   oldest event has waited the sink's linger (a file's FILE_LINGER_MS, a sink's
//   SVC_PAYLOAD_LOG_FLUSH_MS), sooner when MAX_BATCH are waiting. Meanwhile events queue, then drop:
//   a sink that hangs costs one POST (bounded by `timeoutMs`) and a full queue, never memory beyond it.
// - A failed write (ENOSPC, EACCES, a refused connection, a 5xx, no answer in time) is retried after
//   each of `retryDelaysMs`, then its events are counted `failed`. Once a batch has used up its
//   retries the sink is down: later batches get one attempt each, until one is written. Each new
//   reason is logged once (`payload_log_failed`); the first write after failures logs
//   `payload_log_recovered`.
// - `stop` (shutdown) writes what is queued within its budget, without retries; what is left, the
//   write still in flight and the events of a batch still being built included, is counted
//   `dropped`, and a late answer, or the build's next slice, counts nothing again.
import { performance } from 'node:perf_hooks'
import type { Registry } from 'prom-client'
import { describeError } from '../../core/net/describe-error.js'
import { createRing, type Ring } from '../../core/ring.js'
import { nextSlice, sliceElapsed } from '../../core/schedule/slices.js'
import type { PayloadTarget } from '../../config/config.js'
import { observe } from '../../telemetry/metrics/cells.js'
import type { Logger } from '../../telemetry/logger.js'
import { requestStore } from '../../telemetry/request-store.js'
import { createFileSink } from './file-sink.js'
import { createHttpSink } from './http-sink.js'
import { createPayloadMetrics, type DropReason, type PayloadCells } from './metrics.js'
import { type Sink, SinkError } from './sink.js'

/** Most events in one write: a sink's POST body stays around a megabyte at ~1 kB an event. */
export const MAX_BATCH = 1000
/** How long one write or POST may take before it counts as failed. */
export const WRITE_TIMEOUT_MS = 5000
/** The waits before each retry of a failed batch: about 2.6 s, then its events are `failed`. */
export const RETRY_DELAYS_MS: readonly number[] = [100, 500, 2000]

export type PayloadWriter = Readonly<{
  /**
   * hot path: after the reply; queues `build` (a function building the event's JSON text, run in
   * the drain turn), holding about `bytes` until then, or drops it (queue full in events or bytes,
   * under pressure). Never throws.
   */
  enqueue(build: () => string, bytes: number): void
  /** Shutdown: writes what is queued within budgetMs; what is left is counted dropped. */
  stop(budgetMs: number): Promise<void>
}>

export type PayloadWriterOptions = Readonly<{
  target: PayloadTarget
  /** Most events waiting (SVC_PAYLOAD_LOG_QUEUE). */
  capacity: number
  /** Most bytes the waiting events hold (SVC_PAYLOAD_LOG_QUEUE_BYTES). */
  capacityBytes: number
  /** Longest an event waits for a sink's POST (SVC_PAYLOAD_LOG_FLUSH_MS); a file's batch waits FILE_LINGER_MS. */
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

type FailureLog = Readonly<{ failed(reason: string): void; written(): void }>

/** Logs a failure when its reason is new, and a recovery once after failures. */
const failureLog = (logger: Logger, sink: PayloadTarget['kind']): FailureLog => {
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
  const { capacity, capacityBytes, metrics, isUnderPressure } = options
  const queue = createQueue(capacity)
  const cells = createPayloadMetrics(metrics, () => queue.size)
  const drain = new Drain(sinkFor(options), queue, cells, options)
  return {
    enqueue: (build, bytes) => {
      const reason: DropReason | undefined = drain.isStopping
        ? 'shutdown'
        : isUnderPressure()
          ? 'pressure'
          : queue.bytes + bytes > capacityBytes
            ? 'bytes'
            : queue.put(build, bytes)
              ? undefined
              : 'queue'
      if (reason === undefined) drain.queued()
      else drop(cells, reason, 1)
    },
    stop: (budgetMs) => (drain.stopped ??= drain.stop(budgetMs)),
  }
}

/** Counts `count` events dropped for `reason`. */
const drop = (cells: PayloadCells, reason: DropReason, count: number): void => {
  cells.outcomes.dropped.value += count
  cells.drops[reason].value += count
}

/** The builders waiting, and what they hold: each one's bytes in a ring beside it, their sum kept. */
type Queue = Readonly<{
  readonly size: number
  readonly bytes: number
  put(build: () => string, bytes: number): boolean
  take(): () => string
}>

const createQueue = (capacity: number): Queue => {
  const builds: Ring<() => string> = createRing(capacity)
  const sizes: Ring<number> = createRing(capacity)
  let bytes = 0
  return {
    get size() {
      return builds.size
    },
    get bytes() {
      return bytes
    },
    put: (build, size) => {
      if (!builds.put(build)) return false
      sizes.put(size)
      bytes += size
      return true
    },
    take: () => {
      bytes -= sizes.take()
      return builds.take()
    },
  }
}

/** A batch built: its bytes as the sink takes them, kept for its retries, and how many events they hold. */
type Batch = Readonly<{ pieces: readonly Buffer[]; events: number }>

/**
 * The size of a batch's pieces: an event larger than that has a piece of its own. The HTTP sink
 * sends a piece a turn, and a write of 1 MiB to a peer on loopback was about 1.5 ms of CPU.
 */
const PIECE_BYTES = 1 << 18

/**
 * Text encoded as UTF-8 into pieces of PIECE_BYTES, each text flattened and encoded as it comes, a
 * new piece begun when the next may not fit: nothing written is ever copied again. One buffer grown
 * by doubling copied 16 MB in one turn at 833 events of 100 rows (15 to 18 ms of CPU).
 */
class Pieces {
  readonly #done: Buffer[] = []
  #buffer = Buffer.allocUnsafeSlow(PIECE_BYTES)
  #length = 0

  write(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for the worst case, so nothing is cut.
    const needed = 3 * text.length
    if (this.#length + needed > this.#buffer.length) {
      if (this.#length > 0) this.#done.push(this.#buffer.subarray(0, this.#length))
      this.#buffer = Buffer.allocUnsafeSlow(Math.max(PIECE_BYTES, needed))
      this.#length = 0
    }
    this.#length += this.#buffer.write(text, this.#length)
  }

  /** What was written, in order. */
  pieces(): Buffer[] {
    this.#done.push(this.#buffer.subarray(0, this.#length))
    return this.#done
  }
}

const dropQueued = (queue: Queue, cells: PayloadCells, reason: DropReason): void => {
  const count = queue.size
  while (queue.size > 0) queue.take()
  drop(cells, reason, count)
}

/**
 * The drain: builds batches from the queue, writes them one at a time, retries and counts them. A
 * class: a dozen fields of state every step reads, in one fixed shape.
 */
class Drain {
  isStopping = false
  stopped: Promise<void> | undefined
  readonly #sink: Sink
  readonly #queue: Queue
  readonly #cells: PayloadCells
  readonly #log: FailureLog
  readonly #isUnderPressure: () => boolean
  readonly #timeoutMs: number
  readonly #retryDelaysMs: readonly number[]
  /** The batch being written or waiting for its retry, and its failed attempts. */
  #batch: Batch | undefined
  #attempts = 0
  /** A batch is being built, or written: nothing else starts meanwhile. */
  #isBusy = false
  /** Events of the batch being built, taken from the queue and built so far. */
  #building = 0
  /** The last batch used up its retries: until one is written, each batch gets one attempt. */
  #isSinkDown = false
  #isClosed = false
  #wake: ReturnType<typeof setTimeout> | undefined
  /** When the oldest queued event came: a sink's batch leaves `lingerMs` after it. */
  #oldestAt = 0
  #onIdle: (() => void) | undefined

  constructor(sink: Sink, queue: Queue, cells: PayloadCells, options: PayloadWriterOptions) {
    this.#sink = sink
    this.#queue = queue
    this.#cells = cells
    this.#log = failureLog(options.logger, options.target.kind)
    this.#isUnderPressure = options.isUnderPressure
    this.#timeoutMs = options.timeoutMs ?? WRITE_TIMEOUT_MS
    this.#retryDelaysMs = options.retryDelaysMs ?? RETRY_DELAYS_MS
  }

  /** An event is in the queue: a drain is due unless one is already, or sooner once MAX_BATCH wait. */
  queued(): void {
    const size = this.#queue.size
    if (size === 1) this.#oldestAt = performance.now()
    if (this.#wake === undefined) {
      if (!this.#isBusy) this.#schedule(this.#dueIn())
    } else if (size === MAX_BATCH && this.#batch === undefined) {
      clearTimeout(this.#wake)
      this.#wake = undefined
      this.#schedule(0)
    }
  }

  async stop(budgetMs: number): Promise<void> {
    this.isStopping = true
    // A linger or a retry's wait is cut short: what is queued goes now.
    clearTimeout(this.#wake)
    this.#wake = undefined
    let deadline: ReturnType<typeof setTimeout> | undefined
    const idle = new Promise<void>((resolve) => {
      this.#onIdle = resolve
      deadline = setTimeout(resolve, budgetMs)
    })
    this.#next()
    await idle
    clearTimeout(deadline)
    this.#isClosed = true
    clearTimeout(this.#wake)
    // The batch out or waiting, and the events a build still in progress took: its next slice stops there.
    drop(this.#cells, 'shutdown', (this.#batch?.events ?? 0) + this.#building)
    this.#batch = undefined
    this.#building = 0
    dropQueued(this.#queue, this.#cells, 'shutdown')
    await this.#sink.close()
  }

  readonly #arm = (delayMs: number): void => {
    this.#wake = setTimeout(this.#drain, delayMs)
  }

  // Outside the request's store (header); `exit` only inside one: on Node 20 it toggles async hooks.
  #schedule(delayMs: number): void {
    if (this.#wake !== undefined || this.#isBusy || this.#isClosed) return
    if (requestStore.getStore() === undefined) this.#arm(delayMs)
    else requestStore.exit(this.#arm, delayMs)
  }

  #dueIn(): number {
    if (this.isStopping || this.#queue.size >= MAX_BATCH) return 0
    return Math.max(0, this.#oldestAt + this.#sink.lingerMs - performance.now())
  }

  readonly #drain = (): void => {
    this.#wake = undefined
    if (this.#batch !== undefined) return void this.#write(this.#batch)
    if (this.#isUnderPressure() && !this.isStopping) dropQueued(this.#queue, this.#cells, 'pressure')
    void this.#build()
  }

  /**
   * Builds up to MAX_BATCH events into one buffer, framed for the sink, a slice of the loop at a
   * time; a builder that throws fails its event alone. Events leave the queue one by one as they
   * are built, so what waits still counts toward its bounds; `stop` closing meanwhile counts the
   * events built so far (`#building`) and the build ends at its next slice.
   */
  async #build(): Promise<void> {
    this.#isBusy = true
    const { open, separator, close } = this.#sink.frame
    const body = new Pieces()
    body.write(open)
    let sliceStart = performance.now()
    for (let n = Math.min(this.#queue.size, MAX_BATCH); n > 0; n--) {
      if (sliceElapsed(sliceStart)) {
        sliceStart = await nextSlice()
        if (this.#isClosed) return
      }
      try {
        const event = this.#queue.take()()
        if (this.#building++ > 0) body.write(separator)
        body.write(event)
      } catch (error: unknown) {
        this.#cells.outcomes.failed.value++
        this.#log.failed(`event not built: ${describeError(error)}`)
      }
    }
    this.#isBusy = false
    const events = this.#building
    this.#building = 0
    this.#oldestAt = performance.now()
    if (events === 0) return this.#next()
    body.write(close)
    this.#batch = { pieces: body.pieces(), events }
    this.#attempts = 0
    void this.#write(this.#batch)
  }

  /** After a batch: the next one, or, stopping with nothing left, the end of `stop`'s wait. */
  #next(): void {
    if (this.#batch !== undefined || this.#queue.size > 0) return this.#schedule(this.#batch === undefined ? this.#dueIn() : 0)
    if (this.isStopping) this.#onIdle?.()
  }

  async #write(batch: Batch): Promise<void> {
    const start = performance.now()
    const signal = AbortSignal.timeout(this.#timeoutMs)
    this.#isBusy = true
    let reason: string | undefined
    try {
      await this.#sink.write(batch.pieces, signal)
    } catch (error: unknown) {
      reason = signal.aborted ? `no answer within ${this.#timeoutMs} ms` : reasonOf(error)
    }
    this.#isBusy = false
    // `stop` gave up on this write and counted its events dropped.
    if (this.#isClosed) return
    observe(this.#cells.duration, (performance.now() - start) / 1000, undefined)
    if (reason === undefined) this.#written(batch)
    else this.#failed(batch, reason)
  }

  #written(batch: Batch): void {
    this.#cells.outcomes.written.value += batch.events
    this.#batch = undefined
    this.#isSinkDown = false
    this.#log.written()
    this.#next()
  }

  #failed(batch: Batch, reason: string): void {
    this.#log.failed(reason)
    const delayMs = this.isStopping || this.#isSinkDown ? undefined : this.#retryDelaysMs[this.#attempts++]
    if (delayMs !== undefined) return this.#schedule(delayMs)
    this.#cells.outcomes.failed.value += batch.events
    this.#batch = undefined
    this.#isSinkDown = !this.isStopping
    this.#next()
  }
}
