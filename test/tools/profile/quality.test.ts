// The profile's quality: truths read from their column with the line that fails, and the scores
// `npm run train` reports, computed by hand here for a few rows.
import t from 'tap'
import { kernelRuntime } from '../../../lib/models/kernel/runtime.js'
import { LineError } from '../../../lib/tools/profile/errors.js'
import { qualityScore, targetColumn } from '../../../lib/tools/profile/quality.js'
import { CELLS } from '../../../lib/tools/profile/table.js'
import { artifactBytes } from '../../fixtures/models.js'

const IRIS = kernelRuntime.read([artifactBytes('iris')], { name: 'iris', version: '1' }).model
const CARS = kernelRuntime.read([artifactBytes('cars')], { name: 'cars', version: '1' }).model

t.test("a classifier's truth is its class index; anything else is refused with its line", async (t) => {
  const csv = targetColumn(IRIS, 'species', CELLS.csv)
  t.equal(csv.name, 'species')
  t.equal(csv.read('virginica', 2), 2)
  t.throws(() => csv.read('rose', 7), new LineError(7, 'species: "rose" is not a class of model iris: setosa, versicolor, virginica'))
  const ndjson = targetColumn(IRIS, 'species', CELLS.ndjson)
  t.equal(ndjson.read('setosa', 1), 0)
  t.throws(
    () => ndjson.read(1, 3),
    new LineError(3, 'species: 1 is not a class of model iris: setosa, versicolor, virginica'),
    'a JSON number is its decimal text, not a class index',
  )
})

t.test("a regressor's truth is a finite number", async (t) => {
  const csv = targetColumn(CARS, 'mpg', CELLS.csv)
  t.equal(csv.read('21.5', 1), 21.5)
  t.throws(() => csv.read('fast', 4), new LineError(4, 'mpg: "fast" is not a finite number'))
  t.throws(() => targetColumn(CARS, 'mpg', CELLS.ndjson).read(null, 5), LineError)
})

t.test('a classifier scores accuracy and log loss, a zero probability floored', async (t) => {
  const score = qualityScore(IRIS)
  // Rows 0 and 1 in one batch, row 2 in another: the scores are over every row added.
  score.add({ labels: Uint32Array.of(0, 1), probabilities: Float64Array.of(0.5, 0.25, 0.25, 0.1, 0.8, 0.1) }, [0, 2])
  score.add({ labels: Uint32Array.of(2), probabilities: Float64Array.of(0, 0, 1) }, [0])
  const { accuracy, log_loss } = score.quality() as { accuracy: number; log_loss: number }
  t.equal(accuracy, 1 / 3)
  t.ok(Math.abs(log_loss - (-Math.log(0.5) - Math.log(0.1) - Math.log(1e-15)) / 3) < 1e-12, `log_loss ${log_loss}`)
})

t.test('a regressor scores rmse and mae, and r2 only when the truths vary', async (t) => {
  const score = qualityScore(CARS)
  score.add({ values: Float64Array.of(10, 20, 33) }, [12, 20, 30])
  const quality = score.quality()
  t.equal(quality['rmse'], Math.sqrt((4 + 0 + 9) / 3))
  t.equal(quality['mae'], 5 / 3)
  // r2 = 1 − Σ error² / Σ (truth − mean)², the truths being 12, 20 and 30.
  const mean = 62 / 3
  const deviations = (12 - mean) ** 2 + (20 - mean) ** 2 + (30 - mean) ** 2
  t.ok(Math.abs((quality['r2'] as number) - (1 - 13 / deviations)) < 1e-12)
  const flat = qualityScore(CARS)
  flat.add({ values: Float64Array.of(1, 3) }, [2, 2])
  t.same(flat.quality(), { rmse: 1, mae: 1 })
})
