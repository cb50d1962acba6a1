// planOnnx: how an ONNX graph is served, from its summary (onnx-graph.ts), metadata.json and the
// profile. Summaries are written by hand here, as inspectGraph reports them, so each case is one
// shape of graph; test/integration/onnx.test.ts serves the generated graphs end to end.
import t from 'tap'
import type { GraphSummary, GraphValue, ZipMap } from '../../../lib/models/onnx/graph.js'
import { NO_METADATA, type OnnxMetadata } from '../../../lib/models/onnx/metadata.js'
import { ONNX_PLATFORM, type OnnxFiles, planOnnx } from '../../../lib/models/onnx/plan.js'

// TensorProto.DataType, as onnx.proto numbers them
const FLOAT = 1
const INT32 = 6
const INT64 = 7
const STRING = 8
const BOOL = 9
const FLOAT16 = 10
const DOUBLE = 11
const TYPE_NAMES: Readonly<Record<number, string>> = { 1: 'float', 6: 'int32', 7: 'int64', 8: 'string', 9: 'bool', 10: 'float16', 11: 'double' }

type Shape = GraphValue['shape']
/** A tensor as inspectGraph reports it. */
const tensor = (name: string, elemType: number, shape: Shape): GraphValue => ({ name, type: `tensor(${TYPE_NAMES[elemType]})`, elemType, shape })
/** What skl2onnx's ZipMap writes: a sequence of maps, with neither element type nor shape. */
const sequenceOfMaps = (name: string): GraphValue => ({ name, type: 'seq(map(int64,tensor(float)))', elemType: undefined, shape: undefined })

const summary = (
  inputs: readonly GraphValue[],
  outputs: readonly GraphValue[],
  classLabels?: readonly string[],
  zipMaps: readonly ZipMap[] = [],
): GraphSummary => ({ inputs, outputs, zipMaps, classLabels })

const meta = (members: Partial<OnnxMetadata>): OnnxMetadata => ({ ...NO_METADATA, ...members })

const PLACE = { name: 'churn', version: '7' }
const MODEL_BYTES = Buffer.from('the bytes of model.onnx')
const FILES: OnnxFiles = { model: MODEL_BYTES, metadata: undefined, profile: undefined }

/** A regressor's output, for cases about inputs. */
const VALUE = tensor('variable', FLOAT, ['N', 1])

/** Plans a graph that is its own original (no ZipMap rewritten). */
const plan = (graph: GraphSummary, metadata: OnnxMetadata = NO_METADATA, files: OnnxFiles = FILES) => planOnnx(graph, graph, metadata, files, PLACE)

const profileBytes = (profile: unknown): Buffer => Buffer.from(JSON.stringify(profile))

// ---- inputs: one [N, F] tensor

t.test('one [N, F] float input: its F columns are the metadata features, fed as one float32 tensor of rank 2', async (t) => {
  const graph = summary([tensor('X', FLOAT, ['N', 3])], [VALUE])
  const { model, plan: planned } = plan(graph, meta({ features: ['a', 'b', 'c'] }))
  t.strictSame(model.inputs, [
    { name: 'a', type: 'numerical', datatype: 'FP32' },
    { name: 'b', type: 'numerical', datatype: 'FP32' },
    { name: 'c', type: 'numerical', datatype: 'FP32' },
  ])
  t.strictSame(planned.feeds, [{ name: 'X', kind: 'float32', first: 0, width: 3, rank: 2, levels: undefined }])
  t.strictSame(model.signature, [{ name: 'X', datatype: 'FP32', shape: [-1, 3] }])
})

t.test('the element type of a [N, F] input is each feature’s datatype and the feed’s kind', async (t) => {
  const cases: Array<[number, string, string]> = [
    [DOUBLE, 'FP64', 'float64'],
    [INT64, 'INT64', 'int64'],
    [INT32, 'INT32', 'int32'],
    [BOOL, 'BOOL', 'bool'],
  ]
  for (const [elemType, datatype, kind] of cases) {
    const { model, plan: planned } = plan(summary([tensor('X', elemType, ['N', 2])], [VALUE]), meta({ features: ['a', 'b'] }))
    t.strictSame(
      model.inputs.map((i) => (i.type === 'numerical' ? i.datatype : i.type)),
      [datatype, datatype],
      kind,
    )
    t.equal(planned.feeds[0]?.kind, kind)
    t.strictSame(model.signature, [{ name: 'X', datatype, shape: [-1, 2] }], kind)
  }
})

