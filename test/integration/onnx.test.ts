// ONNX models through the real runtime, over HTTP: the generated graphs of
// test/fixtures/onnx/generate.py, placed in a model store directory, served by both APIs. Every
// expected output is computed here from the graph's parameters (`<name>.params.json`) by plain
// arithmetic in float32 where the graph computes in float32, never read back from onnxruntime.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { startApp, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { artifactBytes } from '../fixtures/models.js'
import { artifactServer, tempTree } from '../fixtures/model-store.js'
import { oipChecker } from '../fixtures/oip-schemas.js'
import { onnxGraphs, type OnnxGraphName, type OnnxGraphs } from '../fixtures/onnx-graphs.js'
import { spawnTs } from '../fixtures/spawn.js'

type Json = any

/** A version's files: the graph, and metadata.json / profile.json when given. */
type VersionFiles = Readonly<{ graph: OnnxGraphName | Buffer; metadata?: unknown; profile?: string }>

/** Writes `<model>/manifest.json` and each version's files into `root`. */
const place = async (graphs: OnnxGraphs, root: string, model: string, versions: Readonly<Record<string, VersionFiles>>, defaultVersion = '1') => {
  for (const [version, files] of Object.entries(versions)) {
    const dir = join(root, model, version)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, 'model.onnx'), Buffer.isBuffer(files.graph) ? files.graph : graphs.bytes(files.graph))
    if (files.metadata !== undefined) await writeFile(join(dir, 'metadata.json'), JSON.stringify(files.metadata))
    if (files.profile !== undefined) await writeFile(join(dir, 'profile.json'), files.profile)
  }
  await writeFile(join(root, model, 'manifest.json'), JSON.stringify({ default_version: defaultVersion, versions: Object.keys(versions) }))
}

/** `post` sends a body as JSON, or a string as it is (JSON that JSON.stringify cannot write). */
type Setup = Running & {
  root: string
  post(path: string, body: unknown): Promise<{ status: number; type: string | null; body: Json }>
  get(path: string): Promise<Json>
}

const serve = async (t: Test, root: string, env: Env = {}): Promise<Setup> => {
  const running = await startApp(t, { SVC_MODEL_STORE: root, ...env })
  const post = async (path: string, body: unknown) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    const res = await fetch(running.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Json }
  }
  const get = async (path: string) => (await fetch(running.base + path)).json()
  return { ...running, root, post, get }
}

const IRIS_FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']
const IRIS_METADATA = { features: IRIS_FEATURES }
const ROWS = [
  [5.1, 3.5, 1.4, 0.2],
  [6.7, 3.0, 5.2, 2.3],
  [5.9, 2.8, 4.3, 1.3],
]
const named = (rows: readonly (readonly number[])[], names = IRIS_FEATURES) => rows.map((row) => Object.fromEntries(names.map((n, j) => [n, row[j]])))

const softmax = (scores: readonly number[]): number[] => {
  const max = Math.max(...scores)
  const exps = scores.map((s) => Math.exp(s - max))
  const sum = exps.reduce((a, b) => a + b, 0)
  return exps.map((e) => e / sum)
}
const argmax = (values: readonly number[]): number => values.indexOf(Math.max(...values))

type Linear = { coefficients: number[][]; intercepts: number[]; classes: (string | number)[] }
/** scores[c] = intercepts[c] + Σ coefficients[c][f] · x[f], in float32 as the graph adds. */
const linearScores = (p: Linear, x: readonly number[]): number[] =>
  p.intercepts.map((b, c) => (p.coefficients[c] as number[]).reduce((sum, w, f) => Math.fround(sum + Math.fround(w * Math.fround(x[f] as number))), b))

type TreeNode = { node: number; feature?: number; threshold?: number; true?: number; false?: number; weights?: number[]; value?: number }
/** The leaf `x` reaches: BRANCH_LEQ, so x <= threshold goes the `true` way. */
const leaf = (tree: readonly TreeNode[], x: readonly number[]): TreeNode => {
  let node = tree[0] as TreeNode
  while (node.feature !== undefined) {
    const next = Math.fround(x[node.feature] as number) <= (node.threshold as number) ? node.true : node.false
    node = tree.find((n) => n.node === next) as TreeNode
  }
  return node
}

