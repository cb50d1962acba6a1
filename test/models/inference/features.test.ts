import t from 'tap'
import { encodeInputs, encodeRows } from '../../../lib/models/inference/features.js'
import { readInferRequest, readPredictRequest, shapeText, type InferRequest } from '../../../lib/models/inference/request.js'
import { InputError, MAX_PROBLEMS } from '../../../lib/models/inference/input-error.js'
import type { GraphValue } from '../../../lib/models/onnx/graph.js'
import { NO_METADATA, type OnnxMetadata } from '../../../lib/models/onnx/metadata.js'
import { planOnnx } from '../../../lib/models/onnx/plan.js'
import type { ModelVersion } from '../../../lib/models/runtime.js'
import { kernelVersion } from '../../fixtures/model-runtime.js'
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
} from '../../fixtures/model-requests.js'

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
    detail: /^input sepal_length takes FP64, FP32, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BYTES$/,
    input: 'sepal_length',
  },
  {
    name: 'a number for a categorical input',
    model: cars,
    body: { inputs: carTensors({ origin: { datatype: 'INT32', data: [0, 2] } }) },
    code: 'INVALID_INPUT',
    detail: /^input origin takes BYTES, one of USA, Europe, Japan; got INT32$/,
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
    detail: /^input input-0 takes FP64, FP32, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BYTES$/,
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

// ---- a model whose format declares its tensors (an ONNX graph's inputs): those tensors, by name, shape and datatype

/** TensorProto.DataType, as onnx.proto numbers them, and onnxruntime's names for them. */
const ELEM_NAMES: Readonly<Record<number, string>> = { 1: 'float', 6: 'int32', 7: 'int64', 8: 'string', 9: 'bool', 11: 'double' }
/** A graph input as inspectGraph reports it. */
const graphInput = (name: string, elemType: number, shape: readonly (number | string | null)[]): GraphValue => ({
  name,
  type: `tensor(${ELEM_NAMES[elemType]})`,
  elemType,
  shape,
})
const VALUE_OUTPUT = graphInput('variable', 1, ['N', 1])
/** The description planOnnx makes of a regressor over these inputs. */
const onnxModel = (name: string, inputs: readonly GraphValue[], metadata: Partial<OnnxMetadata> = {}): ModelVersion => {
  const graph = { inputs, outputs: [VALUE_OUTPUT], zipMaps: [], classLabels: undefined }
  const files = { model: Buffer.from(name), metadata: undefined, profile: undefined }
  return planOnnx(graph, graph, { ...NO_METADATA, ...metadata }, files, { name, version: '1' }).model
}

/** One [N, 4] float input, its columns named by metadata.json. */
const matrix = onnxModel('wine', [graphInput('X', 1, ['N', 4])], { features: IRIS_NAMES })
/** The same with F left free: four features because metadata.json names four. */
const freeMatrix = onnxModel('free', [graphInput('X', 1, ['N', null])], { features: IRIS_NAMES })
/** One [N, 1] input whose one column metadata.json names. */
const oneColumn = onnxModel('one', [graphInput('X', 11, ['N', 1])], { features: ['sepal_length'] })
/** One input per feature, of every type a graph input may have. */
const columns = onnxModel(
  'typed',
  [
    graphInput('ratio', 1, ['N', 1]),
    graphInput('count', 7, ['N']),
    graphInput('small', 6, ['N', 1]),
    graphInput('flag', 9, ['N', 1]),
    graphInput('exact', 11, ['N']),
    graphInput('colour', 8, ['N', 1]),
  ],
  { levels: { colour: ['red', 'green', 'blue'] } },
)
const TYPED_ROWS = [
  { ratio: 0.5, count: 3, small: -7, flag: true, exact: 0.1, colour: 'blue' },
  { ratio: -1.25, count: -2, small: 8, flag: false, exact: 1e300, colour: 'red' },
]
const typedTensors = (change: Readonly<Record<string, object>> = {}) =>
  [
    { name: 'ratio', datatype: 'FP32', shape: [2, 1], data: [0.5, -1.25] },
    { name: 'count', datatype: 'INT64', shape: [2], data: [3, -2] },
    { name: 'small', datatype: 'INT8', shape: [2, 1], data: [[-7], [8]] },
    { name: 'flag', datatype: 'BOOL', shape: [2], data: [true, false] },
    { name: 'exact', datatype: 'FP64', shape: [2, 1], data: [0.1, 1e300] },
    { name: 'colour', datatype: 'BYTES', shape: [2], data: ['blue', 'red'] },
  ].map((tensor) => ({ ...tensor, ...change[tensor.name] }))

t.test('a graph’s own tensors give the features its named rows do, whatever datatype or shape of those it takes', async (t) => {
  const expected = Float64Array.from(IRIS_ROWS.flat())
  for (const [what, model] of [
    ['a fixed F', matrix],
    ['a free F', freeMatrix],
  ] as const) {
    t.strictSame(
      model.signature?.map((s) => s.name),
      ['X'],
      `${what}: the graph's input`,
    )
    const bodies = {
      flat: [{ name: 'X', datatype: 'FP32', shape: [3, 4], data: IRIS_ROWS.flat() }],
      nested: [{ name: 'X', datatype: 'FP64', shape: [3, 4], data: IRIS_ROWS }],
      integers: [{ name: 'X', datatype: 'INT32', shape: [1, 4], data: [5, 3, 1, 0] }],
    }
    for (const [form, inputs] of Object.entries(bodies)) {
      const request = readInferRequest({ inputs }, OPTIONS)
      const rows = form === 'integers' ? Float64Array.from([5, 3, 1, 0]) : expected
      t.ok(same(encodeInputs(request, model), rows), `${what}, ${form}: the tensor is the features`)
    }
    t.ok(same(encodeInputs(readPredictRequest({ model: model.name, instances: named(IRIS_ROWS) }, OPTIONS), model), expected), `${what}: named rows`)
  }
  const request = readInferRequest({ inputs: typedTensors() }, OPTIONS)
  const byRows = encodeInputs(readPredictRequest({ model: 'typed', instances: TYPED_ROWS }, OPTIONS), columns)
  t.same([...byRows], [0.5, 3, -7, 1, 0.1, 2, -1.25, -2, 8, 0, 1e300, 0])
  t.ok(same(encodeInputs(request, columns), byRows), 'one tensor per input, [N] or [N, 1] each, in any order')
  t.ok(same(encodeInputs(readInferRequest({ inputs: typedTensors().reverse() }, OPTIONS), columns), byRows), 'reordered')
  for (const shape of [[2], [2, 1]]) {
    const tensor = { name: 'X', datatype: 'FP64', shape, data: [5.1, 6.7] }
    t.same([...encodeInputs(readInferRequest({ inputs: [tensor] }, OPTIONS), oneColumn)], [5.1, 6.7], `one column as ${shapeText(shape)}`)
  }
})

const ALL_NUMBERS = 'FP32, FP64, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8'
const GRAPH_ERRORS: readonly (Expected & { name: string; inputs: unknown; model: ModelVersion })[] = [
  {
    name: 'its input at a shape it does not take',
    model: matrix,
    inputs: [{ name: 'X', datatype: 'FP32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }],
    code: 'INVALID_INPUT',
    detail: /^input X takes shape \[-1, 4\]; got \[2, 3\]$/,
    input: 'X',
  },
  {
    name: 'its input of a free F at a shape it does not take',
    model: freeMatrix,
    inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 5], data: [1, 2, 3, 4, 5] }],
    code: 'INVALID_INPUT',
    detail: /^input X takes shape \[-1, 4\]; got \[1, 5\]$/,
    input: 'X',
  },
  {
    name: 'its input of four columns as [N]',
    model: matrix,
    inputs: [{ name: 'X', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }],
    code: 'INVALID_INPUT',
    detail: /^input X takes shape \[-1, 4\]; got \[4\]$/,
    input: 'X',
  },
  {
    name: 'a name the graph does not have, at the right shape',
    model: matrix,
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
    code: 'INVALID_INPUT',
    detail: /^input input is not an input of model wine; its inputs are X \(FP32, shape \[-1, 4\]\)$/,
    input: 'input',
  },
  {
    name: 'a feature’s name where the graph takes one tensor',
    model: freeMatrix,
    inputs: perFeature(IRIS_ROWS),
    code: 'INVALID_INPUT',
    detail: /^input sepal_length is not an input of model free; its inputs are X \(FP32, shape \[-1, 4\]\)$/,
    input: 'sepal_length',
  },
  {
    name: 'BOOL for an FP32 input',
    model: matrix,
    inputs: [{ name: 'X', datatype: 'BOOL', shape: [1, 4], data: [true, false, true, true] }],
    code: 'INVALID_INPUT',
    detail: new RegExp(`^input X takes ${ALL_NUMBERS}; got BOOL$`),
    input: 'X',
  },
  {
    name: 'BYTES for an FP32 input',
    model: matrix,
    inputs: [{ name: 'X', datatype: 'BYTES', shape: [1, 4], data: ['1', '2', '3', '4'] }],
    code: 'INVALID_INPUT',
    detail: new RegExp(`^input X takes ${ALL_NUMBERS}; got BYTES$`),
    input: 'X',
  },
  {
    name: 'a value past FP32',
    model: matrix,
    inputs: [{ name: 'X', datatype: 'FP64', shape: [1, 4], data: [1, 2, 3, 1e39] }],
    code: 'INVALID_INPUT',
    detail: /^input X: data\[3\] is 1e\+39; the model takes a number below 2\^128 in magnitude \(FP32\)$/,
    input: 'X',
  },
  {
    name: 'an input the graph does not have beside its own',
    model: columns,
    inputs: [...typedTensors(), { name: 'size', datatype: 'FP32', shape: [2], data: [1, 2] }],
    code: 'INVALID_INPUT',
    detail:
      /^input size is not an input of model typed; its inputs are ratio \(FP32, shape \[-1, 1\]\), count \(INT64, shape \[-1\]\), small \(INT32, shape \[-1, 1\]\), flag \(BOOL, shape \[-1, 1\]\), exact \(FP64, shape \[-1\]\), colour \(BYTES, shape \[-1, 1\]\)$/,
    input: 'size',
  },
  {
    name: 'two columns for a [N, 1] input',
    model: columns,
    inputs: typedTensors({ ratio: { shape: [2, 2], data: [1, 2, 3, 4] } }),
    code: 'INVALID_INPUT',
    detail: /^input ratio takes shape \[-1, 1\] or \[-1\]; got \[2, 2\]$/,
    input: 'ratio',
  },
  {
    name: 'two columns for a [N] input',
    model: columns,
    inputs: typedTensors({ count: { shape: [2, 2], data: [1, 2, 3, 4] } }),
    code: 'INVALID_INPUT',
    detail: /^input count takes shape \[-1\] or \[-1, 1\]; got \[2, 2\]$/,
    input: 'count',
  },
  {
    name: 'FP32 for an INT64 input',
    model: columns,
    inputs: typedTensors({ count: { datatype: 'FP32' } }),
    code: 'INVALID_INPUT',
    detail: /^input count takes INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got FP32$/,
    input: 'count',
  },
  {
    name: 'BOOL for an INT32 input',
    model: columns,
    inputs: typedTensors({ small: { datatype: 'BOOL', data: [true, false] } }),
    code: 'INVALID_INPUT',
    detail: /^input small takes INT32, INT64, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BOOL$/,
    input: 'small',
  },
  {
    name: 'a whole number past INT32',
    model: columns,
    inputs: typedTensors({ small: { datatype: 'INT64', data: [1, 2 ** 31] } }),
    code: 'INVALID_INPUT',
    detail: /^input small: data\[1\] is 2147483648; the model takes a whole number from -2\^31 to 2\^31 - 1 \(INT32\)$/,
    input: 'small',
  },
  {
    name: 'UINT8 for a BOOL input',
    model: columns,
    inputs: typedTensors({ flag: { datatype: 'UINT8', data: [1, 0] } }),
    code: 'INVALID_INPUT',
    detail: /^input flag takes BOOL; got UINT8$/,
    input: 'flag',
  },
  {
    name: 'BOOL for an FP64 input',
    model: columns,
    inputs: typedTensors({ exact: { datatype: 'BOOL', data: [true, false] } }),
    code: 'INVALID_INPUT',
    detail: /^input exact takes FP64, FP32, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BOOL$/,
    input: 'exact',
  },
  {
    name: 'a number for a string input',
    model: columns,
    inputs: typedTensors({ colour: { datatype: 'FP32', data: [0, 1] } }),
    code: 'INVALID_INPUT',
    detail: /^input colour takes BYTES, one of red, green, blue; got FP32$/,
    input: 'colour',
  },
  {
    name: 'a string that is not a level',
    model: columns,
    inputs: typedTensors({ colour: { data: ['blue', 'mauve'] } }),
    code: 'INVALID_INPUT',
    detail: /^input colour: data\[1\] is "mauve", not one of red, green, blue$/,
    input: 'colour',
  },
  {
    name: 'one of its inputs missing',
    model: columns,
    inputs: typedTensors().filter((tensor) => tensor.name !== 'flag'),
    code: 'INVALID_INPUT',
    detail: /^input flag is missing; model typed takes ratio, count, small, flag, exact, colour$/,
    input: 'flag',
  },
]

for (const { name, inputs, model, ...expected } of GRAPH_ERRORS) {
  t.test(`a graph’s model refuses ${name}, saying what it takes`, async (t) => {
    const request = readInferRequest({ inputs }, OPTIONS)
    checkError(
      t,
      caught(() => encodeInputs(request, model)),
      expected,
    )
  })
}
