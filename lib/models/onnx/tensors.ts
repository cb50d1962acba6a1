// Between a request's features and a graph's tensors, in process (predictor.ts) and for the worker
// pool's batches (batch.ts) alike: a graph input's columns cut from the features, and a fetched
// output read as the answer.
//
// Probabilities: the response promises rows that sum to 1 (inference/response.ts). A row of
// non-negative scores is divided by its sum: probabilities pass unchanged to float32 precision, and
// a tree ensemble exported with post_transform NONE, whose scores are summed leaf weights, answers
// their shares. A row with a negative score holds margins, not weights: it is answered as their
// softmax. Either way the label is the most probable class (the first, on a tie).
import type { Feed } from './plan.js'
import type { Prediction } from '../runtime.js'

// `a[i]` for an index the loop keeps in range, which noUncheckedIndexedAccess cannot see: this
// module's numeric assertion, for the features, the scores and the probabilities alike.
const numberAt = (a: ArrayLike<number>, i: number): number => a[i] as number

export type Columns = Float32Array | Float64Array | BigInt64Array | Int32Array | Uint8Array | string[]

/** One graph input's values for `rows` rows, cut from the features (rows × `stride`, row-major). */
export const columnsOf = (feed: Feed, features: Float64Array, rows: number, stride: number): Columns => {
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
export const classify = (scores: ArrayLike<number>, rows: number, classes: number): Prediction => {
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

export const regress = (values: ArrayLike<number>, rows: number): Prediction => {
  const out = new Float64Array(rows)
  for (let r = 0; r < rows; r++) {
    const value = numberAt(values, r)
    if (!Number.isFinite(value)) throw new Error(`the graph answered a non-finite value in row ${r}`)
    out[r] = value
  }
  return { values: out }
}