/** Checks an OIP classifier response against expected probabilities per row, to float32 precision. */
const checkClassifier = (t: Test, body: Json, expected: readonly number[][], classes: readonly string[], names: readonly [string, string]) => {
  const [label, probabilities] = body.outputs
  t.same({ name: label.name, datatype: label.datatype, shape: label.shape }, { name: names[0], datatype: 'BYTES', shape: [expected.length] })
  t.same(
    label.data,
    expected.map((row) => classes[argmax(row)]),
    'the label is the most probable class',
  )
  t.same(
    { name: probabilities.name, datatype: probabilities.datatype, shape: probabilities.shape },
    { name: names[1], datatype: 'FP64', shape: [expected.length, classes.length] },
  )
  for (const [k, p] of expected.flat().entries()) t.ok(Math.abs(probabilities.data[k] - p) < 1e-6, `probability ${k}: ${probabilities.data[k]} ≈ ${p}`)
  for (let r = 0; r < expected.length; r++) {
    const sum = (probabilities.data as number[]).slice(r * classes.length, (r + 1) * classes.length).reduce((a, b) => a + b, 0)
    t.ok(Math.abs(sum - 1) < 1e-12, `row ${r} sums to 1`)
  }
}

t.test('linear classifiers, with and without ZipMap, integer and string labels, answer softmax(scores) through both APIs', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  const cases: ReadonlyArray<readonly [OnnxGraphName, string]> = [
    ['linear', 'int'],
    ['linear-zipmap', 'int-zipmap'],
    ['linear-strings', 'str'],
    ['linear-strings-zipmap', 'str-zipmap'],
  ]
  for (const [graph, model] of cases) await place(graphs, root, model, { '1': { graph, metadata: IRIS_METADATA } })
  const s = await serve(t, root)
  for (const [graph, model] of cases) {
    const p = graphs.params(graph) as Linear
    const classes = p.classes.map(String)
    const expected = ROWS.map((x) => softmax(linearScores(p, x)))
    const v2 = await s.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', datatype: 'FP32', shape: [3, 4], data: ROWS }] })
    t.equal(v2.status, 200, `${model}: /v2 answers`)
    t.match(v2.body, { model_name: model, model_version: '1' })
    checkClassifier(t, v2.body, expected, classes, ['label', 'probabilities'])
    const v1 = await s.post('/api/v1/predict', { model, instances: named(ROWS) })
    t.equal(v1.status, 200, `${model}: /api/v1 answers`)
    t.same(v1.body.outputs, v2.body.outputs, `${model}: named rows answer what the tensor does`)
    const flat = await s.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', datatype: 'FP64', shape: [3, 4], data: ROWS.flat() }] })
    t.same(flat.body.outputs, v2.body.outputs, `${model}: flat FP64 data answers what nested FP32 does`)
  }
  const metadata = await s.get('/v2/models/str-zipmap')
  t.same(metadata, {
    name: 'str-zipmap',
    versions: ['1'],
    platform: 'onnxruntime',
    inputs: [{ name: 'X', datatype: 'FP32', shape: [-1, 4] }],
    outputs: [
      { name: 'label', datatype: 'BYTES', shape: [-1] },
      { name: 'probabilities', datatype: 'FP64', shape: [-1, 3] },
    ],
  })
  const detail = await s.get('/api/v1/models/str-zipmap')
  t.match(detail, { platform: 'onnxruntime', state: 'READY', type: 'onnx', task: 'classification', classes: ['setosa', 'versicolor', 'virginica'] })
  t.same(
    detail.inputs.map((input: Json) => [input.name, input.datatype, input.type]),
    IRIS_FEATURES.map((name) => [name, 'FP32', 'numerical']),
  )
  t.equal(detail.drift.status, 'no_reference', 'served without a profile, its drift says so')
})

t.test('an ONNX model answers the outputs asked for only, in that order, on both APIs; an unknown name is a 400 naming it', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'str', { '1': { graph: 'linear-strings-zipmap', metadata: IRIS_METADATA } })
  const s = await serve(t, root)
  const check = oipChecker()
  const tensor = { inputs: [{ name: 'X', datatype: 'FP32', shape: [3, 4], data: ROWS }] }
  const full = await s.post('/v2/models/str/infer', { id: 'o', ...tensor })
  const [label, probabilities] = full.body.outputs
  for (const [path, body] of [
    ['/v2/models/str/infer', { id: 'o', ...tensor }],
    ['/api/v1/predict', { model: 'str', id: 'o', ...tensor }],
  ] as const) {
    const request = { ...body, outputs: [{ name: 'probabilities' }, { name: 'label' }] }
    t.equal(check('inference_request', request), undefined, `${path}: the request fits OIP`)
    const both = await s.post(path, request)
    t.equal(check('inference_response', both.body), undefined, `${path}: the response fits OIP`)
    t.same(both.body, { ...full.body, outputs: [probabilities, label] }, `${path}: in the order asked`)
    t.same((await s.post(path, { ...body, outputs: [{ name: 'probabilities' }] })).body.outputs, [probabilities], `${path}: one alone`)
    const unknown = await s.post(path, { ...body, outputs: [{ name: 'output_probability' }] })
    t.equal(unknown.status, 400)
    t.equal(check('inference_error_response', unknown.body), undefined)
    t.equal(unknown.body.error, 'output output_probability is not an output of model str; its outputs are label, probabilities')
  }
})

