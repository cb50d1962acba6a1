// Between features and a graph's tensors (lib/models/onnx/tensors.ts): a graph input's columns, and
// scores read as probabilities or values.
import t from 'tap'
import { classify, columnsOf, regress } from '../../../lib/models/onnx/tensors.js'
import type { ClassPrediction } from '../../../lib/models/runtime.js'

t.test('a graph input takes its columns of the features, in its own element type', async (t) => {
  const features = Float64Array.of(1, 2, 3, 4, 5, 6)
  const feed = { name: 'x', first: 1, width: 2, rank: 2, levels: undefined } as const
  t.same(columnsOf({ ...feed, kind: 'float32' }, features, 2, 3), Float32Array.of(2, 3, 5, 6))
  t.same(columnsOf({ ...feed, kind: 'int64' }, features, 2, 3), BigInt64Array.of(2n, 3n, 5n, 6n))
  t.equal(columnsOf({ ...feed, kind: 'float64', first: 0, width: 3 }, features, 2, 3), features, 'every column as double: the features, uncopied')
  t.same(columnsOf({ ...feed, kind: 'string', width: 1, levels: ['a', 'b', 'c'] }, Float64Array.of(0, 2, 0, 1), 2, 2), ['c', 'b'])
})

t.test('non-negative scores are shared out, a row with a negative one is softmaxed; a non-finite answer is refused', async (t) => {
  t.same(classify(Float32Array.of(1, 3), 1, 2), { labels: Uint32Array.of(1), probabilities: Float64Array.of(0.25, 0.75) })
  const [, second = 0] = (classify(Float32Array.of(-1, 1), 1, 2) as ClassPrediction).probabilities
  t.ok(Math.abs(second - 1 / (1 + Math.exp(-2))) < 1e-12)
  t.throws(() => classify(Float32Array.of(Number.POSITIVE_INFINITY, 1), 1, 2), { message: 'the graph answered a non-finite score in row 0' })
  t.same(regress(Float32Array.of(2.5), 1), { values: Float64Array.of(2.5) })
})
