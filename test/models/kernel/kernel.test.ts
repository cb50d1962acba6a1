import t from 'tap'
import { MAX_PARAMETER, parseArtifact, type LinearArtifact } from '../../../lib/models/artifact.js'
import { encodeRows } from '../../../lib/models/inference/features.js'
import type { InputError } from '../../../lib/models/inference/input-error.js'
import { compile, type Classifier, type Regressor } from '../../../lib/models/kernel/kernel.js'
import { artifactBytes, rawArtifact, sign } from '../../fixtures/models.js'

const iris = compile(parseArtifact(artifactBytes('iris'))) as Classifier
const carsArtifact = parseArtifact(artifactBytes('cars')) as LinearArtifact
const cars = compile(carsArtifact) as Regressor

const classify = (model: Classifier, rows: readonly number[][]) => {
  const probabilities = new Float64Array(rows.length * model.classes.length)
  const labels = new Uint32Array(rows.length)
  model.predict(Float64Array.from(rows.flat()), rows.length, probabilities, labels)
  return { probabilities, labels: [...labels].map((label) => model.classes[label]) }
}

const regress = (rows: readonly unknown[]) => {
  const values = new Float64Array(rows.length)
  cars.predict(encodeRows(carsArtifact.inputs, rows), rows.length, values)
  return values
}

const sums = (probabilities: Float64Array, width: number) =>
  Array.from({ length: probabilities.length / width }, (_, r) => probabilities.subarray(r * width, (r + 1) * width).reduce((a, b) => a + b, 0))

const CHEVELLE = { cylinders: 8, displacement: 307, horsepower: 130, weight_in_lbs: 3504, acceleration: 12, year: 1970, origin: 'USA' }

t.test('iris rows of each species get their species, probabilities summing to 1', async (t) => {
  t.equal(iris.task, 'classification')
  const { probabilities, labels } = classify(iris, [
    [5.1, 3.5, 1.4, 0.2],
    [7.0, 3.2, 4.7, 1.4],
    [6.3, 3.3, 6.0, 2.5],
  ])
  t.same(labels, ['setosa', 'versicolor', 'virginica'])
  for (const sum of sums(probabilities, 3)) t.ok(Math.abs(sum - 1) < 1e-12, `sums to ${sum}`)
  t.ok((probabilities[0] as number) > 0.9, 'a typical setosa is confidently setosa')
})

t.test('a linear prediction is intercept + weights · (standardised numerical, one-hot origin)', async (t) => {
  const { mean, scale } = carsArtifact.preprocessing.standardisation
  const w = carsArtifact.parameters.weights[0] as readonly number[]
  const numerical = [8, 307, 130, 3504, 12, 1970]
  let expected = carsArtifact.parameters.intercepts[0] as number
  numerical.forEach((x, j) => {
    expected += (w[j] as number) * ((x - (mean[j] as number)) / (scale[j] as number))
  })
  expected += (w[6] as number) * 1 // origin USA, the first level
  const [value] = regress([CHEVELLE])
  t.ok(Math.abs((value as number) - expected) < 1e-9, `${value} = ${expected}`)
  t.ok((value as number) > 10 && (value as number) < 25, 'a 1970 V8 does 10 to 25 mpg')
  const [japanese] = regress([{ ...CHEVELLE, origin: 'Japan' }])
  t.ok(
    Math.abs((japanese as number) - (value as number) - ((w[8] as number) - (w[6] as number))) < 1e-9,
    'origin moves the value by the difference of its weights',
  )
})

t.test('extreme finite inputs never give NaN or Infinity', async (t) => {
  const extremes = [1e300, -1e300, Number.MAX_VALUE, -Number.MAX_VALUE]
  const rows = extremes.map((x, i) => extremes.map((_, j) => (j === i ? x : -x)))
  const { probabilities } = classify(iris, rows)
  t.ok(probabilities.every(Number.isFinite))
  for (const sum of sums(probabilities, 3)) t.ok(Math.abs(sum - 1) < 1e-12)
  const values = regress(extremes.map((x) => ({ ...CHEVELLE, displacement: x, weight_in_lbs: -x })))
  t.ok(values.every(Number.isFinite), `${values.join(', ')}`)
})