t.test('inputs by name (one [N, 1] tensor per feature) need no metadata', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'multi', { '1': { graph: 'multi-input' } })
  const s = await serve(t, root)
  const p = graphs.params('multi-input') as Linear
  const expected = ROWS.map((x) => softmax(linearScores(p, x)))
  const inputs = IRIS_FEATURES.map((name, j) => ({ name, datatype: 'FP32', shape: [3, 1], data: ROWS.map((row) => [row[j]]) }))
  const v2 = await s.post('/v2/models/multi/infer', { inputs })
  checkClassifier(t, v2.body, expected, ['0', '1', '2'], ['label', 'probabilities'])
  t.same((await s.post('/api/v1/predict', { model: 'multi', instances: named(ROWS) })).body.outputs, v2.body.outputs)
  t.same(
    (await s.get('/v2/models/multi')).inputs,
    IRIS_FEATURES.map((name) => ({ name, datatype: 'FP32', shape: [-1, 1] })),
  )
})

t.test('a bare graph of one [N, F] input serves without metadata.json: columns <input>_0 …, classes 0 … C−1 where it names none', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  for (const [model, graph] of [
    ['reg', 'tree-regressor'],
    ['lin', 'linear'],
    ['lin-zipmap', 'linear-zipmap'],
    ['dense', 'dense'],
    ['argmax', 'dense-argmax'],
  ] as const)
    await place(graphs, root, model, { '1': { graph } })
  const s = await serve(t, root)
  const columns = ['X_0', 'X_1', 'X_2', 'X_3']
  for (const model of ['reg', 'lin', 'lin-zipmap', 'dense', 'argmax']) {
    t.match(await s.get(`/api/v1/models/${model}`), { state: 'READY', type: 'onnx', drift: { status: 'no_reference' } }, `${model}: READY`)
    t.same(
      (await s.get(`/api/v1/models/${model}`)).inputs.map((input: Json) => [input.name, input.datatype, input.type]),
      columns.map((name) => [name, 'FP32', 'numerical']),
      `${model}: the features are the columns of X, by index`,
    )
    t.same((await s.get(`/v2/models/${model}`)).inputs, [{ name: 'X', datatype: 'FP32', shape: [-1, 4] }], `${model}: /v2 shows the graph's input`)
  }

  // A regressor: the leaf sums, through both APIs.
  const regressor = graphs.params('tree-regressor') as { trees: TreeNode[][]; base_value: number }
  const regRows = [
    [0.5, 0, 0, -1],
    [2, -1, 0, 1],
  ]
  const values = regRows.map((x) => regressor.trees.reduce((sum, tree) => sum + (leaf(tree, x).value as number), regressor.base_value))
  const reg = await s.post('/v2/models/reg/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [2, 4], data: regRows }] })
  t.equal(reg.status, 200, 'the bare regressor answers /v2')
  t.same(reg.body.outputs, [{ name: 'variable', datatype: 'FP64', shape: [2], data: values }])
  const regV1 = await s.post('/api/v1/predict', { model: 'reg', instances: named(regRows, columns) })
  t.equal(regV1.status, 200, 'and /api/v1, by the column names')
  t.same(regV1.body.outputs, reg.body.outputs)

  // Classifiers: the graph's integer labels as text; a network naming none answers 0 … C−1.
  const linear = graphs.params('linear') as Linear
  const dense = graphs.params('dense-argmax') as { w1: number[][]; b1: number[]; w2: number[][]; b2: number[] }
  const denseExpected = ROWS.map((x) => {
    const hidden = dense.b1.map((b, h) =>
      Math.max(
        0,
        x.reduce((sum, v, f) => sum + v * ((dense.w1[f] as number[])[h] as number), b),
      ),
    )
    return softmax(dense.b2.map((b, c) => hidden.reduce((sum, v, h) => sum + v * ((dense.w2[h] as number[])[c] as number), b)))
  })
  const cases = [
    ['lin', ROWS.map((x) => softmax(linearScores(linear, x)))],
    ['lin-zipmap', ROWS.map((x) => softmax(linearScores(linear, x)))],
    ['dense', denseExpected],
    ['argmax', denseExpected],
  ] as const
  for (const [model, expected] of cases) {
    t.match(await s.get(`/api/v1/models/${model}`), { task: 'classification', classes: ['0', '1', '2'] }, `${model}: classes 0, 1, 2`)
    const v2 = await s.post(`/v2/models/${model}/infer`, { inputs: [{ name: 'X', datatype: 'FP32', shape: [3, 4], data: ROWS }] })
    t.equal(v2.status, 200, `${model}: /v2 answers`)
    checkClassifier(t, v2.body, expected, ['0', '1', '2'], ['label', 'probabilities'])
    const v1 = await s.post('/api/v1/predict', { model, instances: named(ROWS, columns) })
    t.equal(v1.status, 200, `${model}: /api/v1 answers`)
    t.same(v1.body.outputs, v2.body.outputs, `${model}: named rows answer what the tensor does`)
  }
})