t.test('a free F takes as many columns as the metadata names, and must have names', async (t) => {
  for (const free of [null, 'F']) {
    const graph = summary([tensor('X', FLOAT, ['N', free])], [VALUE])
    const { model, plan: planned } = plan(graph, meta({ features: ['a', 'b', 'c', 'd'] }))
    t.same(
      model.inputs.map((i) => i.name),
      ['a', 'b', 'c', 'd'],
    )
    t.strictSame(planned.feeds, [{ name: 'X', kind: 'float32', first: 0, width: 4, rank: 2, levels: undefined }])
    t.strictSame(model.signature, [{ name: 'X', datatype: 'FP32', shape: [-1, -1] }], 'both dimensions free')
  }
  t.throws(() => plan(summary([tensor('X', FLOAT, ['N', null])], [VALUE])), {
    message: /^metadata\.json features: required, to name the columns of input X \[N, \?\], whose number the graph leaves free$/,
  })
  t.throws(() => plan(summary([tensor('X', FLOAT, ['N', 'F'])], [VALUE])), {
    message: /^metadata\.json features: required, to name the columns of input X \[N, F\], whose number the graph leaves free$/,
  })
})

t.test('without metadata, the F columns of one [N, F] input are named after it: X_0 … X_{F−1}', async (t) => {
  const { model, plan: planned } = plan(summary([tensor('X', FLOAT, ['N', 3])], [VALUE]))
  t.strictSame(model.inputs, [
    { name: 'X_0', type: 'numerical', datatype: 'FP32' },
    { name: 'X_1', type: 'numerical', datatype: 'FP32' },
    { name: 'X_2', type: 'numerical', datatype: 'FP32' },
  ])
  t.strictSame(planned.feeds, [{ name: 'X', kind: 'float32', first: 0, width: 3, rank: 2, levels: undefined }])
  t.strictSame(model.signature, [{ name: 'X', datatype: 'FP32', shape: [-1, 3] }], 'the graph’s input, as it is')
  const doubles = plan(summary([tensor('float_input', DOUBLE, ['batch', 2])], [VALUE])).model
  t.strictSame(
    doubles.inputs,
    [
      { name: 'float_input_0', type: 'numerical', datatype: 'FP64' },
      { name: 'float_input_1', type: 'numerical', datatype: 'FP64' },
    ],
    'any input name, any numeric type',
  )
})

t.test('metadata features must name exactly F columns', async (t) => {
  const graph = summary([tensor('X', FLOAT, ['N', 3])], [VALUE])
  t.throws(() => plan(graph, meta({ features: ['a', 'b'] })), { message: /^metadata\.json features: names 2 columns; input X has 3$/ })
  t.throws(() => plan(graph, meta({ features: ['a', 'b', 'c', 'd'] })), { message: /^metadata\.json features: names 4 columns; input X has 3$/ })
})

t.test('one input of one column goes unnamed: the feature is the input itself', async (t) => {
  const wide = plan(summary([tensor('x', FLOAT, ['N', 1])], [VALUE]))
  t.strictSame(wide.model.inputs, [{ name: 'x', type: 'numerical', datatype: 'FP32' }])
  t.strictSame(wide.plan.feeds, [{ name: 'x', kind: 'float32', first: 0, width: 1, rank: 2, levels: undefined }])
  t.strictSame(wide.model.signature, [{ name: 'x', datatype: 'FP32', shape: [-1, 1] }])
  const flat = plan(summary([tensor('x', FLOAT, ['N'])], [VALUE]))
  t.strictSame(flat.model.inputs, [{ name: 'x', type: 'numerical', datatype: 'FP32' }])
  t.strictSame(flat.plan.feeds, [{ name: 'x', kind: 'float32', first: 0, width: 1, rank: 1, levels: undefined }], 'built as [N]: rank 1')
  t.strictSame(flat.model.signature, [{ name: 'x', datatype: 'FP32', shape: [-1] }])
})

t.test('one input of one column named in metadata is a matrix of one column', async (t) => {
  const { model, plan: planned } = plan(summary([tensor('X', FLOAT, ['N', 1])], [VALUE]), meta({ features: ['sepal_length'] }))
  t.strictSame(model.inputs, [{ name: 'sepal_length', type: 'numerical', datatype: 'FP32' }])
  t.strictSame(planned.feeds, [{ name: 'X', kind: 'float32', first: 0, width: 1, rank: 2, levels: undefined }])
})

t.test('a string input named like an Object member has no levels but those it is given', async (t) => {
  for (const name of ['constructor', 'toString', '__proto__']) {
    const graph = summary([tensor(name, STRING, ['N', 1]), tensor('x', FLOAT, ['N', 1])], [VALUE])
    t.throws(
      () => plan(graph),
      { message: `input ${name} takes strings: list them in metadata.json levels.${name}, or profile the column with svc profile` },
      name,
    )
  }
})

t.test('a [N, F] string tensor is refused: strings come one column per input', async (t) => {
  for (const columns of [3, null])
    t.throws(() => plan(summary([tensor('X', STRING, ['N', columns])], [VALUE]), meta({ features: ['a', 'b', 'c'] })), {
      message: /^input X: a \[N, F\] string tensor is not supported; export one \[N, 1\] input per string column$/,
    })
})