t.test('with every parameter as large as an artifact may hold, absurd inputs still give finite answers', async (t) => {
  // The worst case STANDARDISED_LIMIT is sized for: weights and intercepts at ±MAX_PARAMETER, a scale
  // so small that every standardised input overflows, and inputs whose signs follow the weights', so
  // that the products of a logit add up instead of cancelling.
  const alternate = (d: number): number => (d % 2 === 0 ? 1 : -1)
  const worst = (name: string): LinearArtifact => {
    const raw = rawArtifact(name)
    raw.parameters.weights = raw.parameters.weights.map((row: number[], k: number) => row.map((_, d) => alternate(k + d) * MAX_PARAMETER))
    raw.parameters.intercepts = raw.parameters.intercepts.map((_: number, k: number) => alternate(k) * MAX_PARAMETER)
    raw.preprocessing.standardisation.scale = raw.preprocessing.standardisation.scale.map(() => Number.MIN_VALUE)
    return parseArtifact(sign(raw)) as LinearArtifact
  }
  const aligned = [0, 1, 2, 3].map((d) => alternate(d) * Number.MAX_VALUE)
  const { probabilities } = classify(compile(worst('iris')) as Classifier, [aligned, aligned.map((x) => -x), [5.1, 3.5, 1.4, 0.2]])
  t.ok(probabilities.every(Number.isFinite), `probabilities ${probabilities.join(', ')}`)
  for (const sum of sums(probabilities, 3)) t.ok(Math.abs(sum - 1) < 1e-12, `sums to ${sum}`)

  const carsWorst = worst('cars')
  const numericals = carsWorst.inputs.filter((input) => input.type === 'numerical').map((input) => input.name)
  const row = (direction: number) => ({ ...CHEVELLE, ...Object.fromEntries(numericals.map((name, d) => [name, direction * alternate(d) * Number.MAX_VALUE])) })
  const values = new Float64Array(2)
  ;(compile(carsWorst) as Regressor).predict(encodeRows(carsWorst.inputs, [row(1), row(-1)]), 2, values)
  t.ok(values.every(Number.isFinite), `values ${values.join(', ')}`)
})

t.test('a two-class model gives the sigmoid of its logit to the second class', async (t) => {
  const raw = rawArtifact('iris')
  raw.classes = ['other', 'setosa']
  // The reference of iris's answers is over its three classes: not this model's.
  delete raw.reference.predictions
  raw.parameters.weights = [raw.parameters.weights[0]]
  raw.parameters.intercepts = [raw.parameters.intercepts[0]]
  const model = compile(parseArtifact(sign(raw))) as Classifier
  const { probabilities, labels } = classify(model, [
    [5.1, 3.5, 1.4, 0.2],
    [6.3, 3.3, 6.0, 2.5],
    [1e300, -1e300, 1e300, -1e300],
  ])
  t.same(labels.slice(0, 2), ['setosa', 'other'])
  t.ok(probabilities.every(Number.isFinite))
  for (const sum of sums(probabilities, 2)) t.ok(Math.abs(sum - 1) < 1e-12)
  // An all-zero logit is a tie: the first class wins, as in the multinomial case.
  raw.parameters.weights = [[0, 0, 0, 0]]
  raw.parameters.intercepts = [0]
  const flat = classify(compile(parseArtifact(sign(raw))) as Classifier, [[5, 3, 1, 0]])
  t.same([...flat.probabilities], [0.5, 0.5])
  t.same(flat.labels, ['other'])
})

t.test('predict refuses values encode would have refused, naming row and feature', async (t) => {
  const probabilities = new Float64Array(6)
  const labels = new Uint32Array(2)
  for (const bad of [Number.NaN, Infinity, -Infinity]) {
    const error = t.throws(() => iris.predict(Float64Array.of(5, 3, 1, 0, 5, bad, 1, 0), 2, probabilities, labels)) as InputError
    t.same(error.problems, [{ row: 1, feature: 'sepal_width', code: 'NON_FINITE_VALUE', message: 'row 1: sepal_width must be a finite number' }])
  }
  const good = encodeRows(carsArtifact.inputs, [CHEVELLE])
  for (const level of [-1, 3, 0.5, Number.NaN]) {
    const features = good.slice()
    features[6] = level
    t.throws(() => cars.predict(features, 1, new Float64Array(1)), {
      name: 'InputError',
      code: 'INVALID_INPUT',
      problems: [{ row: 0, feature: 'origin', code: 'UNKNOWN_LEVEL' }],
    })
  }
})

t.test('predict checks the row count and the buffer sizes once per call', async (t) => {
  const features = new Float64Array(8)
  for (const n of [-1, 1.5, Number.NaN]) t.throws(() => iris.predict(features, n, new Float64Array(6), new Uint32Array(2)), RangeError)
  t.throws(() => iris.predict(features, 3, new Float64Array(9), new Uint32Array(3)), { message: 'features holds 8 values, 12 needed' })
  t.throws(() => iris.predict(features, 2, new Float64Array(5), new Uint32Array(2)), { message: 'probabilities holds 5 values, 6 needed' })
  t.throws(() => iris.predict(features, 2, new Float64Array(6), new Uint32Array(1)), { message: 'labels holds 1 values, 2 needed' })
  t.throws(() => cars.predict(new Float64Array(7), 1.5, new Float64Array(2)), RangeError)
  t.throws(() => cars.predict(new Float64Array(6), 1, new Float64Array(1)), { message: 'features holds 6 values, 7 needed' })
  t.throws(() => cars.predict(new Float64Array(14), 2, new Float64Array(1)), { message: 'values holds 1 values, 2 needed' })
  // Zero rows is a valid, empty batch.
  t.doesNotThrow(() => iris.predict(new Float64Array(0), 0, new Float64Array(0), new Uint32Array(0)))
})