t.test('a tensor the graph does not take is a 400 problem saying what it takes: its name, its shape, its datatype', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'wine-rf', { '1': { graph: 'linear-zipmap', metadata: IRIS_METADATA } })
  await place(graphs, root, 'typed', { '1': { graph: 'typed-inputs' } })
  await place(graphs, root, 'colours', { '1': { graph: 'string-input', metadata: { levels: { colour: ['red', 'green', 'blue'] } } } })
  const s = await serve(t, root)
  const TYPED = [
    { name: 'count', datatype: 'INT64', shape: [2, 1], data: [3, -2] },
    { name: 'ratio', datatype: 'FP64', shape: [2, 1], data: [0.5, 1.25] },
    { name: 'flag', datatype: 'BOOL', shape: [2, 1], data: [true, false] },
  ]
  const typed = (change: Readonly<Record<string, unknown>>) => TYPED.map((tensor) => ({ ...tensor, ...(change[tensor.name] as object) }))
  const cases: ReadonlyArray<readonly [string, string, unknown, string, string]> = [
    [
      'the right name, the wrong shape',
      'wine-rf',
      [{ name: 'X', datatype: 'FP32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }],
      'X',
      'input X takes shape [-1, 4]; got [2, 3]',
    ],
    [
      'the right shape, a name the graph does not have',
      'wine-rf',
      [{ name: 'input', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
      'input',
      'input input is not an input of model wine-rf; its inputs are X (FP32, shape [-1, 4])',
    ],
    [
      'a feature name where the graph takes one tensor',
      'wine-rf',
      [{ name: 'sepal_length', datatype: 'FP32', shape: [1], data: [1] }],
      'sepal_length',
      'input sepal_length is not an input of model wine-rf; its inputs are X (FP32, shape [-1, 4])',
    ],
    [
      'BOOL for an FP32 input',
      'wine-rf',
      [{ name: 'X', datatype: 'BOOL', shape: [1, 4], data: [true, false, true, false] }],
      'X',
      'input X takes FP32, FP64, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BOOL',
    ],
    [
      'BYTES for an FP32 input',
      'wine-rf',
      [{ name: 'X', datatype: 'BYTES', shape: [1, 4], data: ['a', 'b', 'c', 'd'] }],
      'X',
      'input X takes FP32, FP64, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BYTES',
    ],
    [
      'two columns for a one-column input',
      'typed',
      typed({ count: { shape: [2, 2], data: [3, 3, -2, -2] } }),
      'count',
      'input count takes shape [-1, 1] or [-1]; got [2, 2]',
    ],
    [
      'FP64 for an INT64 input',
      'typed',
      typed({ count: { datatype: 'FP64' } }),
      'count',
      'input count takes INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got FP64',
    ],
    ['INT64 for a BOOL input', 'typed', typed({ flag: { datatype: 'INT64', data: [1, 0] } }), 'flag', 'input flag takes BOOL; got INT64'],
    [
      'an input the graph does not have, beside its own',
      'typed',
      [...TYPED, { name: 'counts', datatype: 'INT64', shape: [2], data: [1, 2] }],
      'counts',
      'input counts is not an input of model typed; its inputs are count (INT64, shape [-1, 1]), ratio (FP64, shape [-1, 1]), flag (BOOL, shape [-1, 1])',
    ],
    [
      'a number for a string input',
      'colours',
      [
        { name: 'colour', datatype: 'FP32', shape: [1, 1], data: [0] },
        { name: 'size', datatype: 'FP32', shape: [1], data: [2] },
      ],
      'colour',
      'input colour takes BYTES, one of red, green, blue; got FP32',
    ],
  ]
  for (const [what, model, inputs, input, error] of cases) {
    for (const [path, body] of [
      [`/v2/models/${model}/infer`, { inputs }],
      ['/api/v1/predict', { model, inputs }],
    ] as const) {
      const res = await s.post(path, body)
      t.equal(res.status, 400, `${what}: 400 from ${path}`)
      t.equal(res.type, 'application/problem+json', `${what}: problem+json`)
      t.match(res.body, { type: 'urn:svc:problem:invalid-input', status: 400, detail: error, error, input }, `${what}: ${res.body.detail}`)
    }
  }
})

t.test('tree ensembles: a classifier with post_transform NONE answers leaf-weight shares, a regressor the leaf sum', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'trees', { '1': { graph: 'tree-classifier', metadata: IRIS_METADATA } })
  await place(graphs, root, 'reg', { '1': { graph: 'tree-regressor', metadata: { features: ['a', 'b', 'c', 'd'] } } })
  const s = await serve(t, root)
  const classifier = graphs.params('tree-classifier') as { trees: TreeNode[][] }
  // Rows that reach every leaf of both trees.
  const rows = [
    [5.0, 3.0, 1.0, 0.5],
    [6.0, 3.0, 4.0, 1.5],
    [6.0, 3.0, 5.0, 2.0],
    [5.5, 3.0, 2.5, 1.75],
  ]
  const expected = rows.map((x) => {
    const scores = [0, 0, 0]
    for (const tree of classifier.trees) for (const [c, w] of (leaf(tree, x).weights as number[]).entries()) scores[c] = (scores[c] as number) + w
    const sum = scores.reduce((a, b) => a + b, 0)
    return scores.map((v) => v / sum)
  })
  const res = await s.post('/v2/models/trees/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [4, 4], data: rows }] })
  t.equal(res.status, 200)
  checkClassifier(t, res.body, expected, ['0', '1', '2'], ['label', 'probabilities'])

  const regressor = graphs.params('tree-regressor') as { trees: TreeNode[][]; base_value: number }
  const regRows = [
    [0.5, 0, 0, -1],
    [2, -1, 0, 1],
    [2, 0, 0, 0],
  ]
  const values = regRows.map((x) => regressor.trees.reduce((sum, tree) => sum + (leaf(tree, x).value as number), regressor.base_value))
  const reg = await s.post('/api/v1/predict', { model: 'reg', instances: named(regRows, ['a', 'b', 'c', 'd']) })
  t.equal(reg.status, 200)
  t.same(reg.body.outputs, [{ name: 'variable', datatype: 'FP64', shape: [3], data: values }], `leaf sums ${values.join(', ')}`)
})

t.test('a dense network takes its classes from metadata.json', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  const classes = ['low', 'mid', 'high']
  await place(graphs, root, 'dense', { '1': { graph: 'dense', metadata: { features: ['a', 'b', 'c', 'd'], classes, type: 'mlp' } } })
  const s = await serve(t, root)
  const p = graphs.params('dense') as { w1: number[][]; b1: number[]; w2: number[][]; b2: number[] }
  const expected = ROWS.map((x) => {
    const hidden = p.b1.map((b, h) =>
      Math.max(
        0,
        x.reduce((sum, v, f) => sum + v * ((p.w1[f] as number[])[h] as number), b),
      ),
    )
    return softmax(p.b2.map((b, c) => hidden.reduce((sum, v, h) => sum + v * ((p.w2[h] as number[])[c] as number), b)))
  })
  const res = await s.post('/v2/models/dense/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [3, 4], data: ROWS }] })
  t.equal(res.status, 200)
  // The graph computes in float32: 1e-6 holds for probabilities of this size.
  checkClassifier(t, res.body, expected, classes, ['label', 'probabilities'])
  t.match(await s.get('/api/v1/models/dense'), { type: 'mlp', classes })
})

t.test('string, whole-number, double and flag inputs: what the graph takes, and 400s that name the input', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'colours', { '1': { graph: 'string-input', metadata: { levels: { colour: ['red', 'green', 'blue'] } } } })
  await place(graphs, root, 'typed', { '1': { graph: 'typed-inputs' } })
  const s = await serve(t, root)

  const sp = graphs.params('string-input') as { encoding: Record<string, number>; coefficients: number[]; intercept: number }
  const colourRows = [
    { colour: 'red', size: 2 },
    { colour: 'blue', size: -1 },
  ]
  const colourValues = colourRows.map(
    (row) => sp.intercept + (sp.coefficients[0] as number) * (sp.encoding[row.colour] as number) + (sp.coefficients[1] as number) * row.size,
  )
  const colours = await s.post('/api/v1/predict', { model: 'colours', instances: colourRows })
  t.same(colours.body.outputs, [{ name: 'variable', datatype: 'FP64', shape: [2], data: colourValues }])
  const bytes = await s.post('/v2/models/colours/infer', {
    inputs: [
      { name: 'colour', datatype: 'BYTES', shape: [2, 1], data: ['red', 'blue'] },
      { name: 'size', datatype: 'FP32', shape: [2], data: [2, -1] },
    ],
  })
  t.same(bytes.body.outputs, colours.body.outputs, 'BYTES tensors feed a string input')
  const unknown = await s.post('/api/v1/predict', { model: 'colours', instances: [{ colour: 'mauve', size: 1 }] })
  t.equal(unknown.status, 400)
  t.match(unknown.body, { type: 'urn:svc:problem:invalid-input', input: 'colour', error: /colour must be one of red, green, blue/ })

  const tp = graphs.params('typed-inputs') as { coefficients: number[]; intercept: number }
  const typedRows = [
    { count: 3, ratio: 0.5, flag: true },
    { count: -2, ratio: 1.25, flag: false },
  ]
  const typedValues = typedRows.map(
    (row) =>
      tp.intercept +
      (tp.coefficients[0] as number) * row.count +
      (tp.coefficients[1] as number) * row.ratio +
      (tp.coefficients[2] as number) * (row.flag ? 1 : 0),
  )
  const typed = await s.post('/api/v1/predict', { model: 'typed', instances: typedRows })
  t.same(typed.body.outputs, [{ name: 'variable', datatype: 'FP64', shape: [2], data: typedValues }], `${typedValues.join(', ')}`)
  const tensors = await s.post('/v2/models/typed/infer', {
    inputs: [
      { name: 'count', datatype: 'INT64', shape: [2, 1], data: [3, -2] },
      { name: 'ratio', datatype: 'FP64', shape: [2, 1], data: [0.5, 1.25] },
      { name: 'flag', datatype: 'BOOL', shape: [2, 1], data: [true, false] },
    ],
  })
  t.same(tensors.body.outputs, typed.body.outputs, 'INT64, FP64 and BOOL tensors feed the graph as named rows do')
  t.same((await s.get('/v2/models/typed')).inputs, [
    { name: 'count', datatype: 'INT64', shape: [-1, 1] },
    { name: 'ratio', datatype: 'FP64', shape: [-1, 1] },
    { name: 'flag', datatype: 'BOOL', shape: [-1, 1] },
  ])

  const refused: ReadonlyArray<readonly [string, unknown, string, RegExp]> = [
    ['a fraction for an INT64 input', { instances: [{ count: 1.5, ratio: 0, flag: true }] }, 'count', /count must be a whole number .*INT64/],
    ['a number for a BOOL input', { instances: [{ count: 1, ratio: 0, flag: 1 }] }, 'flag', /flag must be true or false/],
    [
      'FP64 for an INT64 input',
      {
        inputs: [
          { name: 'count', datatype: 'FP64', shape: [1], data: [1] },
          { name: 'ratio', datatype: 'FP64', shape: [1], data: [1] },
          { name: 'flag', datatype: 'BOOL', shape: [1], data: [true] },
        ],
      },
      'count',
      /^input count takes INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got FP64$/,
    ],
    [
      'BOOL for a double input',
      {
        inputs: [
          { name: 'count', datatype: 'INT64', shape: [1], data: [1] },
          { name: 'ratio', datatype: 'BOOL', shape: [1], data: [true] },
          { name: 'flag', datatype: 'BOOL', shape: [1], data: [true] },
        ],
      },
      'ratio',
      /^input ratio takes FP64, FP32, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16 or UINT8; got BOOL$/,
    ],
    [
      'a number as BOOL data',
      { inputs: [{ name: 'flag', datatype: 'BOOL', shape: [1], data: [1] }] },
      'flag',
      /input flag: data\[0\] must be true or false \(datatype BOOL\)/,
    ],
    ['Infinity (1e999 in JSON)', '{"model":"typed","instances":[{"count":1,"ratio":1e999,"flag":true}]}', 'ratio', /ratio must be a finite number/],
    ['-Infinity', '{"model":"typed","instances":[{"count":1,"ratio":-1e999,"flag":true}]}', 'ratio', /ratio must be a finite number/],
  ]
  for (const [what, body, input, error] of refused) {
    const res = await s.post('/api/v1/predict', typeof body === 'string' ? body : { model: 'typed', ...(body as object) })
    t.equal(res.status, 400, `${what}: 400`)
    t.match(res.body, { type: 'urn:svc:problem:invalid-input', input, error }, what)
  }
})