// ---- inputs: one tensor per feature

const COLOURS = ['red', 'green', 'blue']

t.test('several one-column inputs: each is a feature named as its input, of its own type, fed in graph order', async (t) => {
  const graph = summary(
    [
      tensor('a', FLOAT, ['N', 1]),
      tensor('b', INT64, ['N']),
      tensor('c', BOOL, ['N', 1]),
      tensor('d', DOUBLE, [null]),
      tensor('e', INT32, ['batch', 1]),
      tensor('colour', STRING, ['N', 1]),
    ],
    [VALUE],
  )
  const { model, plan: planned } = plan(graph, meta({ levels: { colour: COLOURS } }))
  t.strictSame(model.inputs, [
    { name: 'a', type: 'numerical', datatype: 'FP32' },
    { name: 'b', type: 'numerical', datatype: 'INT64' },
    { name: 'c', type: 'numerical', datatype: 'BOOL' },
    { name: 'd', type: 'numerical', datatype: 'FP64' },
    { name: 'e', type: 'numerical', datatype: 'INT32' },
    { name: 'colour', type: 'categorical', levels: COLOURS },
  ])
  t.strictSame(planned.feeds, [
    { name: 'a', kind: 'float32', first: 0, width: 1, rank: 2, levels: undefined },
    { name: 'b', kind: 'int64', first: 1, width: 1, rank: 1, levels: undefined },
    { name: 'c', kind: 'bool', first: 2, width: 1, rank: 2, levels: undefined },
    { name: 'd', kind: 'float64', first: 3, width: 1, rank: 1, levels: undefined },
    { name: 'e', kind: 'int32', first: 4, width: 1, rank: 2, levels: undefined },
    { name: 'colour', kind: 'string', first: 5, width: 1, rank: 2, levels: COLOURS },
  ])
  t.strictSame(model.signature, [
    { name: 'a', datatype: 'FP32', shape: [-1, 1] },
    { name: 'b', datatype: 'INT64', shape: [-1] },
    { name: 'c', datatype: 'BOOL', shape: [-1, 1] },
    { name: 'd', datatype: 'FP64', shape: [-1] },
    { name: 'e', datatype: 'INT32', shape: [-1, 1] },
    { name: 'colour', datatype: 'BYTES', shape: [-1, 1] },
  ])
})

/** A float and a string input: the smallest graph with a categorical feature. */
const MIXED = summary([tensor('x', FLOAT, ['N', 1]), tensor('colour', STRING, ['N', 1])], [VALUE])
const X_REFERENCE = { name: 'x', type: 'numerical', edges: [0, 10], proportions: [0.25, 0.5, 0.25] }
const COLOUR_REFERENCE = { name: 'colour', type: 'categorical', levels: COLOURS, proportions: [0.5, 0.25, 0.25] }
const VALUE_REFERENCE = { name: 'variable', type: 'numerical', edges: [1.5], proportions: [0.4, 0.6] }

t.test('a string input with no metadata levels takes the levels of its profiled column', async (t) => {
  const profile = profileBytes({ format_version: 1, rows: 8, features: [X_REFERENCE, COLOUR_REFERENCE] })
  const { model, plan: planned } = plan(MIXED, NO_METADATA, { ...FILES, profile })
  t.strictSame(model.inputs[1], { name: 'colour', type: 'categorical', levels: COLOURS })
  t.strictSame(planned.feeds[1]?.levels, COLOURS)
})

t.test('a string input with metadata levels takes those, and a profile of other levels is refused', async (t) => {
  const levels = ['blue', 'red']
  const { model, plan: planned } = plan(MIXED, meta({ levels: { colour: levels } }))
  t.strictSame(model.inputs[1], { name: 'colour', type: 'categorical', levels })
  t.strictSame(planned.feeds[1]?.levels, levels)
  // The profile binned the column over its own levels: a reference over others would measure nothing.
  const profile = profileBytes({ format_version: 1, rows: 8, features: [X_REFERENCE, COLOUR_REFERENCE] })
  t.throws(() => plan(MIXED, meta({ levels: { colour: levels } }), { ...FILES, profile }), {
    message: /^profile\.json features\[1\]\.levels: must equal the levels of colour: blue, red$/,
  })
})

t.test('a string input with neither metadata levels nor a profiled categorical column is refused, naming where to list them', async (t) => {
  const message = /^input colour takes strings: list them in metadata\.json levels\.colour, or profile the column with svc profile$/
  t.throws(() => plan(MIXED), { message }, 'no profile')
  const otherColumn = profileBytes({ format_version: 1, rows: 8, features: [X_REFERENCE] })
  t.throws(() => plan(MIXED, NO_METADATA, { ...FILES, profile: otherColumn }), { message }, 'a profile without the column')
  const numerical = profileBytes({ format_version: 1, rows: 8, features: [X_REFERENCE, { ...X_REFERENCE, name: 'colour' }] })
  t.throws(() => plan(MIXED, NO_METADATA, { ...FILES, profile: numerical }), { message }, 'a profile of the column as numbers')
})

