// ONNX models on ONNX Runtime (runtime.ts; lib/README.md §10). A version is
//   <model>/<version>/model.onnx      the graph, as skl2onnx, onnxmltools or torch.onnx.export write it
//   <model>/<version>/metadata.json   optional: what the graph cannot say (onnx/metadata.ts)
//   <model>/<version>/profile.json    optional: the drift reference, from `svc profile`
// Its platform is "onnxruntime".
//
// onnxruntime-node is loaded on the first `load`: a store without ONNX models never maps the
// native library, and a process that serves only the kernel pays nothing for it. `read` (sync)
// reads the graph with onnx/graph.ts, so a corrupt or truncated file is refused with a reason before
// onnxruntime sees it; `load` makes the version's one session, with the options below, and runs one
// row through it, so a graph whose operators onnxruntime lacks, or whose output disagrees with its
// classes, is refused at load, while the version it would replace keeps serving.
//
// Session options (session-options.ts), with `intraOpNumThreads` threads (SVC_ONNX_THREADS, 1 by
// default: a VM runs one instance per core, and a second thread per request only contends with the
// next request).
import type { InferenceSession } from 'onnxruntime-node'
import { errorMessage } from '../../core/errors.js'
import { describeOnnxError } from './describe.js'
import { SESSION_OPTIONS } from './session-options.js'
import { exposeZipMapInputs, inspectGraph } from './graph.js'
import { parseOnnxMetadata } from './metadata.js'
import { planOnnx, ONNX_PLATFORM, type OnnxPlan } from './plan.js'
import { onnxPredictor, type OnnxPredictor } from './predictor.js'
import { type BatchLimits, OnnxPool, type PoolOptions } from './pool/pool.js'
import type { ModelVersion, Place, Runtime } from '../runtime.js'

export type OnnxRuntimeOptions = Readonly<{
  /** Intra-op threads per session. */
  threads: number
  /** The worker pool's settings (pool.ts), made on the first version heavy enough for it; undefined or 0 workers: every version in process. */
  pool?: Omit<PoolOptions, 'threads' | 'onReplaced'> | undefined
  /** A graph whose one-row run takes less, in µs, stays in process (IN_PROCESS_MAX_US unless given). */
  inlineMaxUs?: number | undefined
  /** Where each version runs, and each worker replaced: for the log. */
  events?: OnnxEvents | undefined
}>

export type OnnxEvents = Readonly<{
  placed(model: ModelVersion, runUs: number, where: 'process' | 'workers'): void
  workerReplaced(cause: string): void
}>

/** What `read` hands `load`: the bytes onnxruntime gets (ZipMap outputs exposed), the plan and the version's batch limits. */
export type OnnxPayload = Readonly<{ bytes: Uint8Array; plan: OnnxPlan; limits: Partial<BatchLimits> }>

/** A Runtime (runtime.ts) whose load resolves with an OnnxPredictor. */
export type OnnxRuntime = Omit<Runtime<OnnxPayload>, 'load'> &
  Readonly<{
    load(model: ModelVersion, payload: OnnxPayload): Promise<OnnxPredictor>
    /** Shutdown: the worker pool's batches go on for `budgetMs`, then what is left is answered 503. */
    close(budgetMs: number): void
  }>

type OnnxModule = typeof import('onnxruntime-node')
let loading: Promise<OnnxModule> | undefined

/** onnxruntime-node, imported once, on first use. */
const onnxruntime = (): Promise<OnnxModule> => (loading ??= import('onnxruntime-node'))

/** One row of the least surprising features: zeros, a categorical input's first level. */
const probeRow = (model: ModelVersion): Float64Array => new Float64Array(model.inputs.length)

/**
 * Where a graph starts being worth a worker (SVC_ONNX_INLINE_MAX_US's default), in µs of a one-row
 * run: an iris-sized graph (9 µs) answers a lone client sooner in process, while a 300-tree ensemble
 * of depth 8 (73 to 114 µs) served 7 700 rows/s on the event loop, 17 600 from a worker, its probes
 * 40 times faster (test/bench/README.md, "Heavy models").
 */
