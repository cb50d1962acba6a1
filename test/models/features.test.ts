import t from 'tap'
import { encodeInputs, encodeRows } from '../../lib/models/features.js'
import { readInferRequest, readPredictRequest, type InferRequest } from '../../lib/models/inference-request.js'
import { InputError, MAX_PROBLEMS } from '../../lib/models/input-error.js'
import type { ModelVersion } from '../../lib/models/runtime.js'
import { kernelVersion } from '../fixtures/model-runtime.js'
import {
  carTensors,
  caught,
  CHEVELLE,
  checkError,
  COROLLA,
  IRIS_NAMES,
  IRIS_ROWS,
  named,
  OPTIONS,
  perFeature,
  same,
  type Expected,
} from '../fixtures/model-requests.js'

const iris = kernelVersion('iris').model
const cars = kernelVersion('cars').model

t.test('per-feature inputs, nested [N, 1] inputs, a 2-D tensor, nested rows and instances give the same features', async (t) => {
  const expected = Float64Array.from(IRIS_ROWS.flat())
  const bodies = {
    perFeature: { model: 'iris', inputs: perFeature(IRIS_ROWS) },
    reordered: { model: 'iris', inputs: perFeature(IRIS_ROWS).reverse() },
    columns: { model: 'iris', inputs: IRIS_NAMES.map((name, j) => ({ name, datatype: 'FP64', shape: [3, 1], data: IRIS_ROWS.map((row) => [row[j]]) })) },
    tensor: { model: 'iris', inputs: [{ name: 'input-0', datatype: 'FP64', shape: [3, 4], data: IRIS_ROWS.flat() }] },
    nestedTensor: { model: 'iris', inputs: [{ name: 'input-0', datatype: 'FP32', shape: [3, 4], data: IRIS_ROWS }] },
    instances: { model: 'iris', instances: named(IRIS_ROWS) },
  }
  for (const [form, body] of Object.entries(bodies)) {
    const request = readPredictRequest(body, OPTIONS)
    t.equal(request.rows, 3, form)
    t.ok(same(encodeInputs(request, iris), expected), `${form}: identical features, bit for bit`)
  }
})

t.test('cars takes integer datatypes for numerical inputs and BYTES levels for its categorical one', async (t) => {
  const request = readInferRequest({ inputs: carTensors() }, OPTIONS)
  t.ok(same(encodeInputs(request, cars), encodeInputs(readPredictRequest({ model: 'cars', instances: [CHEVELLE, COROLLA] }, OPTIONS), cars)))
  t.equal(encodeInputs(request, cars)[13], 2, 'Japan is level 2')
})

const irisTensors = (change: (inputs: ReturnType<typeof perFeature>) => unknown[]) => ({ inputs: change(perFeature(IRIS_ROWS)) })

