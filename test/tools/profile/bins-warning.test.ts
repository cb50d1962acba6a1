import t from 'tap'
import type { FeatureReference, Reference } from '../../../lib/models/runtime.js'
import { binsWarning } from '../../../lib/tools/profile/bins-warning.js'
import { rawArtifact } from '../../fixtures/models.js'

/** A numerical reference of `bins` equal bins. */
const numerical = (name: string, bins: number): FeatureReference => ({
  name,
  type: 'numerical',
  edges: Array.from({ length: bins - 1 }, (_, i) => i + 1),
  proportions: Array.from({ length: bins }, () => 1 / bins),
})
const categorical = (name: string, levels: number): FeatureReference => ({
  name,
  type: 'categorical',
  levels: Array.from({ length: levels }, (_, i) => `level${i}`),
  proportions: Array.from({ length: levels }, () => 1 / levels),
})

// The chances below are scipy 1.17's chi2.sf at 0.1 / (1/n + 1/500), n the rows.
const HEAD =
  "with no drift at all, a drift check of 500 live rows (SVC_DRIFT_MIN_SAMPLES's default) would score PSI 0.1 (moderate drift) or more by chance alone, per column:\n"

t.test("no warning for the shipped references: iris's 3 bins on 150 rows, cars's deciles on 392", async (t) => {
  for (const name of ['iris', 'cars']) t.equal(binsWarning(rawArtifact(name).reference as Reference, 10), '', name)
})

t.test('10 bins on 178 rows: every such column named, with its chance, and the --bins that keeps each under 1 %', async (t) => {
  const names = ['alcohol', 'malic_acid', 'ash', 'magnesium']
  const reference: Reference = { rows: 178, features: names.map((name) => numerical(name, 10)) }
  t.equal(
    binsWarning(reference, 10),
    `svc profile: warning: too many bins for 178 rows: ${HEAD}  15.7 % for alcohol, malic_acid, ash, magnesium (10 bins)\nsvc profile: --bins 4 keeps that chance under 1 % per column.\n`,
  )
})

t.test('columns grouped by their bin count, most first; categorical and one-bin columns left out; a regressor named by its answers', async (t) => {
  const reference: Reference = {
    rows: 178,
    features: [numerical('a', 6), categorical('colour', 40), numerical('b', 10), numerical('constant', 1), numerical('c', 4), numerical('d', 6)],
    predictions: numerical('miles_per_gallon', 8),
  }
  t.equal(
    binsWarning(reference, 10),
    [
      `svc profile: warning: too many bins for 178 rows: ${HEAD}`,
      '  15.7 % for b (10 bins)\n',
      '  6.91 % for miles_per_gallon (the answers) (8 bins)\n',
      '  2.22 % for a, d (6 bins)\n',
      'svc profile: --bins 4 keeps that chance under 1 % per column.\n',
    ].join(''),
    'c, at 4 bins, is under 1 %',
  )
  t.equal(
    binsWarning({ rows: 178, features: [numerical('c', 4)], predictions: categorical('species', 3) }, 10),
    '',
    'a classifier: its answers are categorical',
  )
})

t.test('too few rows for any bins: how many would do', async (t) => {
  t.equal(
    binsWarning({ rows: 40, features: [numerical('x', 3)] }, 3),
    `svc profile: warning: too many bins for 40 rows: ${HEAD}  15.7 % for x (3 bins)\nsvc profile: even --bins 2 leaves 5.43 %: profile 77 rows or more.\n`,
  )
})
