// buildProfile over small tables whose profiles are worked out by hand, and every way it refuses one.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import type { ModelVersion, Prediction, Predictor } from '../../../lib/models/runtime.js'
import { kernelRuntime } from '../../../lib/models/kernel/runtime.js'
import { buildProfile, type ProfileOptions, type ProfiledColumns } from '../../../lib/tools/profile/build.js'
import { ProfileInputError } from '../../../lib/tools/profile/errors.js'
import type { Format } from '../../../lib/tools/profile/table.js'
import { artifactBytes } from '../../fixtures/models.js'
import { rejectionOf } from '../../fixtures/rejection.js'

const DIR = t.testdir()
let files = 0
const write = (name: string, content: string): string => {
  const path = join(DIR, `${files++}-${name}`)
  writeFileSync(path, content)
  return path
}

/** Options to profile a new file holding `content`, named `name` in messages. */
const options = (name: string, content: string, columns: ProfiledColumns, overrides: Partial<ProfileOptions> = {}): ProfileOptions => ({
  source: { path: write(name, content), file: name, format: (name.endsWith('.csv') ? 'csv' : 'ndjson') as Format, delimiter: ',' },
  columns,
  bins: 2,
  maxLevels: 1000,
  dropMissing: false,
  ...overrides,
})

const ALL: ProfiledColumns = { kind: 'all', exclude: [] }

const failure = (promise: Promise<unknown>): Promise<ProfileInputError> => rejectionOf<ProfileInputError>(promise)

const TABLE = 'id,x,colour,flag\n1,1.5,red,yes\n2,-2,blue,no\n3,3e0,red,yes\n4,0.5,green,yes\n'

t.test('every column, types inferred: quantile edges and level shares as worked out by hand', async (t) => {
  // x sorted is -2, 0.5, 1.5, 3: with 2 bins the edge is the value at position 2, 1.5, and each
  // side holds 2 of 4 rows. Levels are sorted: blue, green, red.
  const { profile, dropped, columns } = await buildProfile(options('data.csv', TABLE, { kind: 'all', exclude: ['id'] }))
  t.same(profile, {
    format_version: 1,
    rows: 4,
    features: [
      { name: 'x', type: 'numerical', edges: [1.5], proportions: [0.5, 0.5], min: -2, max: 3 },
      { name: 'colour', type: 'categorical', levels: ['blue', 'green', 'red'], proportions: [0.25, 0.25, 0.5] },
      { name: 'flag', type: 'categorical', levels: ['no', 'yes'], proportions: [0.25, 0.75] },
    ],
  })
  t.equal(dropped, 0)
  t.same(columns, [
    { name: 'x', type: 'numerical' },
    { name: 'colour', type: 'categorical' },
    { name: 'flag', type: 'categorical' },
  ])
  t.notOk('predictions' in profile)
})

t.test('--schema: those columns, in that order, typed where it says and inferred elsewhere', async (t) => {
  const listed = {
    kind: 'listed',
    columns: [{ name: 'flag' }, { name: 'x', type: 'categorical' }, { name: 'id', type: 'numerical' }],
  } as const
  const { profile } = await buildProfile(options('data.csv', TABLE, listed))
  t.same(profile.features, [
    { name: 'flag', type: 'categorical', levels: ['no', 'yes'], proportions: [0.25, 0.75] },
    { name: 'x', type: 'categorical', levels: ['-2', '0.5', '1.5', '3e0'], proportions: [0.25, 0.25, 0.25, 0.25] },
    { name: 'id', type: 'numerical', edges: [3], proportions: [0.5, 0.5], min: 1, max: 4 },
  ])
  const typed = await buildProfile(options('data.csv', TABLE, { kind: 'listed', columns: [{ name: 'x', type: 'numerical' }] }, { bins: 4 }))
  t.same(
    typed.profile.features,
    [{ name: 'x', type: 'numerical', edges: [0.5, 1.5, 3], proportions: [0.25, 0.25, 0.25, 0.25], min: -2, max: 3 }],
    'every type given: one pass',
  )
})

