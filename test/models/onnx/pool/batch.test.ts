// A batch's arithmetic on the JavaScript thread (lib/models/onnx/pool/batch.ts): requests' features
// joined in order, the graph's tensors cut from them, and the output split back per request.
import t from 'tap'
import { feedsOf, joinFeatures, splitAnswer } from '../../../../lib/models/onnx/pool/batch.js'
import type { OnnxPlan } from '../../../../lib/models/onnx/plan.js'
import type { ModelVersion } from '../../../../lib/models/runtime.js'

const plan = (width: number): OnnxPlan => ({
  feeds: [{ name: 'X', kind: 'float32', first: 0, width: 2, rank: 2, levels: undefined }],
  fetch: 'y',
  width,
})
const classifier = { task: 'classification', classes: ['a', 'b'] } as unknown as ModelVersion
const regressor = { task: 'regression' } as unknown as ModelVersion

t.test('features join in request order; a lone request is its own table, uncopied', async (t) => {
  const one = Float64Array.of(1, 2)
  const two = Float64Array.of(3, 4, 5, 6)
  t.same(
    [
      ...joinFeatures(
        [
          { features: one, rows: 1 },
          { features: two, rows: 2 },
        ],
        3,
        2,
      ),
    ],
    [1, 2, 3, 4, 5, 6],
  )
  t.equal(joinFeatures([{ features: two, rows: 2 }], 2, 2), two)
  const longer = Float64Array.of(7, 8, 0, 0)
  t.same([...joinFeatures([{ features: longer, rows: 1 }], 1, 2)], [7, 8], 'only the rows a request holds')
})

t.test('the tensors are built to cross to a worker: element type, values, dimensions', async (t) => {
  t.same(feedsOf(plan(2), Float64Array.of(1.5, 2.5, 3.5, 4.5), 2, 2), [{ name: 'X', type: 'float32', data: Float32Array.of(1.5, 2.5, 3.5, 4.5), dims: [2, 2] }])
})

t.test("each request's rows of the output are its answer, as alone; a bad row fails its own request, named", async (t) => {
  const data = Float32Array.of(1, 3, 2, 2, 0.5, 0.5)
  t.match(splitAnswer(classifier, plan(2), data, 1, 2, 'model m'), { labels: Uint32Array.of(0, 0), probabilities: Float64Array.of(0.5, 0.5, 0.5, 0.5) })
  t.same([...(splitAnswer(regressor, plan(1), Float64Array.of(4, 5, 6), 2, 1, 'model m') as { values: Float64Array }).values], [6])
  t.throws(() => splitAnswer(regressor, plan(1), Float64Array.of(4, Number.NaN), 1, 1, 'model m'), {
    message: 'model m: the graph answered a non-finite value in row 0',
  })
})