export const IN_PROCESS_MAX_US = 50

/** The fastest of a few one-row runs, in µs: what a request would hold the event loop for in process. */
const runUs = async (predictor: OnnxPredictor, model: ModelVersion): Promise<number> => {
  const row = probeRow(model)
  let fastest = Infinity
  for (let i = 0; i < 5; i++) {
    const start = performance.now()
    await predictor.predict(row, 1)
    fastest = Math.min(fastest, (performance.now() - start) * 1000)
  }
  return fastest
}

export const createOnnxRuntime = ({ threads, pool: poolOptions, inlineMaxUs = IN_PROCESS_MAX_US, events }: OnnxRuntimeOptions): OnnxRuntime => {
  const options: InferenceSession.SessionOptions = Object.freeze({ ...SESSION_OPTIONS, intraOpNumThreads: threads })
  let pool: OnnxPool | undefined
  const poolOf = (settings: NonNullable<OnnxRuntimeOptions['pool']>): OnnxPool =>
    (pool ??= new OnnxPool({ ...settings, threads, onReplaced: (cause) => events?.workerReplaced(cause) }))

  /** A version heavy enough for the pool runs there, its in-process session released; a light one stays. */
  const toPlace = async (model: ModelVersion, payload: OnnxPayload, predictor: OnnxPredictor): Promise<OnnxPredictor> => {
    if (poolOptions === undefined || poolOptions.workers === 0) return predictor
    const us = await runUs(predictor, model)
    if (us < inlineMaxUs) {
      events?.placed(model, us, 'process')
      return predictor
    }
    let build: Awaited<ReturnType<OnnxPool['add']>>
    try {
      build = await poolOf(poolOptions).add(model, payload.plan, payload.bytes, payload.limits)
    } catch (error: unknown) {
      throw new Error(`the ONNX workers cannot load the graph: ${describeOnnxError(error)}`)
    } finally {
      await predictor.dispose()
    }
    events?.placed(model, us, 'workers')
    return Object.freeze({ predict: build.predict, dispose: build.retire })
  }

  const read = (files: readonly (Buffer | undefined)[], place: Place) => {
    const [model, metadataBytes, profile] = files as [Buffer, Buffer | undefined, Buffer | undefined]
    const original = inspectGraph(model)
    const bytes = exposeZipMapInputs(model)
    const graph = bytes === model ? original : inspectGraph(bytes)
    let metadata: ReturnType<typeof parseOnnxMetadata>
    try {
      metadata = parseOnnxMetadata(metadataBytes)
    } catch (error: unknown) {
      throw new Error(`metadata.json ${errorMessage(error)}`)
    }
    const planned = planOnnx(graph, original, metadata, { model, metadata: metadataBytes, profile }, place)
    return Object.freeze({ model: planned.model, payload: Object.freeze({ bytes, plan: planned.plan, limits: metadata.batch }) })
  }

  const load = async (model: ModelVersion, payload: OnnxPayload): Promise<OnnxPredictor> => {
    const { bytes, plan } = payload
    const ort = await onnxruntime()
    let session: InferenceSession
    try {
      session = await ort.InferenceSession.create(bytes, options)
    } catch (error: unknown) {
      throw new Error(`onnxruntime cannot load the graph: ${describeOnnxError(error)}`)
    }
    const predictor = onnxPredictor(session, ort.Tensor, model, plan)
    try {
      await predictor.predict(probeRow(model), 1)
    } catch (error: unknown) {
      await predictor.dispose()
      throw new Error(`a first prediction failed: ${describeOnnxError(error)}`)
    }
    return toPlace(model, payload, predictor)
  }

  return Object.freeze({
    close: (budgetMs: number) => pool?.close(budgetMs),
    platform: ONNX_PLATFORM,
    files: Object.freeze(['model.onnx']),
    optional: Object.freeze(['metadata.json', 'profile.json']),
    read,
    load,
  })
}