t.test('CSV: columns without a name in the header are left out; another delimiter', async (t) => {
  const { profile } = await buildProfile(options('data.csv', ',v\n0,a\n1,a\n', ALL))
  t.same(profile.features, [{ name: 'v', type: 'categorical', levels: ['a'], proportions: [1] }])
  const semicolons = options('data.csv', 'a;b\n1,5;x\n', ALL)
  const { profile: semi } = await buildProfile({ ...semicolons, source: { ...semicolons.source, delimiter: ';' } })
  t.same(semi.features, [
    { name: 'a', type: 'categorical', levels: ['1,5'], proportions: [1] },
    { name: 'b', type: 'categorical', levels: ['x'], proportions: [1] },
  ])
})

t.test('NDJSON: members found on any line, in the order first seen; absent and null are missing', async (t) => {
  const lines = '{"x": 1, "c": "a", "": 5}\n{"c": "b", "x": 2, "extra": null}\n{"x": 3, "c": "a", "extra": "q"}\n'
  const { profile } = await buildProfile(options('data.ndjson', lines, { kind: 'all', exclude: ['extra'] }))
  // x: 1, 2, 3 in 2 bins: the edge is the value at position ⌊3/2⌋ = 1, that is 2.
  t.same(profile.features, [
    { name: 'x', type: 'numerical', edges: [2], proportions: [1 / 3, 2 / 3], min: 1, max: 3 },
    { name: 'c', type: 'categorical', levels: ['a', 'b'], proportions: [2 / 3, 1 / 3] },
  ])
  const error = await failure(buildProfile(options('data.ndjson', lines, ALL)))
  t.equal(error.message, 'data.ndjson:1: extra is missing (--drop-missing leaves out rows with a missing value)')
  const dropping = await buildProfile(options('data.ndjson', lines, ALL, { dropMissing: true }))
  t.same(dropping.profile.rows, 1)
  t.equal(dropping.dropped, 2)
  const listed = await buildProfile(options('data.ndjson', lines, { kind: 'listed', columns: [{ name: 'c' }, { name: 'x' }] }))
  t.same(
    listed.profile.features.map((feature) => feature.type),
    ['categorical', 'numerical'],
  )
})

t.test('missing values stop the run at their line, or leave their rows out', async (t) => {
  const table = 'a,b\n1,x\n,y\n3,\n4,z\n'
  t.equal(
    (await failure(buildProfile(options('train.csv', table, ALL)))).message,
    'train.csv:3: a is missing (--drop-missing leaves out rows with a missing value)',
  )
  const { profile, dropped } = await buildProfile(options('train.csv', table, ALL, { dropMissing: true }))
  t.equal(dropped, 2)
  t.same(profile, {
    format_version: 1,
    rows: 2,
    features: [
      { name: 'a', type: 'numerical', edges: [4], proportions: [0.5, 0.5], min: 1, max: 4 },
      { name: 'b', type: 'categorical', levels: ['x', 'z'], proportions: [0.5, 0.5] },
    ],
  })
  const none = await failure(buildProfile(options('train.csv', 'a,b\n1,\n,2\n', ALL, { dropMissing: true })))
  t.equal(none.message, 'train.csv: every row (2) has a missing value: nothing left to profile')
  t.equal(none.line, undefined)
  const bad = await failure(
    buildProfile(options('train.csv', 'a,b\n,oops\n', { kind: 'listed', columns: [{ name: 'a' }, { name: 'b', type: 'numerical' }] }, { dropMissing: true })),
  )
  t.equal(bad.message, 'train.csv:2: b: "oops" is not a finite number', 'a bad value is refused even in a row left out')
})

