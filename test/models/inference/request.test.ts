import t from 'tap'
import { MAX_ID_LENGTH, readInferRequest, readPredictRequest } from '../../../lib/models/inference/request.js'
import { caught, checkError, IRIS_ROWS, named, OPTIONS, perFeature, type Expected } from '../../fixtures/model-requests.js'

t.test('readPredictRequest returns the model, version and id; readInferRequest takes no model', async (t) => {
  const id = 'x'.repeat(MAX_ID_LENGTH)
  const request = readPredictRequest(
    { model: 'iris', version: '1', id, parameters: {}, outputs: [{ name: 'species' }], inputs: perFeature(IRIS_ROWS) },
    OPTIONS,
  )
  t.match(request, { model: 'iris', version: '1', id, kind: 'tensors', rows: 3 })
  t.match(readPredictRequest({ model: 'iris', instances: named(IRIS_ROWS) }, OPTIONS), { model: 'iris', version: undefined, id: undefined, kind: 'instances' })
  const infer = readInferRequest(
    { id: 'a', inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 4], data: [1, 2, 3, 4], parameters: { binary_data: false } }] },
    OPTIONS,
  )
  t.match(infer, { id: 'a', rows: 1, kind: 'tensors' })
  t.notOk('model' in infer)
})

t.test('outputs: the names asked for, in their order; none named (absent or empty) is every output', async (t) => {
  const tensors = perFeature(IRIS_ROWS)
  const outputs = [{ name: 'probabilities', parameters: { binary_data: false } }, { name: 'species' }]
  t.same(readInferRequest({ outputs, inputs: tensors }, OPTIONS).outputs, ['probabilities', 'species'])
  t.same(readPredictRequest({ model: 'iris', outputs, inputs: tensors }, OPTIONS).outputs, ['probabilities', 'species'])
  t.same(readPredictRequest({ model: 'iris', outputs: [{ name: 'species' }], instances: named(IRIS_ROWS) }, OPTIONS).outputs, ['species'])
  t.equal(readInferRequest({ inputs: tensors }, OPTIONS).outputs, undefined)
  t.equal(readInferRequest({ outputs: [], inputs: tensors }, OPTIONS).outputs, undefined)
  t.equal(readPredictRequest({ model: 'iris', outputs: [], instances: named(IRIS_ROWS) }, OPTIONS).outputs, undefined)
})

t.test('a batch of exactly maxBatch rows is accepted', async (t) => {
  const rows = Array.from({ length: 3 }, () => [5.1, 3.5, 1.4, 0.2])
  t.equal(readInferRequest({ inputs: perFeature(rows) }, { maxBatch: 3 }).rows, 3)
  t.equal(readPredictRequest({ model: 'iris', instances: named(rows) }, { maxBatch: 3 }).rows, 3)
})

t.test('integer datatypes take integers within their range', async (t) => {
  const accepts = (datatype: string, x: number) => readInferRequest({ inputs: [{ name: 'a', datatype, shape: [1], data: [x] }] }, OPTIONS).rows === 1
  t.ok(accepts('INT8', -128) && accepts('INT8', 127) && accepts('UINT8', 255) && accepts('UINT64', 2 ** 53) && accepts('INT64', -(2 ** 63)))
  t.ok(accepts('FP32', 3.4028234663852886e38) && accepts('FP64', Number.MAX_VALUE))
})