t.test('metadata features are refused for a graph that takes one input per feature', async (t) => {
  const graph = summary([tensor('a', FLOAT, ['N', 1]), tensor('b', FLOAT, ['N'])], [VALUE])
  t.throws(() => plan(graph, meta({ features: ['a', 'b'] })), {
    message: /^metadata\.json features: names the columns of one \[N, F\] input; this graph takes one input per feature \(a, b\)$/,
  })
})

t.test('a graph of several inputs must take one column in each', async (t) => {
  t.throws(() => plan(summary([tensor('a', FLOAT, ['N', 1]), tensor('b', FLOAT, ['N', 3])], [VALUE])), {
    message: /^input b: shape \[N, 3\]: a graph with several inputs must take one column in each \(\[N\] or \[N, 1\]\)$/,
  })
  t.throws(() => plan(summary([tensor('a', FLOAT, ['N', null]), tensor('b', FLOAT, ['N'])], [VALUE])), {
    message: /^input a: shape \[N, \?\]: a graph with several inputs/,
  })
})

t.test('an input svc cannot fill is refused with its type: other element types and non-tensors', async (t) => {
  const cases: Array<[GraphValue, string]> = [
    [tensor('x', FLOAT16, ['N', 1]), 'tensor\\(float16\\)'],
    [sequenceOfMaps('x'), 'seq\\(map\\(int64,tensor\\(float\\)\\)\\)'],
    [{ name: 'x', type: 'sparse_tensor(float)', elemType: FLOAT, shape: ['N', 4] }, 'sparse_tensor\\(float\\)'],
    [{ name: 'x', type: 'unknown', elemType: undefined, shape: undefined }, 'unknown'],
  ]
  for (const [input, type] of cases) {
    const message = new RegExp(`^input x: ${type} is not a type svc can feed \\(float, double, int64, int32, bool or string tensors\\)$`)
    t.throws(() => plan(summary([input], [VALUE])), { message }, input.type)
    t.throws(() => plan(summary([tensor('a', FLOAT, ['N']), input], [VALUE])), { message }, `${input.type}, beside another input`)
  }
})

t.test('an input of rank other than 1 or 2, or of unknown rank, is refused', async (t) => {
  t.throws(() => plan(summary([tensor('x', FLOAT, ['N', 3, 4])], [VALUE])), { message: /^input x: shape \[N, 3, 4\] must be \[N\] or \[N, F\]$/ })
  t.throws(() => plan(summary([tensor('x', FLOAT, [])], [VALUE])), { message: /^input x: shape \[\] must be \[N\] or \[N, F\]$/ }, 'a scalar')
  t.throws(() => plan(summary([tensor('x', FLOAT, undefined)], [VALUE])), { message: /^input x: shape \[\] must be \[N\] or \[N, F\]$/ }, 'no shape')
  t.throws(() => plan(summary([tensor('a', FLOAT, ['N']), tensor('x', FLOAT, ['N', 1, 1])], [VALUE])), {
    message: /^input x: shape \[N, 1, 1\] must be \[N\] or \[N, F\]$/,
  })
})

t.test('a fixed batch dimension is refused: requests choose their batch', async (t) => {
  const message = (shape: string) => new RegExp(`^input x: shape \\[${shape}\\] fixes the batch dimension; export the model with a dynamic first dimension$`)
  t.throws(() => plan(summary([tensor('x', FLOAT, [1, 3])], [VALUE]), meta({ features: ['a', 'b', 'c'] })), { message: message('1, 3') })
  t.throws(() => plan(summary([tensor('x', FLOAT, [1, 1])], [VALUE])), { message: message('1, 1') })
  t.throws(() => plan(summary([tensor('a', FLOAT, ['N']), tensor('x', INT64, [32])], [VALUE])), { message: message('32') })
})

t.test('a graph that takes no input is refused', async (t) => {
  t.throws(() => plan(summary([], [VALUE])), { message: /^the graph takes no input$/ })
})

t.test('metadata levels must name a string input of the graph', async (t) => {
  t.throws(() => plan(MIXED, meta({ levels: { colour: COLOURS, x: ['0', '1'] } })), {
    message: /^metadata\.json levels\.x: x is not a string input of the graph$/,
  })
  t.throws(() => plan(MIXED, meta({ levels: { colour: COLOURS, size: ['S', 'M'] } })), {
    message: /^metadata\.json levels\.size: size is not a string input of the graph$/,
  })
  t.throws(() => plan(summary([tensor('X', FLOAT, ['N', 2])], [VALUE]), meta({ features: ['a', 'b'], levels: { X: ['p'] } })), {
    message: /^metadata\.json levels\.X: X is not a string input of the graph$/,
  })
})

