// A batch of the worker pool (pool.ts), on the JavaScript thread: the requests' features joined
// into one table, the graph's tensors cut from it, and the output split back into each request's
// answer, as if it had run alone.
import { errorMessage } from '../../../core/errors.js'
import type { FeedTensor } from './messages.js'
import type { OnnxPlan } from '../plan.js'
import type { ModelVersion, Prediction } from '../../runtime.js'
import { classify, columnsOf, regress } from '../tensors.js'

/** The features of a batch's requests, in order, as one row-major table of `rows` rows. */
export const joinFeatures = (batch: readonly Readonly<{ features: Float64Array; rows: number }>[], rows: number, stride: number): Float64Array => {
  const [first] = batch
  // A lone request's features are the table: no copy.
  if (batch.length === 1 && first !== undefined && first.features.length === rows * stride) return first.features
  const table = new Float64Array(rows * stride)
  let at = 0
  for (const { features, rows: count } of batch) {
    table.set(features.subarray(0, count * stride), at)
    at += count * stride
  }
  return table
}

/** The graph's inputs for `rows` rows of `features`, built to cross to a worker. */
export const feedsOf = (plan: OnnxPlan, features: Float64Array, rows: number, stride: number): FeedTensor[] =>
  plan.feeds.map((feed) => ({
    name: feed.name,
    type: feed.kind,
    data: columnsOf(feed, features, rows, stride),
    dims: feed.rank === 1 ? [rows] : [rows, feed.width],
  }))

/** One request's answer: its `rows` rows of the output, from row `first`. */
export const splitAnswer = (model: ModelVersion, plan: OnnxPlan, data: Float32Array | Float64Array, first: number, rows: number, label: string): Prediction => {
  const own = data.subarray(first * plan.width, (first + rows) * plan.width)
  try {
    return model.task === 'classification' ? classify(own, rows, plan.width) : regress(own, rows)
  } catch (error: unknown) {
    throw new Error(`${label}: ${errorMessage(error)}`, { cause: error })
  }
}
