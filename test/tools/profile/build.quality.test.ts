// buildProfile with a target column: the model's answers scored against the truths into the
// profile's quality, worked out by hand, and every way a truth is refused.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import type { ModelVersion, Prediction, Predictor } from '../../../lib/models/runtime.js'
import { buildProfile, type ProfileOptions, type ProfiledColumns } from '../../../lib/tools/profile/build.js'
import type { ProfileInputError } from '../../../lib/tools/profile/errors.js'
import type { Format } from '../../../lib/tools/profile/table.js'
import { rejectionOf } from '../../fixtures/rejection.js'

const DIR = t.testdir()
let files = 0

/** Options to profile a new file holding `content`, named `name` in messages. */
const options = (name: string, content: string, columns: ProfiledColumns, overrides: Partial<ProfileOptions> = {}): ProfileOptions => {
  const path = join(DIR, `${files++}-${name}`)
  writeFileSync(path, content)
  return {
    source: { path, file: name, format: (name.endsWith('.csv') ? 'csv' : 'ndjson') as Format, delimiter: ',' },
    columns,
    bins: 2,
    maxLevels: 1000,
    dropMissing: false,
    ...overrides,
  }
}

const failure = (promise: Promise<unknown>): Promise<ProfileInputError> => rejectionOf<ProfileInputError>(promise)

const OUTPUTS = [
  { name: 'level', type: 'label' },
  { name: 'probabilities', type: 'probabilities' },
]
const INPUTS = [{ name: 'x', type: 'numerical' }]

/** A classifier over x: `high` when x > 0, with p(high) = `high` then, else 1 − `low`. */
const classifier = (classes: readonly string[], high: number, low: number, isAsync = false) => {
  const model = { name: 'm', task: 'classification', classes, inputs: INPUTS, outputs: OUTPUTS } as unknown as ModelVersion
  const predictor: Predictor = {
    predict: (features, rows) => {
      const labels = new Uint32Array(rows)
      const probabilities = new Float64Array(rows * 2)
      for (let r = 0; r < rows; r++) {
        const isHigh = (features[r] as number) > 0
        labels[r] = isHigh ? 1 : 0
        probabilities[2 * r + 1] = isHigh ? high : 1 - low
        probabilities[2 * r] = 1 - (probabilities[2 * r + 1] as number)
      }
      const prediction: Prediction = { labels, probabilities }
      return isAsync ? new Promise((resolve) => setTimeout(() => resolve(prediction), 1)) : prediction
    },
    dispose: () => {},
  }
  return { model, predictor }
}

/** A regressor answering 2x. */
const REGRESSOR = {
  model: { name: 'r', task: 'regression', inputs: INPUTS, outputs: [{ name: 'value', type: 'value' }] } as unknown as ModelVersion,
  predictor: {
    predict: (features: Float64Array, rows: number) => ({ values: Float64Array.from(features.subarray(0, rows), (x) => 2 * x) }),
    dispose: () => {},
  } satisfies Predictor,
}

const LEVELS = ['low', 'high']

t.test('a classifier: accuracy and log loss over every row, batch by batch, sync or async', async (t) => {
  // Answers: low (p 0.9), high (0.8), high (0.8) where the truth is low (so p(truth) 0.2), high (0.8).
  const table = 'truth,x,other\nlow,-1,a\nhigh,2,b\nlow,3,c\nhigh,4,d\n'
  const expected = { accuracy: 0.75, log_loss: -(Math.log(0.9) + Math.log(0.8) + Math.log(0.2) + Math.log(0.8)) / 4 }
  for (const isAsync of [false, true]) {
    for (const batchRows of [1, 3, 1024]) {
      const columns: ProfiledColumns = { kind: 'model', ...classifier(LEVELS, 0.8, 0.9, isAsync), target: 'truth' }
      const { profile } = await buildProfile(options('held-out.csv', table, columns, { batchRows }))
      const quality = profile.quality as Record<string, number>
      t.same(Object.keys(quality), ['accuracy', 'log_loss'])
      t.equal(quality['accuracy'], expected.accuracy, `${isAsync ? 'async' : 'sync'}, batches of ${batchRows}`)
      t.ok(Math.abs((quality['log_loss'] as number) - expected.log_loss) < 1e-15, `log_loss ${quality['log_loss']} is ${expected.log_loss}`)
      t.same(
        profile.features.map((f) => f.name),
        ['x'],
        'the target is not profiled',
      )
    }
  }
  const { profile } = await buildProfile(options('plain.csv', table, { kind: 'model', ...classifier(LEVELS, 0.8, 0.9) }))
  t.equal(profile.quality, undefined, 'no target, no quality')
  t.notOk('quality' in profile)
})