// ---- outputs

const INPUT = tensor('X', FLOAT, ['N', 4])
const FEATURES = meta({ features: ['a', 'b', 'c', 'd'] })
const IRIS = ['setosa', 'versicolor', 'virginica']

t.test('one float output of one value per row is a regressor’s, fetched alone', async (t) => {
  for (const shape of [['N', 1], ['N']] as const) {
    const graph = summary([INPUT], [tensor('variable', shape.length === 1 ? DOUBLE : FLOAT, shape)])
    const { model, plan: planned } = plan(graph, FEATURES)
    t.equal(model.task, 'regression')
    t.notOk('classes' in model, 'a regressor has no classes')
    t.strictSame(model.outputs, [{ name: 'variable', type: 'value' }])
    t.strictSame(planned.fetch, 'variable')
    t.equal(planned.width, 1)
  }
  const noisy = summary([INPUT], [sequenceOfMaps('extra'), tensor('cube', FLOAT, ['N', 1, 1]), tensor('variable', FLOAT, ['N', 1])])
  t.equal(plan(noisy, FEATURES).plan.fetch, 'variable', 'outputs that are not tensors of rank 1 or 2 are passed over')
  t.equal(plan(summary([INPUT], [tensor('variable', FLOAT, ['N', 1])]), meta({ ...FEATURES, task: 'regression' })).model.task, 'regression', 'said so')
})

t.test('an output tensor of no element type is neither probabilities, values nor a label', async (t) => {
  // inspectGraph gives every tensor its element type; GraphValue allows none, and none is no float.
  const untyped = (name: string, shape: Shape): GraphValue => ({ name, type: 'tensor(float)', elemType: undefined, shape })
  const graph = summary([INPUT], [untyped('label', ['N']), untyped('scores', ['N', 3]), tensor('variable', FLOAT, ['N', 1])])
  const { model, plan: planned } = plan(graph, FEATURES)
  t.equal(model.task, 'regression', 'no label output and no wide float output: a regressor')
  t.equal(planned.fetch, 'variable')
  t.throws(() => plan(summary([INPUT], [untyped('variable', ['N', 1])]), FEATURES), { message: /^the graph has no float output of one value per row/ })
})

t.test('a regression needs a float output of one value per row', async (t) => {
  const message = /^the graph has no float output of one value per row \(\[N\] or \[N, 1\]\) to answer a regression with$/
  t.throws(() => plan(summary([INPUT], [tensor('scores', FLOAT, ['N', 3])]), meta({ ...FEATURES, task: 'regression' })), { message }, 'only [N, 3]')
  t.throws(() => plan(summary([INPUT], [tensor('variable', INT64, ['N', 1])]), meta({ ...FEATURES, task: 'regression' })), { message }, 'only integers')
  t.throws(() => plan(summary([INPUT], []), FEATURES), { message }, 'no output, no task: a regression by default')
})

t.test('a label and a probabilities output make a classifier over the graph’s class labels, fetching only the probabilities', async (t) => {
  const graph = summary([INPUT], [tensor('output_label', INT64, ['N']), tensor('output_probability', FLOAT, ['N', 3])], IRIS)
  const { model, plan: planned } = plan(graph, FEATURES)
  t.equal(model.task, 'classification')
  t.strictSame(model.task === 'classification' && model.classes, IRIS)
  t.strictSame(model.outputs, [
    { name: 'output_label', type: 'label' },
    { name: 'output_probability', type: 'probabilities' },
  ])
  t.equal(planned.fetch, 'output_probability')
  t.equal(planned.width, 3)
  const strings = summary([INPUT], [tensor('probs', DOUBLE, ['N', null]), tensor('label', STRING, ['N', 1])], IRIS)
  const both = plan(strings, FEATURES)
  t.strictSame(both.model.outputs, [
    { name: 'label', type: 'label' },
    { name: 'probs', type: 'probabilities' },
  ])
  t.equal(both.plan.width, 3, 'a free class dimension takes the class count')
})

t.test('a graph ending in ZipMap shows its probabilities under the ZipMap’s output, and fetches the tensor behind it', async (t) => {
  const zipMaps = [{ input: 'probability_tensor', output: 'probabilities' }]
  const labels = ['0', '1', '2']
  const original = summary([INPUT], [tensor('label', INT64, ['N']), sequenceOfMaps('probabilities')], labels, zipMaps)
  // As the rewrite leaves it: the ZipMap's output replaced by its input, typed [?, ?]; a raw score
  // output listed first must not be taken for the probabilities.
  const graph = summary([INPUT], [tensor('scores', FLOAT, ['N', 3]), tensor('label', INT64, ['N']), tensor('probability_tensor', FLOAT, [null, null])], labels)
  const { model, plan: planned } = planOnnx(graph, original, FEATURES, FILES, PLACE)
  t.strictSame(model.outputs, [
    { name: 'label', type: 'label' },
    { name: 'probabilities', type: 'probabilities' },
  ])
  t.strictSame(model.task === 'classification' && model.classes, labels)
  t.equal(planned.fetch, 'probability_tensor')
  t.equal(planned.width, 3)
})