const ENCODE_ERRORS: readonly (Expected & { name: string; body: unknown; model: ModelVersion })[] = [
  {
    name: 'an unknown input',
    model: iris,
    body: irisTensors((inputs) => [...inputs, { name: 'petal_colour', datatype: 'FP64', shape: [3], data: [1, 2, 3] }]),
    code: 'INVALID_INPUT',
    detail: /^input petal_colour is not an input of model iris; its inputs are sepal_length, sepal_width, petal_length, petal_width$/,
    input: 'petal_colour',
  },
  {
    name: 'a missing input',
    model: iris,
    body: irisTensors((inputs) => inputs.filter((input) => input.name !== 'petal_length')),
    code: 'INVALID_INPUT',
    detail: /^input petal_length is missing; model iris takes sepal_length, sepal_width, petal_length, petal_width$/,
    input: 'petal_length',
  },
  {
    name: 'a named input of two columns',
    model: iris,
    body: irisTensors((inputs) => inputs.map((input) => ({ ...input, shape: [3, 2], data: [...input.data, ...input.data] }))),
    code: 'INVALID_INPUT',
    detail: /^input sepal_length: shape \[3, 2\] must be \[N\] or \[N, 1\], one value per row$/,
    input: 'sepal_length',
  },
  {
    name: 'BYTES for a numerical input',
    model: iris,
    body: irisTensors((inputs) => inputs.map((input) => ({ ...input, datatype: 'BYTES', data: input.data.map(String) }))),
    code: 'INVALID_INPUT',
    detail: /^input sepal_length: datatype BYTES does not fit a numerical input; use FP64/,
    input: 'sepal_length',
  },
  {
    name: 'a number for a categorical input',
    model: cars,
    body: { inputs: carTensors({ origin: { datatype: 'INT32', data: [0, 2] } }) },
    code: 'INVALID_INPUT',
    detail: /^input origin: datatype INT32 does not fit a categorical input; use BYTES with one of USA, Europe, Japan$/,
    input: 'origin',
  },
  {
    name: 'an unknown category',
    model: cars,
    body: { inputs: carTensors({ origin: { data: ['USA', 'Mars'] } }) },
    code: 'INVALID_INPUT',
    detail: /^input origin: data\[1\] is "Mars", not one of USA, Europe, Japan$/,
    input: 'origin',
  },
  {
    name: 'a 2-D tensor for a model with a categorical input',
    model: cars,
    body: { inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 7], data: [8, 307, 130, 3504, 12, 1970, 0] }] },
    code: 'INVALID_INPUT',
    detail: /^input input-0: model cars has categorical inputs, so it takes one input per feature \(cylinders, .*, origin\), not one \[N, F\] tensor$/,
    input: 'input-0',
  },
  {
    name: 'a 2-D tensor of the wrong width',
    model: iris,
    body: { inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 3], data: [1, 2, 3] }] },
    code: 'INVALID_INPUT',
    detail:
      /^input input-0 is not an input of model iris; as one tensor its shape \[1, 3\] must be \[N, 4\], columns sepal_length, sepal_width, petal_length, petal_width$/,
    input: 'input-0',
  },
  {
    name: 'a 2-D BYTES tensor',
    model: iris,
    body: { inputs: [{ name: 'input-0', datatype: 'BYTES', shape: [1, 4], data: ['1', '2', '3', '4'] }] },
    code: 'INVALID_INPUT',
    detail: /^input input-0: datatype BYTES does not fit numerical inputs/,
    input: 'input-0',
  },
  {
    name: 'a 1-D tensor of unknown name',
    model: iris,
    body: { inputs: [{ name: 'input-0', datatype: 'FP64', shape: [4], data: [1, 2, 3, 4] }] },
    code: 'INVALID_INPUT',
    detail: /^input input-0 is not an input of model iris/,
    input: 'input-0',
  },
  {
    name: 'an instance missing a feature',
    model: iris,
    body: { instances: [named(IRIS_ROWS)[0], { sepal_length: 1, sepal_width: 2, petal_length: 3 }] },
    code: 'INVALID_INPUT',
    detail: /^instances: row 1: petal_width is missing$/,
    input: 'petal_width',
  },
  {
    name: 'an instance that is not an object',
    model: iris,
    body: { instances: [[5.1, 3.5, 1.4, 0.2]] },
    code: 'INVALID_INPUT',
    detail: /^instances: row 0 must be an object of named features$/,
  },
  {
    name: 'an instance with an unknown category',
    model: cars,
    body: { instances: [{ ...CHEVELLE, origin: 'Mars' }] },
    code: 'INVALID_INPUT',
    detail: /^instances: row 0: origin must be one of USA, Europe, Japan$/,
    input: 'origin',
  },
  {
    name: 'an instance with a non-finite number',
    model: iris,
    body: { instances: [{ ...named(IRIS_ROWS)[0], sepal_width: Infinity }] },
    code: 'INVALID_INPUT',
    detail: /^instances: row 0: sepal_width must be a finite number$/,
    input: 'sepal_width',
  },
  {
    name: 'an instance with an extra feature',
    model: iris,
    body: { instances: [{ ...named(IRIS_ROWS)[0], colour: 'blue' }] },
    code: 'INVALID_INPUT',
    detail: /^instances: row 0: colour is not an input of this model$/,
    input: 'colour',
  },
]