t.test('values of the wrong kind are refused at their line', async (t) => {
  const numerical: ProfiledColumns = { kind: 'listed', columns: [{ name: 'x', type: 'numerical' }] }
  const categorical: ProfiledColumns = { kind: 'listed', columns: [{ name: 'c', type: 'categorical' }] }
  const cases: Array<[string, string, ProfiledColumns, string]> = [
    ['train.csv', 'x\n1\n2\nabc\n', numerical, 'train.csv:4: x: "abc" is not a finite number'],
    ['train.csv', 'x\n1e400\n', numerical, 'train.csv:2: x: "1e400" is not a finite number'],
    ['train.ndjson', '{"x":1}\n{"x":"2"}\n', numerical, 'train.ndjson:2: x: "2" is not a finite number'],
    ['train.ndjson', '{"x":1e400}\n', numerical, 'train.ndjson:1: x: Infinity is not a finite number'],
    [
      'train.ndjson',
      '{"x":{"deep":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]}}\n',
      numerical,
      'train.ndjson:1: x: {"deep":[1,2,3,4,5,6,7,8,9,10,11,12,1... is not a finite number',
    ],
    ['train.ndjson', '{"c":"a"}\n{"c":3}\n', categorical, 'train.ndjson:2: c: 3 is not a string'],
    ['train.ndjson', '{"c":"a"}\n{"c":true}\n', ALL, 'train.ndjson:2: c: true is not a string'],
    ['train.csv', 'x,y,x\n1,2,3\n', ALL, 'train.csv:1: column "x" appears twice in the header (fields 1 and 3)'],
    ['train.csv', 'x,y\n1,2\n', { kind: 'listed', columns: [{ name: 'z' }] }, 'train.csv:1: the header has no column "z" (named by --schema)'],
    ['train.csv', 'x,y\n1,2\n', { kind: 'all', exclude: ['z'] }, 'train.csv:1: --exclude names "z", which the header does not have'],
    ['train.ndjson', '{"x":1}\n', { kind: 'all', exclude: ['z'] }, 'train.ndjson: --exclude names "z", a member no line has'],
    ['train.csv', ',x\n1,2\n', { kind: 'all', exclude: ['x'] }, 'train.csv: no column left to profile'],
    ['train.csv', 'x,y\n1,2\n1,2,3\n', ALL, 'train.csv:3: expected 2 fields, found 3'],
  ]
  for (const [name, content, columns, message] of cases) {
    const error = await failure(buildProfile(options(name, content, columns)))
    t.type(error, ProfileInputError)
    t.equal(error.message, message)
  }
})

t.test('a categorical column past --max-levels is refused at the value that passes it, with a hint', async (t) => {
  const ids = await failure(buildProfile(options('train.csv', 'id\na\nb\na\nc\n', ALL, { maxLevels: 2 })))
  t.equal(ids.message, 'train.csv:5: id: more than 2 distinct values (--max-levels); leave the column out (--exclude, --schema) or raise --max-levels')
  const stray = await failure(buildProfile(options('train.csv', 'x\n1\n2\nn/a\n3\n4\n', ALL, { maxLevels: 3 })))
  t.equal(stray.message, 'train.csv:5: x: more than 3 distinct values (--max-levels); the first value that is not a number is "n/a", on line 4')
  const listed = await failure(
    buildProfile(options('train.csv', 'x\n1\n2\n', { kind: 'listed', columns: [{ name: 'x', type: 'categorical' }] }, { maxLevels: 1 })),
  )
  t.match(listed.message, /^train\.csv:3: x: more than 1 distinct values \(--max-levels\); leave the column out/)
  const { profile } = await buildProfile(options('train.csv', 'id\na\nb\na\n', ALL, { maxLevels: 2 }))
  t.same(profile.features, [{ name: 'id', type: 'categorical', levels: ['a', 'b'], proportions: [2 / 3, 1 / 3] }], 'at the limit is fine')
})

/** A classifier of two classes over one numerical input x and one categorical c: class 1 when x > 0. */
const MODEL = {
  name: 'm',
  task: 'classification',
  classes: ['low', 'high'],
  inputs: [
    { name: 'x', type: 'numerical' },
    { name: 'c', type: 'categorical', levels: ['p', 'q'] },
  ],
  outputs: [
    { name: 'level', type: 'label' },
    { name: 'probabilities', type: 'probabilities' },
  ],
} as unknown as ModelVersion