t.test('requests a graph cannot take are 400s naming the input, never 500s', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'lin', { '1': { graph: 'linear-zipmap', metadata: IRIS_METADATA } })
  const s = await serve(t, root, { SVC_MAX_BATCH: '64' })
  const cases: ReadonlyArray<readonly [string, unknown, string | undefined, RegExp]> = [
    ['three columns for four', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }] }, 'X', /takes shape \[-1, 4\]; got \[1, 3\]/],
    ['strings for floats', { inputs: [{ name: 'X', datatype: 'BYTES', shape: [1, 4], data: ['a', 'b', 'c', 'd'] }] }, 'X', /; got BYTES$/],
    [
      'a value past float32',
      { inputs: [{ name: 'X', datatype: 'FP64', shape: [1, 4], data: [1, 2, 3, 1e39] }] },
      'X',
      /data\[3\] is 1e\+39; the model takes a number below 2\^128 in magnitude \(FP32\)/,
    ],
    [
      'an unknown input',
      { inputs: [{ name: 'sepal_length', datatype: 'FP32', shape: [1], data: [1] }] },
      'sepal_length',
      /its inputs are X \(FP32, shape \[-1, 4\]\)$/,
    ],
    ['too many rows', { inputs: [{ name: 'X', datatype: 'FP32', shape: [65, 4], data: new Array(260).fill(1) }] }, 'X', /at most 64/],
  ]
  for (const [what, body, input, error] of cases) {
    const res = await s.post('/v2/models/lin/infer', body)
    t.equal(res.status, 400, `${what}: 400`)
    t.match(res.body, { error, ...(input === undefined ? {} : { input }) }, what)
  }
  const v1 = await s.post('/api/v1/predict', { model: 'lin', instances: [{ sepal_length: 1, sepal_width: 2, petal_length: 3 }] })
  t.match(v1.body, { status: 400, input: 'petal_width', error: /petal_width is missing/ })
  const nan = await s.post('/api/v1/predict', { model: 'lin', instances: [{ sepal_length: 1, sepal_width: 2, petal_length: 3, petal_width: Number.NaN }] })
  t.match(nan.body, { status: 400, input: 'petal_width' }, 'NaN arrives as null: a missing value, refused')
  const scrape = await (await fetch(`${s.base}/metrics`)).text()
  const outcome = (name: string) =>
    sample(scrape, 'svc_model_prediction_requests_total', { model: 'lin', version: '1', outcome: name, environment: 'dev' }) ?? Number.NaN
  t.equal(outcome('client_error'), cases.length + 2, 'each refusal counted as the client’s')
  t.equal(outcome('server_error'), 0, 'none as the server’s')
})