for (const { name, body, model, ...expected } of ENCODE_ERRORS) {
  t.test(`a request with ${name} is refused once the model is known`, async (t) => {
    const request = readPredictRequest({ model: model.name, ...(body as object) }, OPTIONS)
    checkError(
      t,
      caught(() => encodeInputs(request, model)),
      expected,
    )
  })
}

t.test('an instance error lists every problem, naming the first one as the input', async (t) => {
  const request = readPredictRequest({ model: 'iris', instances: [{}, {}] }, OPTIONS)
  const error = caught(() => encodeInputs(request, iris))
  t.equal(error.message.split('; ').length, 8)
  t.equal(error.extra?.['input'], 'sepal_length')
})

t.test('a failure while encoding other than InputError propagates unchanged', async (t) => {
  const failure = new TypeError('broken')
  const row = Object.defineProperty({}, 'sepal_length', {
    enumerable: true,
    get: () => {
      throw failure
    },
  })
  const request: InferRequest = { kind: 'instances', id: undefined, rows: 1, instances: [row] }
  t.throws(() => encodeInputs(request, iris), failure)
  t.notOk(failure instanceof InputError)
})

t.test('encodeRows lays named rows out in input order, a level as its index', async (t) => {
  t.same([...encodeRows(cars.inputs, [CHEVELLE, { ...CHEVELLE, origin: 'Japan' }])], [8, 307, 130, 3504, 12, 1970, 0, 8, 307, 130, 3504, 12, 1970, 2])
  t.same([...encodeRows(iris.inputs, [{ petal_width: 0.2, petal_length: 1.4, sepal_width: 3.5, sepal_length: 5.1 }])], [5.1, 3.5, 1.4, 0.2])
  t.equal(encodeRows(iris.inputs, []).length, 0)
})

t.test('encodeRows reports every bad value by row and feature name', async (t) => {
  const error = t.throws(() =>
    encodeRows(cars.inputs, [
      CHEVELLE,
      null,
      [1, 2],
      { ...CHEVELLE, cylinders: '8', horsepower: null, year: Infinity, colour: 'red' },
      { ...CHEVELLE, displacement: undefined, origin: 'Korea' },
      { ...CHEVELLE, origin: 1 },
    ]),
  ) as InputError
  t.ok(error instanceof InputError)
  t.equal(error.name, 'InputError')
  t.same(
    error.problems.map(({ row, feature, code }) => [row, feature, code]),
    [
      [1, '', 'NOT_AN_OBJECT'],
      [2, '', 'NOT_AN_OBJECT'],
      [3, 'cylinders', 'WRONG_TYPE'],
      [3, 'horsepower', 'MISSING_FEATURE'],
      [3, 'year', 'NON_FINITE_VALUE'],
      [3, 'colour', 'UNKNOWN_FEATURE'],
      [4, 'displacement', 'MISSING_FEATURE'],
      [4, 'origin', 'UNKNOWN_LEVEL'],
      [5, 'origin', 'WRONG_TYPE'],
    ],
  )
  t.match(
    error.message,
    /^row 1 must be an object of named features; row 2 .*; row 3: cylinders must be a number; .*row 4: origin must be one of USA, Europe, Japan; row 5: origin must be a string$/,
  )
})

t.test('encodeRows stops at MAX_PROBLEMS problems', async (t) => {
  const rows = Array.from({ length: 1000 }, () => ({ sepal_length: 'x' }))
  const error = t.throws(() => encodeRows(iris.inputs, rows)) as InputError
  t.equal(error.problems.length, MAX_PROBLEMS)
  t.same(error.problems.at(-1), { row: 2, feature: 'sepal_width', code: 'MISSING_FEATURE', message: 'row 2: sepal_width is missing' })
  const inherited = Object.create({ sepal_length: 5 }) as object
  t.throws(() => encodeRows(iris.inputs, [inherited]), { name: 'InputError', problems: [{ feature: 'sepal_length', code: 'MISSING_FEATURE' }] })
})