t.test('a classifier without class labels in its graph takes them from metadata, with no label output of its own', async (t) => {
  const graph = summary([INPUT], [tensor('dense', FLOAT, ['N', 3])])
  const { model, plan: planned } = plan(graph, meta({ ...FEATURES, classes: IRIS }))
  t.equal(model.task, 'classification', 'a wide float output is a classifier’s')
  t.strictSame(model.task === 'classification' && model.classes, IRIS)
  t.strictSame(model.outputs, [
    { name: 'label', type: 'label' },
    { name: 'dense', type: 'probabilities' },
  ])
  t.equal(planned.fetch, 'dense')
  t.equal(planned.width, 3)
})

t.test('metadata task classification makes a one-column float output the probabilities, checked against the classes', async (t) => {
  const said = meta({ ...FEATURES, task: 'classification', classes: ['no', 'yes'] })
  t.throws(() => plan(summary([INPUT], [tensor('p', FLOAT, ['N', 1])]), said), { message: /^output p: shape \[N, 1\] has 1 columns for 2 classes$/ })
  // A one-dimensional output has no column count to compare here; the predictor's probe at load
  // compares the values it answers per row.
  const flat = plan(summary([INPUT], [tensor('p', FLOAT, ['N'])]), said)
  t.equal(flat.plan.fetch, 'p')
  t.equal(flat.plan.width, 2)
  const labelled = plan(summary([INPUT], [tensor('label', INT64, ['N']), tensor('p', FLOAT, ['N'])], ['no', 'yes']), FEATURES)
  t.equal(labelled.model.task, 'classification', 'a label output makes a classifier')
  t.equal(labelled.plan.fetch, 'p')
})

t.test('a classifier with class labels nowhere answers its columns as classes 0 … C−1, its label included', async (t) => {
  for (const outputs of [[tensor('dense', FLOAT, ['N', 3])], [tensor('label', INT64, ['N']), tensor('dense', FLOAT, ['N', 3])]]) {
    const { model, plan: planned } = plan(summary([INPUT], outputs), FEATURES)
    t.equal(model.task, 'classification')
    t.strictSame(model.task === 'classification' && model.classes, ['0', '1', '2'])
    t.strictSame(model.outputs, [
      { name: 'label', type: 'label' },
      { name: 'dense', type: 'probabilities' },
    ])
    t.equal(planned.fetch, 'dense')
    t.equal(planned.width, 3)
  }
})

t.test('a classifier with class labels nowhere and a free class count is refused', async (t) => {
  const message = /^metadata\.json classes: required: the graph names no class labels, and output dense \[N, \?\] does not fix their number$/
  t.throws(() => plan(summary([INPUT], [tensor('dense', FLOAT, ['N', null])]), FEATURES), { message })
  t.throws(() => plan(summary([INPUT], [tensor('dense', FLOAT, ['N'])]), meta({ ...FEATURES, task: 'classification' })), {
    message: /^metadata\.json classes: required: the graph names no class labels, and output dense \[N\] does not fix their number$/,
  })
})

t.test('metadata classes may repeat the graph’s labels, never differ from them', async (t) => {
  const graph = summary([INPUT], [tensor('label', INT64, ['N']), tensor('probabilities', FLOAT, ['N', 3])], ['0', '1', '2'])
  const same = plan(graph, meta({ ...FEATURES, classes: ['0', '1', '2'] }))
  t.strictSame(same.model.task === 'classification' && same.model.classes, ['0', '1', '2'])
  const message = /^metadata\.json classes: the graph names its classes \(0, 1, 2\); leave classes out or repeat them$/
  t.throws(() => plan(graph, meta({ ...FEATURES, classes: IRIS })), { message }, 'other labels')
  t.throws(() => plan(graph, meta({ ...FEATURES, classes: ['2', '1', '0'] })), { message }, 'another order')
  t.throws(() => plan(graph, meta({ ...FEATURES, classes: ['0', '1'] })), { message }, 'fewer')
})

