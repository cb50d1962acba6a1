// An ONNX Runtime session behind the Predictor contract (runtime.ts): the features in as the tensors
// the graph takes (onnx/plan.ts `Feed`), the one fetched output back as a Prediction.
//
// Per call: one typed array per graph input (the features are float64 and row-major; a graph input
// is float32, int64… and holds its own columns) and the tensors' records. `session.run` resolves
// on a later turn (onnxruntime-node runs the graph from setImmediate), so a call is async.
// The scores are read as tensors.ts says.
//
// Release: `dispose` marks the predictor retired and releases the session once no run is under way
// (runtime.ts: a request may still hold the build); a `predict` after it rejects with an Error.
import type { InferenceSession, Tensor, TypedTensor } from 'onnxruntime-node'
import { errorMessage } from '../../core/errors.js'
import type { OnnxPlan } from './plan.js'
import type { ModelVersion, Prediction } from '../runtime.js'
import { classify, columnsOf, regress } from './tensors.js'

/** The two constructors a predictor needs from onnxruntime-node, passed in so this file never loads it. */
export type TensorConstructor = new (type: Tensor.Type, data: Tensor.DataType, dims: readonly number[]) => Tensor

/** The Predictor of one session. `model` describes it; `plan` says how to feed and read it. */
/** A Predictor (runtime.ts) whose every answer is a promise: a session runs on a later turn. */
export type OnnxPredictor = Readonly<{ predict(features: Float64Array, rows: number): Promise<Prediction>; dispose(): Promise<void> }>

export const onnxPredictor = (session: InferenceSession, Tensor: TensorConstructor, model: ModelVersion, plan: OnnxPlan): OnnxPredictor => {
  const stride = model.inputs.length
  const { feeds, fetch, width } = plan
  const fetches = [fetch]
  const isClassifier = model.task === 'classification'
  const label = `model ${model.name} version ${model.version}`
  let running = 0
  let isRetired = false
  /** Resolves the promise `dispose` returned once the last run settles. */
  let drained: (() => void) | undefined

  const read = (results: InferenceSession.ReturnType, rows: number): Prediction => {
    const output = results[fetch] as TypedTensor<'float32'> | TypedTensor<'float64'>
    if (output.data.length !== rows * width) {
      throw new Error(`${label}: output ${fetch} has ${output.data.length} values for ${rows} rows of ${width}; the graph and its classes disagree`)
    }
    return isClassifier ? classify(output.data, rows, width) : regress(output.data, rows)
  }

  const settle = (): void => {
    running--
    if (running === 0) drained?.()
  }

  return Object.freeze({
    predict: (features: Float64Array, rows: number): Promise<Prediction> => {
      if (isRetired) return Promise.reject(new Error(`${label} was replaced; its session is released`))
      const inputs: Record<string, Tensor> = {}
      for (const feed of feeds) {
        inputs[feed.name] = new Tensor(feed.kind, columnsOf(feed, features, rows, stride), feed.rank === 1 ? [rows] : [rows, feed.width])
      }
      running++
      return session.run(inputs, fetches).then(
        (results) => {
          settle()
          return read(results, rows)
        },
        (error: unknown) => {
          settle()
          throw new Error(`${label}: onnxruntime failed: ${errorMessage(error)}`, { cause: error })
        },
      )
    },
    dispose: async () => {
      isRetired = true
      if (running > 0) await new Promise<void>((resolve) => (drained = resolve))
      await session.release()
    },
  })
}
