// The predictor's own arithmetic, against a session that answers what the test says: how each feed
// is cut from the features, and what is refused in an answer. A real session cannot be made to
// answer NaN or fail a run the plan prepared, so those are proven here; test/models/runtime-onnx
// and test/integration/onnx run real sessions.
import type { InferenceSession } from 'onnxruntime-node'
import t from 'tap'
import type { Feed, OnnxPlan } from '../../../lib/models/onnx/plan.js'
import { onnxPredictor, type TensorConstructor } from '../../../lib/models/onnx/predictor.js'
import type { Input, ModelVersion, ValuePrediction } from '../../../lib/models/runtime.js'

/** What a Tensor was built with. */
type Built = { type: string; data: unknown; dims: readonly number[] }
class Recorded {
  readonly type: string
  readonly data: unknown
  readonly dims: readonly number[]
  constructor(type: string, data: unknown, dims: readonly number[]) {
    this.type = type
    this.data = data
    this.dims = dims
  }
}

/** A session whose `run` records its feeds and answers `answer` (or rejects with it). */
const session = (answer: ArrayLike<number> | Error, fetch = 'out') => {
  const feeds: Record<string, Built>[] = []
  const stub = {
    run: async (inputs: Record<string, Built>) => {
      feeds.push(inputs)
      if (answer instanceof Error) throw answer
      return { [fetch]: { data: answer } }
    },
    release: async () => {},
  }
  return { session: stub as unknown as InferenceSession, feeds }
}

const model = (inputs: readonly Input[], task: 'classification' | 'regression' = 'regression'): ModelVersion =>
  ({ name: 'm', version: '1', inputs, task, ...(task === 'classification' ? { classes: ['a', 'b'] } : {}) }) as unknown as ModelVersion

const feed = (name: string, kind: Feed['kind'], first: number, width = 1, levels?: readonly string[]): Feed => ({
  name,
  kind,
  first,
  width,
  rank: width === 1 ? 1 : 2,
  levels,
})

const Tensor = Recorded as unknown as TensorConstructor

t.test('each graph input is cut from the features as its type', async (t) => {
  const inputs: Input[] = [
    { name: 'f', type: 'numerical', datatype: 'FP32' },
    { name: 'd', type: 'numerical', datatype: 'FP64' },
    { name: 'i', type: 'numerical', datatype: 'INT32' },
    { name: 'l', type: 'numerical', datatype: 'INT64' },
    { name: 'b', type: 'numerical', datatype: 'BOOL' },
    { name: 's', type: 'categorical', levels: ['red', 'blue'] },
  ]
  const plan: OnnxPlan = {
    feeds: [
      feed('f', 'float32', 0),
      feed('d', 'float64', 1),
      feed('i', 'int32', 2),
      feed('l', 'int64', 3),
      feed('b', 'bool', 4),
      feed('s', 'string', 5, 1, ['red', 'blue']),
    ],
    fetch: 'out',
    width: 1,
  }
  const { session: s, feeds } = session([0.5, 1.5])
  const predictor = onnxPredictor(s, Tensor, model(inputs), plan)
  const features = Float64Array.from([0.25, 1.5, -3, 2 ** 40, 1, 1, 0.5, -2.5, 7, -(2 ** 40), 0, 0])
  const { values } = (await predictor.predict(features, 2)) as ValuePrediction
  t.same(Array.from(values), [0.5, 1.5])
  const fed = feeds[0] as Record<string, Built>
  t.same(fed['f'], new Recorded('float32', Float32Array.from([0.25, 0.5]), [2]))
  t.same(fed['d'], new Recorded('float64', Float64Array.from([1.5, -2.5]), [2]))
  t.same(fed['i'], new Recorded('int32', Int32Array.from([-3, 7]), [2]))
  t.same(fed['l'], new Recorded('int64', BigInt64Array.from([2n ** 40n, -(2n ** 40n)]), [2]))
  t.same(fed['b'], new Recorded('bool', Uint8Array.from([1, 0]), [2]))
  t.same(fed['s'], new Recorded('string', ['blue', 'red'], [2]))
})

t.test('a double [N, F] input of every column is the features themselves, or the rows asked for', async (t) => {
  const inputs: Input[] = [
    { name: 'a', type: 'numerical', datatype: 'FP64' },
    { name: 'b', type: 'numerical', datatype: 'FP64' },
  ]
  const plan: OnnxPlan = { feeds: [feed('X', 'float64', 0, 2)], fetch: 'out', width: 1 }
  const { session: s, feeds } = session([1])
  const predictor = onnxPredictor(s, Tensor, model(inputs), plan)
  const features = Float64Array.from([1, 2, 3, 4])
  await predictor.predict(features, 2).catch(() => undefined)
  t.equal((feeds[0] as Record<string, Built>)['X']?.data, features, 'no copy')
  t.same((feeds[0] as Record<string, Built>)['X']?.dims, [2, 2])
  await predictor.predict(features, 1)
  const first = (feeds[1] as Record<string, Built>)['X']?.data as Float64Array
  t.same(Array.from(first), [1, 2], 'the first row, as a view')
  t.equal(first.buffer, features.buffer)
})

t.test('what a session answers is refused when it is not finite or not the plan’s size, and a failed run names the model', async (t) => {
  const numerical: Input[] = [{ name: 'a', type: 'numerical' }]
  const plan = (width: number): OnnxPlan => ({ feeds: [feed('X', 'float64', 0)], fetch: 'out', width })
  const predict = (answer: ArrayLike<number> | Error, task: 'classification' | 'regression', width: number) =>
    onnxPredictor(session(answer).session, Tensor, model(numerical, task), plan(width)).predict(new Float64Array(1), 1)
  await t.rejects(predict([Number.NaN], 'regression', 1), { message: 'the graph answered a non-finite value in row 0' })
  await t.rejects(predict([Number.POSITIVE_INFINITY, 1], 'classification', 2), { message: 'the graph answered a non-finite score in row 0' })
  await t.rejects(predict([1, 2, 3], 'classification', 2), { message: /^model m version 1: output out has 3 values for 1 rows of 2/ })
  await t.rejects(predict(new Error('Unexpected input data type'), 'regression', 1), {
    message: 'model m version 1: onnxruntime failed: Unexpected input data type',
  })
})