const fake = (isAsync: boolean, calls: Array<[number[], number]>): Predictor => ({
  predict: (features, rows) => {
    calls.push([Array.from(features), rows])
    const labels = Uint32Array.from({ length: rows }, (_, r) => ((features[r * 2] as number) > 0 ? 1 : 0))
    const prediction: Prediction = { labels, probabilities: new Float64Array(rows * 2) }
    return isAsync ? new Promise((resolve) => setTimeout(() => resolve(prediction), 1)) : prediction
  },
  dispose: () => {},
})

/** A shipped model, loaded by its runtime. */
const shipped = async (name: string): Promise<{ model: ModelVersion; predictor: Predictor }> => {
  const { model, payload } = kernelRuntime.read([artifactBytes(name)], { name, version: '1' })
  return { model, predictor: await kernelRuntime.load(model, payload) }
}

t.test("with a model: its inputs, typed and in its order, and its answers' shares", async (t) => {
  const iris = await shipped('iris')
  const rows = 'species,petal_width,petal_length,sepal_width,sepal_length\nx,0.2,1.4,3.5,5.1\nx,1.3,4.5,2.8,6.5\nx,2.3,5.9,3.0,6.8\nx,0.3,1.3,3.4,5.0\n'
  const { profile } = await buildProfile(options('iris.csv', rows, { kind: 'model', ...iris }))
  t.same(
    profile.features.map((feature) => feature.name),
    ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'],
  )
  t.same(profile.features[2], { name: 'petal_length', type: 'numerical', edges: [4.5], proportions: [0.5, 0.5], min: 1.3, max: 5.9 })
  t.same(profile.predictions, { name: 'species', type: 'categorical', levels: ['setosa', 'versicolor', 'virginica'], proportions: [0.5, 0.25, 0.25] })

  const missing = await failure(buildProfile(options('iris.csv', 'sepal_length,sepal_width,petal_length\n1,2,3\n', { kind: 'model', ...iris })))
  t.equal(missing.message, 'iris.csv:1: the header has no column "petal_width" (an input of model iris)')
  const absent = await failure(buildProfile(options('iris.ndjson', '{"sepal_length":1,"sepal_width":2,"petal_length":3}\n', { kind: 'model', ...iris })))
  t.equal(absent.message, 'iris.ndjson:1: petal_width is missing (--drop-missing leaves out rows with a missing value)')

  const cars = await shipped('cars')
  const car = (origin: string) => JSON.stringify({ cylinders: 4, displacement: 120, horsepower: 90, weight_in_lbs: 2500, acceleration: 15, year: 1975, origin })
  const regression = await buildProfile(options('cars.ndjson', `${car('Japan')}\n${car('Japan')}\n${car('USA')}\n`, { kind: 'model', ...cars }))
  t.same(regression.profile.features[6], { name: 'origin', type: 'categorical', levels: ['USA', 'Europe', 'Japan'], proportions: [1 / 3, 0, 2 / 3] })
  const mpg = regression.profile.predictions as { name: string; type: string; edges: number[]; proportions: number[] }
  t.match(mpg, { name: 'miles_per_gallon', type: 'numerical' })
  t.equal(mpg.edges.length, 1, 'two distinct answers, two bins')
  const mars = await failure(buildProfile(options('cars.ndjson', `${car('Japan')}\n${car('Mars')}\n`, { kind: 'model', ...cars })))
  t.equal(mars.message, 'cars.ndjson:2: origin: "Mars" is not one of USA, Europe, Japan')

  const levels = Array.from({ length: 30 }, (_, i) => `level-${i}`)
  const wide = { ...MODEL, inputs: [{ name: 'c', type: 'categorical', levels }] } as unknown as ModelVersion
  const unknown = await failure(buildProfile(options('wide.csv', 'c\nlevel-0\nlevel-99\n', { kind: 'model', model: wide, predictor: fake(false, []) })))
  t.equal(unknown.message, `wide.csv:3: c: "level-99" is not one of ${levels.join(', ').slice(0, 117)}...`, 'a long list of levels is clipped')
})

