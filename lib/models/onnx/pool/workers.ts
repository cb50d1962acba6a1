// The worker threads of the ONNX pool (pool.ts): each started from worker.ts, each holding a session
// of every build the pool serves, each running one batch at a time. A worker that throws or exits
// (`ERR_WORKER_OUT_OF_MEMORY` included) fails the batch it held, with the cause, and is replaced by a
// new one that loads every session again before it takes a batch. A native crash ends the process
// (systemd restarts it).
import { extname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { errorMessage } from '../../../core/errors.js'
import type { FeedTensor, ToPool, ToWorker } from './messages.js'

// worker.js beside this file when compiled, worker.ts under the tests' loader.
const WORKER_FILE = new URL(`./worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url)

export type RunOutcome = Readonly<{ data: Float32Array | Float64Array }> | Readonly<{ error: string; isWorkerLost: boolean }>

/** One thread: free when `done` is undefined and it has loaded every session. */
export type Slot = {
  readonly worker: Worker
  /** The sessions it is loading: it takes no batch until it has them all. */
  readonly loads: Set<number>
  isReady: boolean
  /** What the batch it runs is waiting for; undefined when free. */
  done: ((outcome: RunOutcome) => void) | undefined
}

export type WorkersOptions = Readonly<{
  count: number
  threads: number
  /** A slot became free (a batch ended, or a replacement finished loading). */
  onFree: () => void
  /** A worker failed and was replaced: for the log and the series. */
  onReplaced: (cause: string) => void
}>

/** A `load` under way: the workers still loading it, and the first refusal. */
type Loading = { pending: Set<Slot>; failure: string | undefined; settle: (failure: string | undefined) => void }

export class Workers {
  readonly slots: Slot[] = []
  readonly #options: WorkersOptions
  /** Every live session's bytes, by id: what a replacement loads. */
  readonly #sessions = new Map<number, Uint8Array>()
  readonly #loading = new Map<number, Loading>()
  #seq = 0
  #isClosed = false

  constructor(options: WorkersOptions) {
    this.#options = options
    for (let i = 0; i < options.count; i++) this.slots.push(this.#start())
  }

  /** A free slot, or undefined when every worker is busy or loading. */
  free(): Slot | undefined {
    return this.slots.find((slot) => slot.isReady && slot.done === undefined)
  }

  /** Runs one batch on `slot` (free); `done` hears its output or why it failed. */
  run(slot: Slot, id: number, feeds: readonly FeedTensor[], fetch: string, done: (outcome: RunOutcome) => void): void {
    slot.done = done
    this.#hold(slot)
    this.#post(slot, { kind: 'run', id, seq: ++this.#seq, feeds, fetch })
  }

  /** Loads a session into every worker; rejects with onnxruntime's reason if any refuses it (then released everywhere). */
  async load(id: number, bytes: Uint8Array): Promise<void> {
    this.#sessions.set(id, bytes)
    const failure = await new Promise<string | undefined>((settle) => {
      this.#loading.set(id, { pending: new Set(this.slots), failure: undefined, settle })
      for (const slot of this.slots) this.#load(slot, id, bytes)
    })
    this.#loading.delete(id)
    if (failure !== undefined) {
      this.release(id)
      throw new Error(failure)
    }
  }

  release(id: number): void {
    this.#sessions.delete(id)
    for (const slot of this.slots) this.#post(slot, { kind: 'release', id })
  }

  /**
   * Ends every thread once it is idle: a thread ended while onnxruntime runs or loads a session in it
   * aborts the whole process (onnxruntime-node throws from native code into a terminating thread).
   */
  stop(): void {
    this.#isClosed = true
    for (const slot of this.slots) this.#endIfIdle(slot)
  }

  #endIfIdle(slot: Slot): void {
    if (this.#isClosed && slot.done === undefined && slot.loads.size === 0) void slot.worker.terminate()
  }

  #post(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message)
  }

  #load(slot: Slot, id: number, bytes: Uint8Array): void {
    slot.loads.add(id)
    this.#hold(slot)
    this.#post(slot, { kind: 'load', id, bytes, threads: this.#options.threads })
  }

  /** A worker keeps the process alive only while it has work: a CLI that loaded a model can end. */
  #hold(slot: Slot): void {
    if (slot.done !== undefined || slot.loads.size > 0) slot.worker.ref()
    else slot.worker.unref()
  }

  #start(): Slot {
    const worker = new Worker(WORKER_FILE)
    const slot: Slot = { worker, loads: new Set(), isReady: false, done: undefined }
    worker.on('message', (message: ToPool) => this.#heard(slot, message))
    worker.on('error', (error: Error) => this.#lost(slot, errorMessage(error)))
    worker.on('exit', (code: number) => this.#lost(slot, `the worker exited with code ${code}`))
    this.#loadAll(slot)
    return slot
  }

  /** A new worker loads every live session before it takes a batch. */
  #loadAll(slot: Slot): void {
    for (const [id, bytes] of this.#sessions) this.#load(slot, id, bytes)
    slot.isReady = slot.loads.size === 0
    this.#hold(slot)
  }

  #heard(slot: Slot, message: ToPool): void {
    if (message.kind === 'ran' || message.kind === 'run_failed') {
      const { done } = slot
      slot.done = undefined
      this.#hold(slot)
      done?.(message.kind === 'ran' ? { data: message.data } : { error: message.message, isWorkerLost: false })
      this.#endIfIdle(slot)
      this.#options.onFree()
      return
    }
    slot.loads.delete(message.id)
    this.#hold(slot)
    this.#endIfIdle(slot)
    const loading = this.#loading.get(message.id)
    if (loading !== undefined) this.#answered(loading, slot, message.kind === 'load_failed' ? message.message : undefined)
    if (!slot.isReady && slot.loads.size === 0) {
      slot.isReady = true
      this.#options.onFree()
    }
  }

  #answered(loading: Loading, slot: Slot, failure: string | undefined): void {
    loading.failure ??= failure
    loading.pending.delete(slot)
    if (loading.pending.size === 0) loading.settle(loading.failure)
  }

  /** A worker gone: its batch fails with the cause, its loads count as refused, and a new one takes its place. */
  #lost(slot: Slot, cause: string): void {
    const at = this.slots.indexOf(slot)
    if (at === -1 || this.#isClosed) return
    const { done } = slot
    slot.done = undefined
    const reason = `the ONNX worker failed: ${cause}`
    done?.({ error: reason, isWorkerLost: true })
    for (const loading of this.#loading.values()) if (loading.pending.has(slot)) this.#answered(loading, slot, reason)
    void slot.worker.terminate()
    this.slots[at] = this.#start()
    this.#options.onReplaced(cause)
  }
}
