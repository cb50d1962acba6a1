import t from 'tap'
import { encodeInputs, encodeRows } from '../../../lib/models/inference/features.js'
import { readInferRequest, readPredictRequest } from '../../../lib/models/inference/request.js'
import { inferResponseJson, selectedResponseJson, selectOutputs, type InferResponse, type OutputTensor } from '../../../lib/models/inference/response.js'
import { RequestError } from '../../../lib/models/inference/request-error.js'
import type { ModelVersion, Prediction } from '../../../lib/models/runtime.js'
import { kernelVersion, type Loaded } from '../../fixtures/model-runtime.js'

const iris = kernelVersion('iris')
const cars = kernelVersion('cars')
/** The kernel's prediction: synchronous. */
const predict = ({ predictor }: Loaded, features: Float64Array, rows: number): Prediction => predictor.predict(features, rows) as Prediction
const OPTIONS = { maxBatch: 1000 }

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
  return JSON.parse(
    inferResponseJson(loaded.model, predict(loaded, encodeInputs(request, loaded.model), request.rows), request.rows, request.id ?? 'the-request-id'),
  )
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

t.test('a request without an id is answered with the id it is given (its X-Request-ID)', async (t) => {
  const body = { model: 'iris', inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 4], data: SETOSA }] }
  t.equal(answer(body).id, 'the-request-id')
  t.equal(answer({ ...body, id: 'mine' }).id, 'mine', "the request's own id wins")
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

/** The response as objects, serialised by JSON.stringify: what the text must equal, byte for byte. */
const reference = (model: ModelVersion, prediction: Prediction, rows: number, id: string): string => {
  const name = (i: number): string => (model.outputs[i] as { name: string }).name
  const outputs: OutputTensor[] =
    'values' in prediction
      ? [{ name: name(0), datatype: 'FP64', shape: [rows], data: Array.from(prediction.values) }]
      : [
          {
            name: name(0),
            datatype: 'BYTES',
            shape: [rows],
            data: Array.from(prediction.labels, (k) => (model.task === 'regression' ? '' : (model.classes[k] as string))),
          },
          { name: name(1), datatype: 'FP64', shape: [rows, prediction.probabilities.length / rows], data: Array.from(prediction.probabilities) },
        ]
  const response: InferResponse = { model_name: model.name, model_version: model.version, id, outputs }
  return JSON.stringify(response)
}

t.test('the response text is exactly what JSON.stringify writes for the same response', async (t) => {
  // Awkward text everywhere text goes, and numbers whose JSON form differs from a naive one.
  const awkward = {
    name: 'ir"is\\',
    version: '1\u2028',
    outputs: [
      { name: 'la\nbel', type: 'label' },
      { name: 'pr<ob>', type: 'probabilities' },
    ],
  }
  const classifier = { ...iris.model, ...awkward, classes: ['a"b', 'ü', '\u0000', 'x'] } as ModelVersion
  const regressor = { ...cars.model, name: 'c\ta"rs', outputs: [{ name: 'v"al', type: 'value' }] } as ModelVersion
  const awkwardNumbers = [0, -0, 1, 0.1, 1e-7, 1.2345678901234568e20, 1e21, -Number.MIN_VALUE, Number.MIN_VALUE, Number.MAX_VALUE, 1 / 3]
  let seed = 7
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  for (const rows of [1, 2, 5, 64]) {
    const labels = Uint32Array.from({ length: rows }, () => Math.floor(random() * 4))
    const probabilities = Float64Array.from({ length: rows * 4 }, (_, i) => (i < awkwardNumbers.length ? (awkwardNumbers[i] as number) : random()))
    const values = Float64Array.from({ length: rows }, (_, i) =>
      i < awkwardNumbers.length ? (awkwardNumbers[(i * 3) % awkwardNumbers.length] as number) : random() * 1e3 - 500,
    )
    for (const id of ['req-7', 'a"b\\c', '6a1f6c3e-2b7a-4c47-9d0e-5f1f2c7a9b10']) {
      t.equal(
        inferResponseJson(classifier, { labels, probabilities }, rows, id),
        reference(classifier, { labels, probabilities }, rows, id),
        `classifier, ${rows} rows`,
      )
      t.equal(inferResponseJson(regressor, { values }, rows, id), reference(regressor, { values }, rows, id), `regressor, ${rows} rows`)
    }
  }
  // The same version answers again from its prepared pieces, with the new request's values.
  const again = inferResponseJson(classifier, { labels: Uint32Array.of(3), probabilities: Float64Array.of(0, 0, 0, 1) }, 1, 'z')
  t.same(JSON.parse(again).outputs[0].data, ['x'])
})

t.test('outputs asked for are answered alone, in the order asked, each as the full response writes it', async (t) => {
  const instances = ROWS.map((row) => Object.fromEntries(IRIS_NAMES.map((name, j) => [name, row[j]])))
  const full = answer({ model: 'iris', id: 'a', instances })
  const [species, probabilities] = full.outputs
  const request = readPredictRequest({ model: 'iris', instances }, OPTIONS)
  const prediction = predict(iris, encodeInputs(request, iris.model), 3)
  const selected = (names: readonly string[]): InferResponse =>
    JSON.parse(selectedResponseJson(iris.model, prediction, 3, 'a', selectOutputs(names, iris.model)))
  t.same(selected(['probabilities']), { ...full, outputs: [probabilities] })
  t.same(selected(['species']), { ...full, outputs: [species] })
  t.same(selected(['probabilities', 'species']), { ...full, outputs: [probabilities, species] })
  t.equal(JSON.stringify(selected(['species', 'probabilities'])), JSON.stringify(full), 'both, in model order: the full response, bit for bit')

  const chevelle = { cylinders: 8, displacement: 307, horsepower: 130, weight_in_lbs: 3504, acceleration: 12, year: 1970, origin: 'USA' }
  const mpg = answer({ model: 'cars', id: 'c', instances: [chevelle] })
  const value = predict(cars, encodeRows(cars.model.inputs, [chevelle]), 1)
  t.same(JSON.parse(selectedResponseJson(cars.model, value, 1, 'c', selectOutputs(['miles_per_gallon'], cars.model))), mpg)
})

t.test('an output the model does not have is an INVALID_REQUEST naming it and the outputs there are', async (t) => {
  t.throws(() => selectOutputs(['species', 'colour'], iris.model), {
    constructor: RequestError,
    code: 'INVALID_REQUEST',
    message: 'output colour is not an output of model iris; its outputs are species, probabilities',
  })
  t.throws(() => selectOutputs(['species'], cars.model), {
    code: 'INVALID_REQUEST',
    message: /^output species is not an output of model cars; its outputs are miles_per_gallon$/,
  })
})