t.test('rows reach the predictor in batches, encoded as requests are; sync and async predictors alike', async (t) => {
  const table = 'c,x\np,-1\nq,2\nq,3\np,4\n'
  for (const isAsync of [false, true]) {
    for (const [batchRows, batches] of [
      [
        2,
        [
          [[-1, 0, 2, 1], 2],
          [[3, 1, 4, 0], 2],
        ],
      ],
      [
        3,
        [
          [[-1, 0, 2, 1, 3, 1], 3],
          [[4, 0], 1],
        ],
      ],
    ] as const) {
      const calls: Array<[number[], number]> = []
      const { profile } = await buildProfile(options('data.csv', table, { kind: 'model', model: MODEL, predictor: fake(isAsync, calls) }, { batchRows }))
      t.same(calls, batches, `${isAsync ? 'async' : 'sync'}, batches of ${batchRows}`)
      t.same(profile.predictions, { name: 'level', type: 'categorical', levels: ['low', 'high'], proportions: [0.25, 0.75] })
    }
  }
})

t.test('a large table: growing buffers, the default batch, and chunked reading agree', async (t) => {
  const rows = 5000
  const lines = ['c,x', ...Array.from({ length: rows }, (_, i) => `${i % 3 === 0 ? 'p' : 'q'},${(i % 100) - 49.5}`)]
  const calls: Array<[number[], number]> = []
  const base = options('big.csv', `${lines.join('\n')}\n`, { kind: 'model', model: MODEL, predictor: fake(false, calls) })
  const { profile } = await buildProfile({ ...base, source: { ...base.source, chunkBytes: 777 } })
  t.same(
    calls.map(([, n]) => n),
    [1024, 1024, 1024, 1024, 904],
  )
  t.same(profile.features[0], { name: 'x', type: 'numerical', edges: [0.5], proportions: [0.5, 0.5], min: -49.5, max: 49.5 })
  t.same(profile.features[1], { name: 'c', type: 'categorical', levels: ['p', 'q'], proportions: [1667 / 5000, 3333 / 5000] })
  t.same(profile.predictions, { name: 'level', type: 'categorical', levels: ['low', 'high'], proportions: [0.5, 0.5] })
})

t.test("a payload log without an input (SVC_PAYLOAD_LOG_EXCLUDE): drawn from the model's reference, kept as it was; refused without one", async (t) => {
  const iris = await shipped('iris')
  const event = (row: Record<string, number>) =>
    JSON.stringify({ specversion: '1.0', type: 'svc.prediction', data: { model: 'iris', version: '1', rows: [row, row] } })
  const log = `${event({ sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4 })}\n${event({ sepal_length: 6.5, sepal_width: 2.8, petal_length: 4.5 })}\n`
  const outcome = await buildProfile(options('payload.jsonl', log, { kind: 'model', ...iris }))
  t.equal(outcome.profile.rows, 4)
  t.same(outcome.profile.features[3], iris.model.reference?.features[3], "petal_width: the model's reference, as it was")
  t.match(outcome.filled, "petal_width: not in the payload log (SVC_PAYLOAD_LOG_EXCLUDE left it out); each row's value drawn from model iris's reference")
  const plain = await buildProfile(options('rows.ndjson', '{"sepal_length":1,"sepal_width":2,"petal_length":3,"petal_width":4}\n', { kind: 'model', ...iris }))
  t.equal(plain.filled, '', 'nothing filled, nothing said')

  const bare = { ...iris.model, reference: undefined } as ModelVersion
  const refused = await failure(buildProfile(options('payload.jsonl', log, { kind: 'model', model: bare, predictor: iris.predictor })))
  t.match(
    refused.message,
    "payload.jsonl:1: petal_width is not in the payload log's rows (SVC_PAYLOAD_LOG_EXCLUDE left it out) and model iris has no reference",
  )
  const listed = await failure(
    buildProfile(
      options('payload.jsonl', log, {
        kind: 'listed',
        columns: [
          { name: 'sepal_length', type: 'numerical' },
          { name: 'petal_width', type: 'numerical' },
        ],
      }),
    ),
  )
  t.match(listed.message, "payload.jsonl:1: petal_width is not in the payload log's rows (SVC_PAYLOAD_LOG_EXCLUDE left it out): leave it out of --schema")
})
