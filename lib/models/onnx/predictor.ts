// An ONNX Runtime session behind the Predictor contract (runtime.ts): the features in as the tensors
// the graph takes (onnx/plan.ts `Feed`), the one fetched output back as a Prediction.
//
// Per call: one typed array per graph input (the features are float64 and row-major; a graph input
// is float32, int64… and holds its own columns) and the tensors' records. `session.run` resolves
// on a later turn (onnxruntime-node runs the graph from setImmediate), so a call is async.
//
// Probabilities: the response promises rows that sum to 1 (inference/response.ts). A row of
// non-negative scores is divided by its sum: probabilities pass unchanged to float32 precision, and
// a tree ensemble exported with post_transform NONE, whose scores are summed leaf weights, answers
// their shares. A row with a negative score holds margins, not weights: it is answered as their
// softmax. Either way the label is the most probable class (the first, on a tie).
//
// Release: `dispose` marks the predictor retired and releases the session once no run is under way
// (runtime.ts: a request may still hold the build); a `predict` after it rejects with an Error.
import type { InferenceSession, Tensor, TypedTensor } from 'onnxruntime-node'
import { errorMessage } from '../../core/errors.js'
import type { Feed, OnnxPlan } from './plan.js'
import type { ModelVersion, Prediction } from '../runtime.js'

/** The two constructors a predictor needs from onnxruntime-node, passed in so this file never loads it. */
export type TensorConstructor = new (type: Tensor.Type, data: Tensor.DataType, dims: readonly number[]) => Tensor

// `a[i]` for an index the loop keeps in range, which noUncheckedIndexedAccess cannot see: this
// module's numeric assertion, for the features, the scores and the probabilities alike.
const numberAt = (a: ArrayLike<number>, i: number): number => a[i] as number

type Columns = Float32Array | Float64Array | BigInt64Array | Int32Array | Uint8Array | string[]

/** One graph input's values for `rows` rows, cut from the features (rows × `stride`, row-major). */
const columnsOf = (feed: Feed, features: Float64Array, rows: number, stride: number): Columns => {
  const { first, width, kind, levels } = feed
  const size = rows * width
  if (levels !== undefined) {
    const out = new Array<string>(size)
    // Encoding wrote a level index of this input, so every index is one of its levels.
    for (let r = 0; r < rows; r++) out[r] = levels[numberAt(features, r * stride + first)] as string
    return out
  }
  // A double [N, F] input that takes every column is the features themselves: no copy.
  if (kind === 'float64' && width === stride) return features.length === size ? features : features.subarray(0, size)
  const out =
    kind === 'float32'
      ? new Float32Array(size)
      : kind === 'float64'
        ? new Float64Array(size)
        : kind === 'int32'
          ? new Int32Array(size)
          : kind === 'bool'
            ? new Uint8Array(size)
            : undefined
  if (out === undefined) {
    const ints = new BigInt64Array(size)
    for (let r = 0; r < rows; r++) for (let j = 0; j < width; j++) ints[r * width + j] = BigInt(numberAt(features, r * stride + first + j))
    return ints
  }
  for (let r = 0; r < rows; r++) for (let j = 0; j < width; j++) out[r * width + j] = numberAt(features, r * stride + first + j)
  return out
}

/** A classifier's rows of scores as probabilities, and each row's most probable class. */
const classify = (scores: ArrayLike<number>, rows: number, classes: number): Prediction => {
  const probabilities = new Float64Array(rows * classes)
  const labels = new Uint32Array(rows)
  for (let r = 0; r < rows; r++) {
    const at = r * classes
    let sum = 0
    let min = Infinity
    let max = -Infinity
    let best = 0
    for (let c = 0; c < classes; c++) {
      const score = numberAt(scores, at + c)
      sum += score
      if (score < min) min = score
      if (score > max) {
        max = score
        best = c
      }
    }
    if (!Number.isFinite(sum)) throw new Error(`the graph answered a non-finite score in row ${r}`)
    labels[r] = best
    if (min >= 0 && sum > 0) {
      for (let c = 0; c < classes; c++) probabilities[at + c] = numberAt(scores, at + c) / sum
      continue
    }
    let total = 0
    for (let c = 0; c < classes; c++) total += probabilities[at + c] = Math.exp(numberAt(scores, at + c) - max)
    for (let c = 0; c < classes; c++) probabilities[at + c] = numberAt(probabilities, at + c) / total
  }
  return { labels, probabilities }
}

const regress = (values: ArrayLike<number>, rows: number): Prediction => {
  const out = new Float64Array(rows)
  for (let r = 0; r < rows; r++) {
    const value = numberAt(values, r)
    if (!Number.isFinite(value)) throw new Error(`the graph answered a non-finite value in row ${r}`)
    out[r] = value
  }
  return { values: out }
}

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
