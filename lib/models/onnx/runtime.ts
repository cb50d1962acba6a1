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
// Session options, for a server: `intraOpNumThreads` threads (SVC_ONNX_THREADS, 1 by default: a VM
// runs one instance per core, and a second thread per request only contends with the next request),
// one inter-op thread and sequential execution (these graphs have no parallel branches worth a
// thread), every graph optimisation, and onnxruntime's own logging at fatal only: its warnings go
// to stderr outside svc's log lines, and its errors come back as exceptions, which svc reports.
import type { InferenceSession } from 'onnxruntime-node'
import { errorMessage } from '../../core/errors.js'
import { exposeZipMapInputs, inspectGraph } from './graph.js'
import { parseOnnxMetadata } from './metadata.js'
import { planOnnx, ONNX_PLATFORM, type OnnxPlan } from './plan.js'
import { onnxPredictor, type OnnxPredictor } from './predictor.js'
import type { ModelVersion, Place, Runtime } from '../runtime.js'

export type OnnxRuntimeOptions = Readonly<{
  /** Intra-op threads per session. */
  threads: number
}>

/** What `read` hands `load`: the bytes onnxruntime gets (ZipMap outputs exposed) and the plan. */
export type OnnxPayload = Readonly<{ bytes: Uint8Array; plan: OnnxPlan }>

/** A Runtime (runtime.ts) whose load resolves with an OnnxPredictor. */
export type OnnxRuntime = Omit<Runtime<OnnxPayload>, 'load'> & Readonly<{ load(model: ModelVersion, payload: OnnxPayload): Promise<OnnxPredictor> }>

type OnnxModule = typeof import('onnxruntime-node')
let loading: Promise<OnnxModule> | undefined

/** onnxruntime-node, imported once, on first use. */
const onnxruntime = (): Promise<OnnxModule> => (loading ??= import('onnxruntime-node'))

/** Longest onnxruntime message kept in a reason: its messages can quote a whole node. */
const MAX_MESSAGE_LENGTH = 300

/**
 * onnxruntime's message in words fit for a model's reason: its status prefix and any source
 * location dropped, one line, bounded. No native stack reaches a client or a log line.
 */
export const describeOnnxError = (error: unknown): string => {
  const text = errorMessage(error)
    .replace(/\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*\w+\s*:\s*/g, '')
    .replace(/\S*\/[\w./-]+\.(?:cc|cpp|h):\d+\S*/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text
}

/** One row of the least surprising features: zeros, a categorical input's first level. */
const probeRow = (model: ModelVersion): Float64Array => new Float64Array(model.inputs.length)

export const createOnnxRuntime = ({ threads }: OnnxRuntimeOptions): OnnxRuntime => {
  const options: InferenceSession.SessionOptions = Object.freeze({
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 4,
  })

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
    return Object.freeze({ model: planned.model, payload: Object.freeze({ bytes, plan: planned.plan }) })
  }

  const load = async (model: ModelVersion, { bytes, plan }: OnnxPayload): Promise<OnnxPredictor> => {
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
    return predictor
  }

  return Object.freeze({
    platform: ONNX_PLATFORM,
    files: Object.freeze(['model.onnx']),
    optional: Object.freeze(['metadata.json', 'profile.json']),
    read,
    load,
  })
}