t.test('a classifier needs at least two classes', async (t) => {
  t.throws(() => plan(summary([INPUT], [tensor('label', INT64, ['N']), tensor('probabilities', FLOAT, ['N', 1])], ['only']), FEATURES), {
    message: /^a classifier needs at least two classes, the graph names 1$/,
  })
  t.throws(() => plan(summary([INPUT], [tensor('dense', FLOAT, ['N', null])]), meta({ ...FEATURES, classes: ['only'] })), {
    message: /^a classifier needs at least two classes, metadata\.json names 1$/,
  })
  t.throws(() => plan(summary([INPUT], [tensor('p', FLOAT, ['N', 1])]), meta({ ...FEATURES, task: 'classification' })), {
    message: /^a classifier needs at least two classes, output p \[N, 1\] has 1$/,
  })
})

t.test('a probabilities output must have one column per class', async (t) => {
  t.throws(() => plan(summary([INPUT], [tensor('label', INT64, ['N']), tensor('probabilities', FLOAT, ['N', 4])], IRIS), FEATURES), {
    message: /^output probabilities: shape \[N, 4\] has 4 columns for 3 classes$/,
  })
})

t.test('a classifier needs a float output for its probabilities', async (t) => {
  const message = /^the graph has no float output of class probabilities \(\[N, C\]\)$/
  t.throws(() => plan(summary([INPUT], [tensor('label', INT64, ['N'])], IRIS), FEATURES), { message }, 'a label alone')
  t.throws(
    () => plan(summary([INPUT], [tensor('label', STRING, ['N']), sequenceOfMaps('probabilities')], IRIS), FEATURES),
    { message },
    'a ZipMap not rewritten',
  )
  t.throws(() => plan(summary([INPUT], [tensor('label', INT32, ['N', 1]), tensor('scores', INT64, ['N', 3])], IRIS), FEATURES), { message }, 'integer scores')
})

// ---- the description

t.test('the description: platform onnxruntime, name and version from the path, the graph’s inputs as signature, frozen', async (t) => {
  t.equal(ONNX_PLATFORM, 'onnxruntime')
  const graph = summary([tensor('X', FLOAT, ['N', 2])], [tensor('label', INT64, ['N']), tensor('probabilities', FLOAT, ['N', 2])], ['no', 'yes'])
  const { model, plan: planned } = plan(graph, meta({ features: ['a', 'b'] }))
  t.strictSame(model, {
    name: 'churn',
    version: '7',
    platform: 'onnxruntime',
    type: 'onnx',
    inputs: [
      { name: 'a', type: 'numerical', datatype: 'FP32' },
      { name: 'b', type: 'numerical', datatype: 'FP32' },
    ],
    standardisation: undefined,
    reference: undefined,
    provenance: undefined,
    quality: undefined,
    signature: [{ name: 'X', datatype: 'FP32', shape: [-1, 2] }],
    sha256: model.sha256,
    task: 'classification',
    classes: ['no', 'yes'],
    outputs: [
      { name: 'label', type: 'label' },
      { name: 'probabilities', type: 'probabilities' },
    ],
  })
  t.ok(Object.isFrozen(model) && Object.isFrozen(model.inputs) && Object.isFrozen(model.signature), 'the description is frozen')
  t.ok(Object.isFrozen(planned) && Object.isFrozen(planned.feeds), 'the plan is frozen')
  t.equal(plan(graph, meta({ features: ['a', 'b'], type: 'GradientBoostingClassifier' })).model.type, 'GradientBoostingClassifier', 'the type from metadata')
})

t.test('a profile that matches the inputs becomes the reference, with its predictions when it has them', async (t) => {
  const features = [X_REFERENCE, COLOUR_REFERENCE]
  const bare = plan(MIXED, NO_METADATA, { ...FILES, profile: profileBytes({ format_version: 1, rows: 8, features }) })
  t.strictSame(bare.model.reference, { rows: 8, features })
  t.notOk('predictions' in (bare.model.reference as object), 'no predictions member when the profile has none')
  const withPredictions = plan(MIXED, NO_METADATA, {
    ...FILES,
    profile: profileBytes({ format_version: 1, rows: 8, features, predictions: VALUE_REFERENCE }),
  })
  t.strictSame(withPredictions.model.reference, { rows: 8, features, predictions: VALUE_REFERENCE })
  // A classifier's predictions are profiled as its label output, categorical over its classes.
  const classifier = summary([tensor('x', FLOAT, ['N'])], [tensor('label', INT64, ['N']), tensor('probabilities', FLOAT, ['N', 2])], ['no', 'yes'])
  const labels = { name: 'label', type: 'categorical', levels: ['no', 'yes'], proportions: [0.75, 0.25] }
  const classified = plan(classifier, NO_METADATA, {
    ...FILES,
    profile: profileBytes({ format_version: 1, rows: 4, features: [X_REFERENCE], predictions: labels }),
  })
  t.strictSame(classified.model.reference, { rows: 4, features: [X_REFERENCE], predictions: labels })
})

