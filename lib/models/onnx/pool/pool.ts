// ONNX sessions off the event loop, with adaptive batching (lib/README.md §10). A pool of
// SVC_ONNX_WORKERS worker threads (workers.ts), each holding a session of every pooled build; the
// JavaScript thread only encodes, queues, splits and answers.
//
// Batching. Each build has a queue of requests. A free worker takes the build whose oldest request
// has waited longest and runs that build's queued requests as one batch, whole requests in order,
// up to its max rows (SVC_BATCH_MAX_ROWS, or its metadata.json `batch.max_rows`; a larger request
// runs alone). A lone request never waits: with a max delay of 0 (SVC_BATCH_MAX_DELAY_US, the
// default) a free worker takes what is queued at once; with more, it waits up to that long after the
// oldest request for company, unless max rows are queued. The batch's output is split back by
// rows, so each request is answered as if it ran alone (values within float32 rounding: a batched
// matrix product may sum in another order). A failed batch of several requests runs each of them
// alone, so only the request at fault fails.
//
// Bounds. At most SVC_BATCH_QUEUE_ROWS rows wait across the pool; a request that would pass it is
// refused at once (503, Retry-After: PredictionBusyError `queue_full`). A request not answered
// SVC_PREDICT_TIMEOUT_MS after it arrived is answered 503 (`timeout`), waiting or running; its
// batch's other requests are unaffected. On shutdown (`close`) queued batches run at once, without
// waiting for company, until the drain's budget is nearly spent; what is left then is answered 503
// (`shutting_down`), and each worker ends once idle.
import { performance } from 'node:perf_hooks'
import { itemAt, takeFirst } from '../../../core/items.js'
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { PREDICTION_DURATION_BUCKETS } from '../../inference/duration-buckets.js'
import type { ModelVersion, Prediction } from '../../runtime.js'
import { feedsOf, joinFeatures, splitAnswer } from './batch.js'
import { PredictionBusyError } from './busy-error.js'
import type { OnnxPlan } from '../plan.js'
import { type RunOutcome, type Slot, Workers } from './workers.js'

export type PoolOptions = Readonly<{
  workers: number
  /** Intra-op threads per session, in each worker. */
  threads: number
  maxRows: number
  maxDelayUs: number
  queueRows: number
  timeoutMs: number
  series: PoolSeries
  /** Told when a worker failed and was replaced. */
  onReplaced: (cause: string) => void
}>

/** A build's batch limits, its own when its metadata.json sets them. */
export type BatchLimits = Readonly<{ maxRows: number; maxDelayUs: number }>

/** A prediction with the seconds it waited for a worker, which its duration leaves out. */
export type PooledPrediction = Prediction & Readonly<{ waitedS: number }>

type Pending = {
  readonly features: Float64Array
  readonly rows: number
  readonly arrivedAt: number
  readonly resolve: (prediction: PooledPrediction) => void
  readonly reject: (error: unknown) => void
  readonly queue: BuildQueue
  isSettled: boolean
  /** Run on its own: its batch failed, and this tells whether it is the one at fault. */
  isAlone: boolean
}

type BuildQueue = {
  readonly id: number
  readonly model: ModelVersion
  readonly plan: OnnxPlan
  readonly limits: BatchLimits
  readonly label: string
  readonly waiting: Pending[]
  running: number
  isRetired: boolean
  drained: (() => void) | undefined
}

/** What a pooled build offers its predictor (predictor.ts `pooledPredictor`). */
export type PooledBuild = Readonly<{
  predict(features: Float64Array, rows: number): Promise<PooledPrediction>
  /** No new request; resolves once its queued and running requests have settled, then releases the sessions. */
  retire(): Promise<void>
}>

const ROWS_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]

/** The pool's series, made with the service (at 0 before any graph needs a worker); `watch` gives the gauge its reading. */
export type PoolSeries = Readonly<{
  rows: Histogram
  wait: Histogram
  restarts: Counter
  watch(queuedRows: () => number): void
}>

export const createPoolSeries = (registry: Registry): PoolSeries => {
  let queued = (): number => 0
  new Gauge({
    name: 'svc_onnx_queue_rows',
    help: 'Rows waiting for an ONNX worker.',
    registers: [registry],
    collect() {
      this.set(queued())
    },
  })
  return {
    rows: new Histogram({ name: 'svc_onnx_batch_rows', help: 'Rows per ONNX run in the worker pool.', buckets: ROWS_BUCKETS, registers: [registry] }),
    wait: new Histogram({
      name: 'svc_onnx_queue_wait_seconds',
      help: 'Time a request waited for a worker before its batch ran, in seconds.',
      buckets: [...PREDICTION_DURATION_BUCKETS],
      registers: [registry],
    }),
    restarts: new Counter({ name: 'svc_onnx_worker_restarts_total', help: 'ONNX worker threads replaced after they failed.', registers: [registry] }),
    watch: (queuedRows) => {
      queued = queuedRows
    },
  }
}

