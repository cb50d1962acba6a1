import t from 'tap'
import { encodeInputs, encodeRows } from '../../lib/models/features.js'
import { readInferRequest, readPredictRequest } from '../../lib/models/inference-request.js'
import { buildInferResponse, type InferResponse } from '../../lib/models/inference-response.js'
import type { Prediction } from '../../lib/models/runtime.js'
import { kernelVersion, type Loaded } from '../fixtures/model-runtime.js'

const iris = kernelVersion('iris')
const cars = kernelVersion('cars')
/** The kernel's prediction: synchronous. */
const predict = ({ predictor }: Loaded, features: Float64Array, rows: number): Prediction => predictor.predict(features, rows) as Prediction
const OPTIONS = { maxBatch: 1000 }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const IRIS_NAMES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']
const SETOSA = [5.1, 3.5, 1.4, 0.2]
const VERSICOLOR = [7.0, 3.2, 4.7, 1.4]
const VIRGINICA = [6.3, 3.3, 6.0, 2.5]
const ROWS = [SETOSA, VERSICOLOR, VIRGINICA]

/** The whole path an endpoint takes, through JSON both ways, as a client would see it. */
const answer = (body: unknown, form: 'v1' | 'v2' = 'v1'): InferResponse => {
  const wire = JSON.parse(JSON.stringify(body))
  const request = form === 'v1' ? readPredictRequest(wire, OPTIONS) : readInferRequest(wire, OPTIONS)
  const isCars = 'model' in request && request.model === 'cars'
  const loaded = isCars ? cars : iris
  const response = buildInferResponse(loaded.model, predict(loaded, encodeInputs(request, loaded.model), request.rows), request.rows, request.id)
  return JSON.parse(JSON.stringify(response))
}

t.test('known iris rows get their species and probabilities summing to 1', async (t) => {
  const response = answer({ model: 'iris', id: 'req-1', instances: ROWS.map((row) => Object.fromEntries(IRIS_NAMES.map((name, j) => [name, row[j]]))) })
  t.match(response, {
    model_name: 'iris',
    model_version: '1',
    id: 'req-1',
    outputs: [
      { name: 'species', datatype: 'BYTES', shape: [3], data: ['setosa', 'versicolor', 'virginica'] },
      { name: 'probabilities', datatype: 'FP64', shape: [3, 3] },
    ],
  })
  t.same(Object.keys(response), ['model_name', 'model_version', 'id', 'outputs'])
  const probabilities = response.outputs[1]?.data as number[]
  t.equal(probabilities.length, 9)
  for (let r = 0; r < 3; r++) {
    const row = probabilities.slice(r * 3, r * 3 + 3)
    t.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12, `row ${r} sums to 1`)
    t.equal(row.indexOf(Math.max(...row)), r, `row ${r} is most probably its own species`)
  }
})

t.test('the three request forms on both routes give the same response, bit for bit', async (t) => {
  const perFeature = IRIS_NAMES.map((name, j) => ({ name, datatype: 'FP64', shape: [3], data: ROWS.map((row) => row[j]) }))
  const tensor = [{ name: 'input-0', datatype: 'FP64', shape: [3, 4], data: ROWS.flat() }]
  const instances = ROWS.map((row) => Object.fromEntries(IRIS_NAMES.map((name, j) => [name, row[j]])))
  const responses = [
    answer({ model: 'iris', id: 'a', inputs: perFeature }),
    answer({ model: 'iris', id: 'a', inputs: tensor }),
    answer({ model: 'iris', id: 'a', instances }),
    answer({ id: 'a', inputs: perFeature }, 'v2'),
    answer({ id: 'a', inputs: [{ ...tensor[0], data: ROWS }] }, 'v2'),
  ]
  // JSON.stringify writes the shortest text that reads back as the same double, so equal text is equal bits.
  for (const response of responses.slice(1)) t.equal(JSON.stringify(response), JSON.stringify(responses[0]))
})

t.test('a regression answers with one FP64 output named as in the artifact', async (t) => {
  const chevelle = { cylinders: 8, displacement: 307, horsepower: 130, weight_in_lbs: 3504, acceleration: 12, year: 1970, origin: 'USA' }
  const response = answer({ model: 'cars', id: 'c', instances: [chevelle, { ...chevelle, origin: 'Japan' }] })
  const prediction = predict(cars, encodeRows(cars.model.inputs, [chevelle, { ...chevelle, origin: 'Japan' }]), 2)
  const values = 'values' in prediction ? prediction.values : []
  t.same(response, {
    model_name: 'cars',
    model_version: '1',
    id: 'c',
    outputs: [{ name: 'miles_per_gallon', datatype: 'FP64', shape: [2], data: [...values] }],
  })
})

t.test('a request without an id gets a fresh UUID', async (t) => {
  const body = { model: 'iris', inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 4], data: SETOSA }] }
  const first = answer(body)
  const second = answer(body)
  t.match(first.id, UUID)
  t.match(second.id, UUID)
  t.not(first.id, second.id)
})

t.test('each prediction has arrays of its own, sized to the batch', async (t) => {
  const features = Float64Array.from([...SETOSA, ...VIRGINICA])
  const a = predict(iris, features, 2)
  const b = predict(iris, features, 1)
  t.ok('labels' in a && 'labels' in b)
  if ('labels' in a && 'labels' in b) {
    t.equal(a.probabilities.length, 6)
    t.equal(b.probabilities.length, 3)
    t.not(a.labels, b.labels)
    t.same([...a.labels], [0, 2])
  }
  const c = predict(cars, new Float64Array(7), 1)
  t.ok('values' in c && c.values.length === 1 && Number.isFinite(c.values[0]))
})