const READ_ERRORS: readonly (Expected & { name: string; body: unknown; form?: 'v1' | 'v2'; maxBatch?: number })[] = [
  { name: 'a body that is an array', body: [], code: 'INVALID_REQUEST', detail: /the request body must be a JSON object/ },
  { name: 'a body that is null', body: null, form: 'v2', code: 'INVALID_REQUEST', detail: /the request body must be a JSON object/ },
  { name: 'a missing model', body: { inputs: [] }, code: 'INVALID_REQUEST', detail: /model must be a non-empty string/ },
  { name: 'a model that is a number', body: { model: 1, inputs: [] }, code: 'INVALID_REQUEST', detail: /model must be a non-empty string/ },
  { name: 'an empty model', body: { model: '', inputs: [] }, code: 'INVALID_REQUEST', detail: /model must be a non-empty string/ },
  {
    name: 'a version that is a number',
    body: { model: 'iris', version: 1, inputs: [] },
    code: 'INVALID_REQUEST',
    detail: /version must be a non-empty string/,
  },
  { name: 'an empty version', body: { model: 'iris', version: '', inputs: [] }, code: 'INVALID_REQUEST', detail: /version must be a non-empty string/ },
  {
    name: 'an unknown member',
    body: { model: 'iris', input: [] },
    code: 'INVALID_REQUEST',
    detail: /^input is not a member of a prediction request; its members are model, version, id, inputs, instances, parameters, outputs$/,
  },
  {
    name: 'a model member on the OIP route',
    body: { model: 'iris', inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /^model is not a member .* are id, inputs, parameters, outputs$/,
  },
  { name: 'instances on the OIP route', body: { instances: [] }, form: 'v2', code: 'INVALID_REQUEST', detail: /^instances is not a member/ },
  { name: 'an id that is a number', body: { model: 'iris', id: 7, inputs: [] }, code: 'INVALID_REQUEST', detail: /id must be a string of 1 to 256 characters/ },
  { name: 'an empty id', body: { id: '', inputs: [] }, form: 'v2', code: 'INVALID_REQUEST', detail: /id must be a string of 1 to 256 characters/ },
  {
    name: 'an id over 256 characters',
    body: { id: 'x'.repeat(257), inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /id must be a string of 1 to 256/,
  },
  {
    name: 'parameters that are not an object',
    body: { parameters: [], inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /parameters must be an object/,
  },
  { name: 'outputs that are not an array', body: { outputs: {}, inputs: [] }, form: 'v2', code: 'INVALID_REQUEST', detail: /outputs must be an array/ },
  {
    name: 'an output that is a string',
    body: { outputs: ['species'], inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /^outputs\[0\] must be an object/,
  },
  {
    name: 'an output without a name',
    body: { model: 'iris', outputs: [{ name: 'species' }, {}], instances: [{}] },
    code: 'INVALID_REQUEST',
    detail: /^outputs\[1\]\.name must be a non-empty string$/,
  },
  {
    name: 'an output with an empty name',
    body: { outputs: [{ name: '' }], inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /outputs\[0\]\.name must be/,
  },
  {
    name: 'an output with a member of a tensor',
    body: { outputs: [{ name: 'species', datatype: 'BYTES' }], inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /^outputs\[0\]\.datatype is not a member of a requested output; its members are name, parameters$/,
  },
  {
    name: 'output parameters that are not an object',
    body: { outputs: [{ name: 'species', parameters: [] }], inputs: [] },
    form: 'v2',
    code: 'INVALID_REQUEST',
    detail: /^outputs\[0\]\.parameters must be an object$/,
  },
  {
    name: 'an output asked for twice',
    body: { model: 'iris', outputs: [{ name: 'probabilities' }, { name: 'species' }, { name: 'probabilities' }], instances: [{}] },
    code: 'INVALID_REQUEST',
    detail: /^output probabilities is asked for more than once$/,
  },
  {
    name: 'both inputs and instances',
    body: { model: 'iris', inputs: perFeature(IRIS_ROWS), instances: [] },
    code: 'INVALID_REQUEST',
    detail: /give inputs or instances, not both/,
  },
  { name: 'neither inputs nor instances', body: { model: 'iris' }, code: 'INVALID_REQUEST', detail: /inputs must be a non-empty array/ },
  { name: 'no inputs', body: { inputs: [] }, form: 'v2', code: 'INVALID_REQUEST', detail: /inputs must be a non-empty array/ },
  { name: 'instances that are not an array', body: { model: 'iris', instances: {} }, code: 'INVALID_REQUEST', detail: /instances must be a non-empty array/ },
  { name: 'no instances', body: { model: 'iris', instances: [] }, code: 'INVALID_REQUEST', detail: /instances must be a non-empty array/ },
  {
    name: 'more instances than maxBatch',
    body: { model: 'iris', instances: named(IRIS_ROWS) },
    maxBatch: 2,
    code: 'BATCH_TOO_LARGE',
    detail: /^the batch has 3 rows; at most 2 are allowed per request$/,
  },
  {
    name: 'more rows than maxBatch',
    body: { inputs: perFeature([[1, 2, 3, 4]]).map((input) => ({ ...input, shape: [1001], data: Array(1001).fill(1) })) },
    form: 'v2',
    code: 'BATCH_TOO_LARGE',
    detail: /the batch has 1001 rows; at most 1000/,
    input: 'sepal_length',
  },
  {
    name: 'an input that is not an object',
    body: { inputs: [[1, 2]] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^inputs\[0\] must be an object with name, datatype, shape and data$/,
  },
  {
    name: 'an input with an unknown member',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [1], data: [1], contents: {} }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^inputs\[0\]\.contents is not a member of an input tensor/,
  },
  {
    name: 'an input without a name',
    body: { inputs: [{ datatype: 'FP64', shape: [1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /inputs\[0\]\.name must be a non-empty string/,
  },
  {
    name: 'an input with an empty name',
    body: { inputs: [{ name: '', datatype: 'FP64', shape: [1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /inputs\[0\]\.name must be a non-empty string/,
  },
  {
    name: 'a missing datatype',
    body: { inputs: [{ name: 'a', shape: [1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: datatype must be one of FP64, FP32, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8, BOOL, BYTES$/,
    input: 'a',
  },
  {
    name: 'an unsupported datatype',
    body: { inputs: [{ name: 'a', datatype: 'FP16', shape: [1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: datatype must be one of/,
    input: 'a',
  },
  {
    name: 'a lower-case datatype',
    body: { inputs: [{ name: 'a', datatype: 'fp64', shape: [1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: datatype must be one of/,
    input: 'a',
  },
  {
    name: 'a missing shape',
    body: { inputs: [{ name: 'a', datatype: 'FP64', data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: shape must be \[N\] or \[N, F\], of non-negative integers/,
    input: 'a',
  },
  {
    name: 'an empty shape',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: shape must be/,
    input: 'a',
  },
  {
    name: 'a 3-D shape',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [1, 1, 1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: shape must be/,
    input: 'a',
  },
  {
    name: 'a negative dimension',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [-1], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: shape must be/,
    input: 'a',
  },
  {
    name: 'a fractional dimension',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [1.5], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: shape must be/,
    input: 'a',
  },
  {
    name: 'a dimension that is a string',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: ['1'], data: [1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: shape must be/,
    input: 'a',
  },
  {
    name: 'no rows',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [0], data: [] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: shape \[0\] has no rows; a batch has at least one$/,
    input: 'a',
  },
  {
    name: 'data that is not an array',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [1], data: 1 }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: data must be an array/,
    input: 'a',
  },
  {
    name: 'a shape product below the data length',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [2], data: [1, 2, 3] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: shape \[2\] holds 2 values, data has 3$/,
    input: 'a',
  },
  {
    name: 'a shape product above the data length',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [2, 4], data: [1, 2, 3, 4] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: shape \[2, 4\] holds 8 values, data has 4$/,
    input: 'a',
  },
  {
    name: 'nested rows more than the shape has',
    body: {
      inputs: [
        {
          name: 'a',
          datatype: 'FP64',
          shape: [1, 2],
          data: [
            [1, 2],
            [3, 4],
          ],
        },
      ],
    },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: shape \[1, 2\] holds 2 values, data has 4$/,
    input: 'a',
  },
  {
    name: 'nested rows of unequal length',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [2, 2], data: [[1, 2], [3]] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: data\[1\] must be a row of 2 values, as shape \[2, 2\] says; nested rows must all have the same length$/,
    input: 'a',
  },
  {
    name: 'a nested row that is not an array',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [2, 2], data: [[1, 2], 3, 4] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: data\[1\] must be a row of 2 values/,
    input: 'a',
  },
  {
    name: 'nested data for a 1-D shape',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [1], data: [[1]] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: data\[0\] must be a number \(datatype FP64\)/,
    input: 'a',
  },
  {
    name: 'a string for a number',
    body: { inputs: [{ name: 'a', datatype: 'FP64', shape: [2], data: [1, '2'] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: data\[1\] must be a number \(datatype FP64\)$/,
    input: 'a',
  },
  {
    name: 'null for a number',
    body: { inputs: [{ name: 'a', datatype: 'INT32', shape: [1], data: [null] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /input a: data\[0\] must be a number \(datatype INT32\)/,
    input: 'a',
  },
  {
    name: 'a number too large for a double',
    body: JSON.parse('{"inputs":[{"name":"a","datatype":"FP64","shape":[1],"data":[1e400]}]}'),
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: data\[0\] must be a finite number$/,
    input: 'a',
  },
  {
    name: 'a fraction for an integer type',
    body: { inputs: [{ name: 'a', datatype: 'INT32', shape: [2], data: [1, 1.5] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: data\[1\] is 1.5, not a value of datatype INT32$/,
    input: 'a',
  },
  {
    name: 'a negative unsigned value',
    body: { inputs: [{ name: 'a', datatype: 'UINT8', shape: [1], data: [-1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /data\[0\] is -1, not a value of datatype UINT8/,
    input: 'a',
  },
  {
    name: 'an INT8 above 127',
    body: { inputs: [{ name: 'a', datatype: 'INT8', shape: [1], data: [128] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /data\[0\] is 128, not a value of datatype INT8/,
    input: 'a',
  },
  {
    name: 'an INT64 of 2^63',
    body: { inputs: [{ name: 'a', datatype: 'INT64', shape: [1], data: [2 ** 63] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /not a value of datatype INT64/,
    input: 'a',
  },
  {
    name: 'an FP32 beyond its range',
    body: { inputs: [{ name: 'a', datatype: 'FP32', shape: [1], data: [1e39] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /data\[0\] is 1e\+39, not a value of datatype FP32/,
    input: 'a',
  },
  {
    name: 'a number for BYTES',
    body: { inputs: [{ name: 'a', datatype: 'BYTES', shape: [2], data: ['x', 1] }] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input a: data\[1\] must be a string \(datatype BYTES\)$/,
    input: 'a',
  },
  {
    name: 'a duplicate input',
    body: { inputs: [...perFeature(IRIS_ROWS), perFeature(IRIS_ROWS)[2]] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input petal_length is given more than once$/,
    input: 'petal_length',
  },
  {
    name: 'inputs with different row counts',
    body: { inputs: [perFeature(IRIS_ROWS)[0], perFeature(IRIS_ROWS.slice(1))[1]] },
    form: 'v2',
    code: 'INVALID_INPUT',
    detail: /^input sepal_width has 2 rows, input sepal_length has 3; every input needs one value per row$/,
    input: 'sepal_width',
  },
]

for (const { name, body, form = 'v1', maxBatch = 1000, ...expected } of READ_ERRORS) {
  t.test(`a request with ${name} is refused`, async (t) => {
    const read = form === 'v1' ? readPredictRequest : readInferRequest
    checkError(
      t,
      caught(() => read(body, { maxBatch })),
      expected,
    )
  })
}