export class OnnxPool {
  readonly #options: PoolOptions
  readonly #workers: Workers
  readonly #queues = new Set<BuildQueue>()
  /** The batches running, for the timeouts and the shutdown to answer. */
  readonly #running = new Set<readonly Pending[]>()
  readonly #series: PoolSeries
  #queuedRows = 0
  #nextId = 0
  #sweep: NodeJS.Timeout | undefined
  #linger: NodeJS.Timeout | undefined
  #closedAt: number | undefined
  /** The shutdown's budget is spent: nothing more runs. */
  #isStopped = false

  constructor(options: PoolOptions) {
    this.#options = options
    this.#series = options.series
    options.series.watch(() => this.#queuedRows)
    this.#workers = new Workers({
      count: options.workers,
      threads: options.threads,
      onFree: () => this.#pump(),
      onReplaced: (cause) => {
        this.#series.restarts.inc()
        options.onReplaced(cause)
      },
    })
  }

  /** Loads a build's session into every worker; rejects with onnxruntime's reason. */
  async add(model: ModelVersion, plan: OnnxPlan, bytes: Uint8Array, limits: Partial<BatchLimits>): Promise<PooledBuild> {
    const id = ++this.#nextId
    await this.#workers.load(id, bytes)
    const queue: BuildQueue = {
      id,
      model,
      plan,
      limits: { maxRows: limits.maxRows ?? this.#options.maxRows, maxDelayUs: limits.maxDelayUs ?? this.#options.maxDelayUs },
      label: `model ${model.name} version ${model.version}`,
      waiting: [],
      running: 0,
      isRetired: false,
      drained: undefined,
    }
    return { predict: (features, rows) => this.#enqueue(queue, features, rows), retire: () => this.#retire(queue) }
  }

  /**
   * Shutdown: batches go on for `budgetMs` (the drain's, less a margin for the answers to go out);
   * then what is still waiting or running is answered 503, and the threads end.
   */
  close(budgetMs: number): void {
    this.#closedAt = performance.now() + budgetMs
    clearTimeout(this.#sweep)
    this.#sweep = undefined
    this.#arm()
    // No more waiting for company: what is queued runs now.
    this.#pump()
  }

  #enqueue(queue: BuildQueue, features: Float64Array, rows: number): Promise<PooledPrediction> {
    if (queue.isRetired) return Promise.reject(new Error(`${queue.label} was replaced; its session is released`))
    if (this.#closedAt !== undefined && performance.now() >= this.#closedAt) return Promise.reject(new PredictionBusyError('shutting_down'))
    if (this.#queuedRows + rows > this.#options.queueRows) return Promise.reject(new PredictionBusyError('queue_full'))
    return new Promise((resolve, reject) => {
      queue.waiting.push({ features, rows, arrivedAt: performance.now(), resolve, reject, queue, isSettled: false, isAlone: false })
      this.#queuedRows += rows
      this.#queues.add(queue)
      this.#pump()
      this.#arm()
    })
  }

  /** The build whose oldest waiting request arrived first. */
  #oldest(): BuildQueue | undefined {
    let found: BuildQueue | undefined
    let first = Infinity
    // A queue is in the set only while it holds a request.
    for (const queue of this.#queues) {
      const { arrivedAt } = itemAt(queue.waiting, 0)
      if (arrivedAt < first) [first, found] = [arrivedAt, queue]
    }
    return found
  }

  /** Hands batches to free workers while there are both. */
  #pump(): void {
    if (this.#isStopped) return
    for (let slot = this.#workers.free(); slot !== undefined; slot = this.#workers.free()) {
      const queue = this.#oldest()
      if (queue === undefined || this.#isLingering(queue)) return
      this.#dispatch(slot, queue)
    }
  }

  /** With a max delay, a batch short of max rows waits for company until its oldest request has waited that long. */
  #isLingering(queue: BuildQueue): boolean {
    const { maxDelayUs, maxRows } = queue.limits
    const head = itemAt(queue.waiting, 0)
    if (maxDelayUs === 0 || head.isAlone || this.#closedAt !== undefined) return false
    const dueIn = head.arrivedAt + maxDelayUs / 1000 - performance.now()
    if (dueIn <= 0 || queuedRowsOf(queue) >= maxRows) return false
    this.#linger ??= setTimeout(() => {
      this.#linger = undefined
      this.#pump()
    }, dueIn)
    return true
  }

  #dispatch(slot: Slot, queue: BuildQueue): void {
    const batch = takeBatch(queue)
    const now = performance.now()
    let rows = 0
    for (const pending of batch) {
      rows += pending.rows
      this.#series.wait.observe((now - pending.arrivedAt) / 1000)
    }
    this.#queuedRows -= rows
    if (queue.waiting.length === 0) this.#queues.delete(queue)
    this.#series.rows.observe(rows)
    queue.running++
    this.#running.add(batch)
    const features = joinFeatures(batch, rows, queue.model.inputs.length)
    const feeds = feedsOf(queue.plan, features, rows, queue.model.inputs.length)
    this.#workers.run(slot, queue.id, feeds, queue.plan.fetch, (outcome) => this.#ran(queue, batch, rows, outcome, now))
  }

  #ran(queue: BuildQueue, batch: readonly Pending[], rows: number, outcome: RunOutcome, startedAt: number): void {
    queue.running--
    this.#running.delete(batch)
    if ('data' in outcome) this.#answer(queue, batch, rows, outcome.data, startedAt)
    else if (batch.length > 1 && !outcome.isWorkerLost) this.#alone(queue, batch)
    else {
      const error = new Error(`${queue.label}: ${outcome.isWorkerLost ? outcome.error : `onnxruntime failed: ${outcome.error}`}`)
      for (const pending of batch) settle(pending, error)
    }
    this.#settled(queue)
  }

  #answer(queue: BuildQueue, batch: readonly Pending[], rows: number, data: Float32Array | Float64Array, startedAt: number): void {
    const { plan, model } = queue
    if (data.length !== rows * plan.width) {
      const error = new Error(
        `${queue.label}: output ${plan.fetch} has ${data.length} values for ${rows} rows of ${plan.width}; the graph and its classes disagree`,
      )
      for (const pending of batch) settle(pending, error)
      return
    }
    let at = 0
    for (const pending of batch) {
      const waitedS = (startedAt - pending.arrivedAt) / 1000
      try {
        settle(pending, undefined, { ...splitAnswer(model, plan, data, at, pending.rows, queue.label), waitedS })
      } catch (error: unknown) {
        settle(pending, error)
      }
      at += pending.rows
    }
  }

  /** A failed batch's requests go back to the front of their queue, each to run on its own. */
  #alone(queue: BuildQueue, batch: readonly Pending[]): void {
    const left = batch.filter((pending) => !pending.isSettled)
    for (const pending of left) {
      pending.isAlone = true
      this.#queuedRows += pending.rows
    }
    queue.waiting.unshift(...left)
    if (left.length > 0) this.#queues.add(queue)
  }

  #settled(queue: BuildQueue): void {
    if (queue.isRetired && queue.running === 0 && queue.waiting.length === 0) queue.drained?.()
    this.#pump()
  }

  async #retire(queue: BuildQueue): Promise<void> {
    queue.isRetired = true
    if (queue.running > 0 || queue.waiting.length > 0) await new Promise<void>((resolve) => (queue.drained = resolve))
    this.#workers.release(queue.id)
  }

  /** One timer for the pool, at the earliest deadline: a request's timeout, or the shutdown's. */
  #arm(): void {
    if (this.#sweep !== undefined) return
    const deadline = this.#nextDeadline()
    if (deadline === undefined) return
    // Unreferenced: what keeps a process alive is a worker running a batch, not this watch.
    this.#sweep = setTimeout(() => this.#expire(), Math.max(0, deadline - performance.now())).unref()
  }

  #nextDeadline(): number | undefined {
    let first = Infinity
    for (const queue of this.#queues) first = Math.min(first, itemAt(queue.waiting, 0).arrivedAt)
    for (const batch of this.#running) for (const pending of batch) if (!pending.isSettled) first = Math.min(first, pending.arrivedAt)
    const deadline = Math.min(first + this.#options.timeoutMs, this.#closedAt ?? Infinity)
    return deadline === Infinity ? undefined : deadline
  }

  #expire(): void {
    this.#sweep = undefined
    const now = performance.now()
    const isClosing = this.#closedAt !== undefined && now >= this.#closedAt
    const isDue = (pending: Pending): boolean => isClosing || pending.arrivedAt + this.#options.timeoutMs <= now
    const reason = isClosing ? 'shutting_down' : 'timeout'
    // A running request is answered now; its batch's output, when it comes, skips it.
    for (const batch of this.#running) for (const pending of batch) if (isDue(pending)) settle(pending, new PredictionBusyError(reason))
    for (const queue of this.#queues) {
      const { waiting } = queue
      while (waiting.length > 0 && isDue(itemAt(waiting, 0))) {
        const pending = takeFirst(waiting)
        this.#queuedRows -= pending.rows
        settle(pending, new PredictionBusyError(reason))
      }
      if (waiting.length === 0) this.#queues.delete(queue)
      this.#settled(queue)
    }
    if (!isClosing) return this.#arm()
    this.#isStopped = true
    this.#workers.stop()
  }
}

/** Rows waiting in one build's queue. */
const queuedRowsOf = (queue: BuildQueue): number => queue.waiting.reduce((sum, pending) => sum + pending.rows, 0)

/** The next batch of a queue: whole requests from its head up to its max rows, at least one; one alone if it failed in a batch. */
const takeBatch = (queue: BuildQueue): Pending[] => {
  const { waiting, limits } = queue
  const first = takeFirst(waiting)
  const batch = [first]
  if (first.isAlone) return batch
  let rows = first.rows
  while (waiting.length > 0) {
    const next = itemAt(waiting, 0)
    if (next.isAlone || rows + next.rows > limits.maxRows) break
    rows += next.rows
    batch.push(takeFirst(waiting))
  }
  return batch
}

/** Answers a request once: a timeout may have answered it while its batch ran. */
const settle = (pending: Pending, error: unknown, prediction?: PooledPrediction): void => {
  if (pending.isSettled) return
  pending.isSettled = true
  if (prediction === undefined) pending.reject(error)
  else pending.resolve(prediction)
}