t.test('a broken version is UNAVAILABLE with a reason, every other model keeps serving, and no native detail leaks', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  const full = graphs.bytes('linear-zipmap')
  await place(graphs, root, 'good', { '1': { graph: 'linear-zipmap', metadata: IRIS_METADATA } })
  await place(graphs, root, 'cut', { '1': { graph: full.subarray(0, Math.floor(full.length / 2)), metadata: IRIS_METADATA } })
  await place(graphs, root, 'noise', { '1': { graph: Buffer.from('this is not a model at all, only text') } })
  await place(graphs, root, 'mystery', { '1': { graph: 'unknown-operator', metadata: { features: ['a', 'b', 'c', 'd'] } } })
  await place(graphs, root, 'unmapped', { '1': { graph: 'linear', metadata: { features: ['a', 'b', 'c'] } } })
  await place(graphs, root, 'unnamed', { '1': { graph: 'scores' } })
  await place(graphs, root, 'nolevels', { '1': { graph: 'string-input' } })
  await place(graphs, root, 'badmeta', { '1': { graph: 'linear', metadata: { features: IRIS_FEATURES, clases: ['a'] } } })
  await place(graphs, root, 'big', { '1': { graph: 'forest', metadata: { features: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] } } })
  const cap = graphs.bytes('forest').length - 1
  const s = await serve(t, root, { SVC_MODEL_MAX_BYTES: String(cap) })
  const reasons: Record<string, RegExp> = {
    cut: /^default version 1: cut\/1\/model\.onnx: model: field 7 at byte \d+ holds \d+ bytes, \d+ remain$/,
    noise: /^default version 1: noise\/1\/model\.onnx: model/,
    mystery: /^default version 1: mystery\/1\/model\.onnx: onnxruntime cannot load the graph: .*com\.example\.private:Mystery/,
    unmapped: /^default version 1: unmapped\/1\/model\.onnx: metadata\.json features: names 3 columns; input X has 4$/,
    unnamed:
      /^default version 1: unnamed\/1\/model\.onnx: metadata\.json features: required, to name the columns of input X \[\?, \?\], whose number the graph leaves free$/,
    nolevels: /input colour takes strings: list them in metadata\.json levels\.colour, or profile the column with svc profile/,
    badmeta: /metadata\.json clases: is not a member of metadata\.json/,
    big: /^default version 1: big\/1\/model\.onnx: is larger than the model store allows$/,
  }
  const { models } = await s.get('/api/v1/models')
  for (const [name, reason] of Object.entries(reasons)) {
    const entry = models.find((m: Json) => m.name === name)
    t.match(entry, { state: 'UNAVAILABLE', platform: 'onnxruntime', reason }, `${name}: ${entry.reason}`)
    t.notMatch(entry.reason, /\.cc:|\.h:|\n\s+at\s/, `${name}: no source location or stack`)
    const res = await s.post(`/v2/models/${name}/infer`, { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }] })
    t.equal(res.status, 503, `${name}: 503 MODEL_NOT_READY`)
  }
  t.match(
    models.find((m: Json) => m.name === 'good'),
    { state: 'READY' },
  )
  const good = await s.post('/v2/models/good/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }] })
  t.equal(good.status, 200, 'the good model serves beside the broken ones')
  const logged = s.lines().filter((line) => line.event === 'model_unavailable')
  t.equal(logged.length, Object.keys(reasons).length, 'each failure logged once')
  for (const line of logged) t.notMatch(JSON.stringify(line), /\.cc:\d|onnxruntime_src/, 'no native source path in the log')
})