t.test('a probability of 0 for the truth counts as 1e-15: the log loss stays finite', async (t) => {
  const { profile } = await buildProfile(options('sure.csv', 'x,truth\n1,low\n-1,low\n', { kind: 'model', ...classifier(LEVELS, 1, 1), target: 'truth' }))
  t.same(profile.quality, { accuracy: 0.5, log_loss: -Math.log(1e-15) / 2 })
})

t.test('a regressor: rmse, mae and r2; r2 left out when every truth is the same', async (t) => {
  // Answers 2, 4, 6, 8 against 2.5, 4, 5, 8.5: errors −0.5, 0, 1, −0.5; truths' mean 5.
  const { profile } = await buildProfile(
    options('cars.ndjson', '{"x":1,"y":2.5}\n{"x":2,"y":4}\n{"x":3,"y":5}\n{"x":4,"y":8.5}\n', { kind: 'model', ...REGRESSOR, target: 'y' }),
  )
  const quality = profile.quality as Record<string, number>
  t.same(Object.keys(quality), ['rmse', 'mae', 'r2'])
  t.equal(quality['rmse'], Math.sqrt(1.5 / 4))
  t.equal(quality['mae'], 2 / 4)
  t.ok(Math.abs((quality['r2'] as number) - 12 / 13) < 1e-15, `r2 ${quality['r2']}: 1 − 1.5 / 19.5`)
  const flat = await buildProfile(options('flat.csv', 'x,y\n1,3\n2,3\n', { kind: 'model', ...REGRESSOR, target: 'y' }))
  t.same(flat.profile.quality, { rmse: Math.sqrt((1 + 1) / 2), mae: 1 }, 'no r2: its denominator is 0')
})

t.test('a missing truth is a missing value: refused by line, or with --drop-missing left out and counted', async (t) => {
  const columns: ProfiledColumns = { kind: 'model', ...classifier(LEVELS, 0.8, 0.9), target: 'truth' }
  const table = 'x,truth\n1,high\n2,\n-3,low\n'
  const missing = await failure(buildProfile(options('gap.csv', table, columns)))
  t.equal(missing.message, 'gap.csv:3: truth is missing (--drop-missing leaves out rows with a missing value)')
  const { profile, dropped } = await buildProfile(options('gap.csv', table, columns, { dropMissing: true }))
  t.equal(dropped, 1)
  t.equal(profile.rows, 2, 'the profile and the quality are over the same rows')
  t.equal(profile.quality?.['accuracy'], 1)
  const absent = await failure(buildProfile(options('gap.ndjson', '{"x":1,"truth":"high"}\n{"x":2}\n', columns)))
  t.equal(absent.message, 'gap.ndjson:2: truth is missing (--drop-missing leaves out rows with a missing value)', 'an absent member')
  const header = await failure(buildProfile(options('no-truth.csv', 'x,label\n1,high\n', columns)))
  t.equal(header.message, 'no-truth.csv:1: the header has no column "truth" (named by --target)')
})

t.test('a truth that is no class, or no finite number, is refused with its line either way', async (t) => {
  const columns: ProfiledColumns = { kind: 'model', ...classifier(LEVELS, 0.8, 0.9), target: 'truth' }
  for (const dropMissing of [false, true]) {
    const other = await failure(buildProfile(options('bad.csv', 'x,truth\n1,high\n2,medium\n', columns, { dropMissing })))
    t.equal(other.message, 'bad.csv:3: truth: "medium" is not a class of model m: low, high')
    const kind = await failure(buildProfile(options('bad.ndjson', '{"x":1,"truth":true}\n', columns, { dropMissing })))
    t.equal(kind.message, 'bad.ndjson:1: truth: true is not a class of model m: low, high')
    const value = await failure(buildProfile(options('bad.csv', 'x,y\n1,2\n2,n/a\n', { kind: 'model', ...REGRESSOR, target: 'y' }, { dropMissing })))
    t.equal(value.message, 'bad.csv:3: y: "n/a" is not a finite number')
    const text = await failure(buildProfile(options('bad.ndjson', '{"x":1,"y":"2"}\n', { kind: 'model', ...REGRESSOR, target: 'y' }, { dropMissing })))
    t.equal(text.message, 'bad.ndjson:1: y: "2" is not a finite number', 'a string is no number in NDJSON')
  }
})

t.test('in NDJSON a number is the class of its decimal text, for a graph whose classes are integers', async (t) => {
  const columns: ProfiledColumns = { kind: 'model', ...classifier(['0', '1'], 0.5, 0.5), target: 'truth' }
  const { profile } = await buildProfile(options('ints.ndjson', '{"x":1,"truth":1}\n{"x":-1,"truth":"0"}\n{"x":2,"truth":0}\n', columns))
  t.equal(profile.quality?.['accuracy'], 2 / 3)
  const unknown = await failure(buildProfile(options('ints.ndjson', '{"x":1,"truth":2}\n', columns)))
  t.equal(unknown.message, 'ints.ndjson:1: truth: 2 is not a class of model m: 0, 1')
})
