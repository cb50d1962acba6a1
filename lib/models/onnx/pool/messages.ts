// What the ONNX pool (pool.ts) and its workers (worker.ts) send each other. Types only.
import type { ElementKind } from '../plan.js'

/** A graph input, built: its element type as onnxruntime names it, its values and dimensions. */
export type FeedTensor = Readonly<{
  name: string
  type: ElementKind
  data: Float32Array | Float64Array | BigInt64Array | Int32Array | Uint8Array | string[]
  dims: readonly number[]
}>

export type ToWorker =
  | Readonly<{ kind: 'load'; id: number; bytes: Uint8Array; threads: number }>
  | Readonly<{ kind: 'run'; id: number; seq: number; feeds: readonly FeedTensor[]; fetch: string }>
  | Readonly<{ kind: 'release'; id: number }>

export type ToPool =
  | Readonly<{ kind: 'loaded'; id: number }>
  | Readonly<{ kind: 'ran'; seq: number; data: Float32Array | Float64Array }>
  | Readonly<{ kind: 'load_failed'; id: number; message: string }>
  | Readonly<{ kind: 'run_failed'; seq: number; message: string }>