t.test('hot reload: a broken new version leaves the old one serving; a good one swaps in under load without a failed request', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  await place(graphs, root, 'lin', { '1': { graph: 'linear-zipmap', metadata: IRIS_METADATA } })
  const s = await serve(t, root)
  const body = { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] }
  const before = await s.post('/v2/models/lin/infer', body)
  t.equal(before.status, 200)

  await place(
    graphs,
    root,
    'lin',
    { '1': { graph: 'linear-zipmap', metadata: IRIS_METADATA }, '2': { graph: 'unknown-operator', metadata: { features: IRIS_FEATURES } } },
    '2',
  )
  await s.app.models.reload()
  t.match(s.app.models.entry('lin'), { state: 'READY', defaultVersion: '1', versions: ['1'] }, 'the broken default is not taken up')
  t.match(
    s.lines().find((l) => l.event === 'model_reload_failed'),
    { model: 'lin', reason: /onnxruntime cannot load the graph/ },
  )
  t.same((await s.post('/v2/models/lin/infer', body)).body.outputs, before.body.outputs, 'version 1 still answers')

  // Versions 2 and 3 alternate as the default while requests run: every request is answered by one of them.
  let isLoading = true
  const answered: number[] = []
  const load = (async () => {
    while (isLoading) {
      const results = await Promise.all(Array.from({ length: 8 }, () => s.post('/v2/models/lin/infer', body)))
      for (const r of results) answered.push(r.status)
    }
  })()
  for (let i = 0; i < 6; i++) {
    const graph: OnnxGraphName = i % 2 === 0 ? 'linear-strings-zipmap' : 'linear-zipmap'
    await place(graphs, root, 'lin', { [String(2 + (i % 2))]: { graph, metadata: IRIS_METADATA } }, String(2 + (i % 2)))
    await s.app.models.reload()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  isLoading = false
  await load
  t.ok(answered.length >= 8, `${answered.length} requests during the swaps`)
  t.same(
    answered.filter((status) => status !== 200),
    [],
    'no request failed while versions were swapped and released',
  )
  t.equal(s.lines().filter((l) => l.event === 'model_dispose_failed').length, 0, 'every replaced session was released cleanly')
})