t.test("a profile's quality becomes the version's; without one, or without a profile, it has none", async (t) => {
  const features = [X_REFERENCE, COLOUR_REFERENCE]
  const quality = { rmse: 0.5, mae: 0.375, r2: 0.75 }
  const scored = plan(MIXED, NO_METADATA, { ...FILES, profile: profileBytes({ format_version: 1, rows: 8, features, quality }) })
  t.strictSame(scored.model.quality, quality)
  t.notOk('quality' in (scored.model.reference as object), 'not part of the drift reference')
  t.equal(plan(MIXED, NO_METADATA, { ...FILES, profile: profileBytes({ format_version: 1, rows: 8, features }) }).model.quality, undefined)
  t.equal(plan(MIXED, meta({ levels: { colour: ['blue', 'red'] } })).model.quality, undefined, 'no profile')
  t.throws(() => plan(MIXED, NO_METADATA, { ...FILES, profile: profileBytes({ format_version: 1, rows: 8, features, quality: { RMSE: 1 } }) }), {
    message: /^profile\.json quality\."RMSE": a metric name is 1 to 64 lower-case letters/,
  })
})

t.test('a profile that does not describe the inputs or answers is refused, prefixed with its file', async (t) => {
  const profile = (p: unknown) => ({ ...FILES, profile: profileBytes(p) })
  t.throws(() => plan(MIXED, NO_METADATA, profile({ format_version: 1, rows: 8, features: [X_REFERENCE, COLOUR_REFERENCE, { ...X_REFERENCE, name: 'z' }] })), {
    message: /^profile\.json features: must have one entry per input \(2\), has 3$/,
  })
  t.throws(() => plan(MIXED, NO_METADATA, profile({ format_version: 1, rows: 8, features: [COLOUR_REFERENCE, X_REFERENCE] })), {
    message: /^profile\.json features\[0\]: must describe x \(numerical\), describes colour \(categorical\)$/,
  })
  t.throws(
    () =>
      plan(
        MIXED,
        NO_METADATA,
        profile({ format_version: 1, rows: 8, features: [X_REFERENCE, COLOUR_REFERENCE], predictions: { ...VALUE_REFERENCE, name: 'y' } }),
      ),
    { message: /^profile\.json predictions: must describe variable \(numerical\), describes y \(numerical\)$/ },
  )
})

t.test('a profile that is not a valid profile is refused, prefixed with its file', async (t) => {
  t.throws(() => plan(MIXED, meta({ levels: { colour: COLOURS } }), { ...FILES, profile: Buffer.from('{"format_version": 1,') }), {
    message: /^profile\.json \(document\): is not UTF-8 JSON: /,
  })
  t.throws(() => plan(MIXED, meta({ levels: { colour: COLOURS } }), { ...FILES, profile: profileBytes({ format_version: 2, rows: 8, features: [] }) }), {
    message: /^profile\.json format_version: 2 is not 1$/,
  })
})

t.test('sha256 is a hex digest of all three files: a change to any, or a file coming or going, is a new build', async (t) => {
  const graph = summary([tensor('x', FLOAT, ['N'])], [VALUE])
  const digest = (files: OnnxFiles): string => plan(graph, NO_METADATA, files).model.sha256
  const profile = profileBytes({ format_version: 1, rows: 8, features: [X_REFERENCE] })
  const base = digest({ model: MODEL_BYTES, metadata: Buffer.from('{}'), profile })
  t.match(base, /^[0-9a-f]{64}$/)
  t.equal(digest({ model: Buffer.from(MODEL_BYTES), metadata: Buffer.from('{}'), profile: Buffer.from(profile) }), base, 'equal bytes, equal digest')
  const others = {
    'another model': digest({ model: Buffer.from('other bytes of model.onnx'), metadata: Buffer.from('{}'), profile }),
    'other metadata': digest({ model: MODEL_BYTES, metadata: Buffer.from('{ }'), profile }),
    'another profile': digest({
      model: MODEL_BYTES,
      metadata: Buffer.from('{}'),
      profile: profileBytes({ format_version: 1, rows: 9, features: [X_REFERENCE] }),
    }),
    'no metadata': digest({ model: MODEL_BYTES, metadata: undefined, profile }),
    'empty metadata': digest({ model: MODEL_BYTES, metadata: Buffer.alloc(0), profile }),
    'no profile': digest({ model: MODEL_BYTES, metadata: Buffer.from('{}'), profile: undefined }),
    // Bytes moved from the end of one file to the start of the next: each file's length is hashed.
    'a byte moved between files': digest({ model: Buffer.concat([MODEL_BYTES, Buffer.from('{')]), metadata: Buffer.from('}'), profile }),
  }
  for (const [what, sha256] of Object.entries(others)) t.not(sha256, base, what)
  t.equal(new Set(Object.values(others)).size, Object.keys(others).length, 'every variant differs from every other')
  t.not(others['no metadata'], others['empty metadata'], 'an absent file is not an empty one')
})