t.test('a store without ONNX models never loads onnxruntime; one with them does', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  // /proc/<pid>/maps lists every shared library a process has mapped.
  const maps = async (store: string): Promise<string> => {
    const child = spawnTs('bin/svc.ts', [], { PORT: '0', LOG_FORMAT: 'json', SVC_DRIFT_ENABLED: 'false', SVC_MODEL_STORE: store })
    t.teardown(() => child.proc.kill('SIGKILL'))
    await child.waitForEvent('application_started')
    const text = await readFile(`/proc/${child.proc.pid}/maps`, 'utf8')
    child.proc.kill('SIGTERM')
    await child.exited
    return text
  }
  const iris = { 'iris/manifest.json': '{"default_version":"1"}', 'iris/1/model.json': artifactBytes('iris') }
  t.notMatch(await maps(await tempTree(t, iris)), /onnxruntime/, 'kernel models only: the native library is not mapped')
  const withOnnx = await tempTree(t, iris)
  await place(graphs, withOnnx, 'lin', { '1': { graph: 'linear-zipmap', metadata: IRIS_METADATA } })
  t.match(await maps(withOnnx), /libonnxruntime/, 'an ONNX model maps it')
})

t.test('an HTTP(S) artifact server serves ONNX versions as a directory does, optional files included', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, { 'index.json': JSON.stringify({ models: ['lin'] }) })
  await place(graphs, root, 'lin', { '1': { graph: 'linear-strings-zipmap', metadata: IRIS_METADATA } })
  const server = await artifactServer(t, root)
  const s = await serve(t, server.url, { SVC_MODEL_RELOAD_INTERVAL_S: '0' })
  const res = await s.post('/v2/models/lin/infer', { inputs: [{ name: 'X', datatype: 'FP32', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] })
  t.equal(res.status, 200)
  t.same(res.body.outputs[0].data, ['setosa'])
  t.ok(
    server.received.some((r) => r.url === '/models/lin/1/profile.json'),
    'the absent profile was asked for, and its 404 taken as absent',
  )
  t.match(await s.get('/api/v1/models/lin'), { platform: 'onnxruntime', drift: { status: 'no_reference' } })
})
