// Drift monitoring (lib/README.md §10): the predict path records accepted rows, and what the model
// answered for each, into a window per model, and each check scores every READY model's default
// version against its reference (from the version's description, whatever runtime serves it): each
// input feature, and the model's answers (the share of each predicted class, or a regressor's values
// in the reference's bins) when the reference profiles them. Prediction drift is the signal that
// still moves when the inputs shift together in a way no single feature shows.
//
// Windows. One per model and schema (inputs with their types and levels, task and classes), shared
// by every version with that schema: a retrained version keeps the traffic already seen, while a version whose inputs
// differ starts its own. Windows no served version uses any more are dropped at the next check.
//
// A check, per model: a version without a reference (an ONNX model served without a profile) is
// `no_reference`; a window below `minSamples` rows is `insufficient_data`; neither touches the PSI
// gauges or the last-check timestamp (the stale alert watches that timestamp). Otherwise every
// feature with at least `minSamples` non-missing values is scored, `svc_drift_psi` set, each
// breached threshold counted in `svc_drift_alerts_total` on every check that breaches it, and
// `drift_detected` logged when a feature's severity rises or it spikes; the answers likewise, in
// the `svc_drift_prediction_*` series and with `output` in the log line. A check that throws for
// one model is counted as `error` and logged; the others still run.
//
// Series:
//   svc_drift_psi{model,feature}                         gauge, set by checks that score
//   svc_drift_alerts_total{model,feature,severity}       moderate, severe, spike
//   svc_drift_prediction_psi{model,output}               gauge: the answers' PSI, `output` the label
//                                                        or value output's name
//   svc_drift_prediction_alerts_total{model,output,severity}
//   svc_drift_checks_total{model,result}                 ok, insufficient_data, no_reference, error
//   svc_drift_last_check_timestamp_seconds{model}        Unix seconds of the last check that scored
//   svc_drift_window_samples{model}                      rows in the window, read at scrape time
// The registry's default labels add `environment`.
import { Counter, Gauge, type Registry } from 'prom-client'
import type { Logger } from '../telemetry/logger.js'
import type { ModelRegistry, ServedModel } from '../models/registry/registry.js'
import type { Prediction, Reference } from '../models/runtime.js'
import { predictionInput } from '../models/profile.js'
import type { BinCounters } from './bin-counters.js'
import { compileBins, isSpike, scoreColumn, severityOf, type FeatureBins, type Severity, type Thresholds } from './psi.js'
import { FeatureWindow } from './window.js'

export const DRIFT_CHECK_RESULTS = ['ok', 'insufficient_data', 'no_reference', 'error'] as const
export type DriftCheckResult = (typeof DRIFT_CHECK_RESULTS)[number]
export const ALERT_KINDS = ['moderate', 'severe', 'spike'] as const

export type DriftSettings = Readonly<{
  /** Rows kept per window. */
  window: number
  /** Fewest rows (and non-missing values per feature) a score is computed from; at most `window`. */
  minSamples: number
  thresholds: Thresholds
}>

export type FeatureDrift = Readonly<{ name: string; psi: number; severity: Severity; samples: number; missing: number }>

/** What GET /api/v1/models/{name} shows of a model's drift. */
export type DriftStatus = Readonly<{
  status: DriftCheckResult | 'not_checked'
  /** ISO 8601 time of the last check of any result; null before the first. */
  checked_at: string | null
  /** ISO 8601 time of the last check that scored; null before the first. */
  scored_at: string | null
  /** Version the scores were computed for. */
  version: string | null
  window: Readonly<{ samples: number; capacity: number }>
  min_samples: number
  thresholds: Thresholds
  /** Scores of the last check that scored. */
  features: readonly FeatureDrift[]
  /** The answers' score at the last check that scored them (`name` is the output's); null when not scored. */
  predictions: FeatureDrift | null
}>

export type DriftMonitor = Readonly<{
  /** hot path: keeps the first `rows` rows of a successful prediction's `features`, and its answers. */
  record(served: ServedModel, features: Float64Array, rows: number, prediction?: Prediction): void
  /** One check of every READY model; never throws for one model's failure. */
  check(): void
  /** The model's drift as last checked, with its window now. */
  status(served: ServedModel): DriftStatus
}>

export type DriftMonitorOptions = Readonly<{
  models: Pick<ModelRegistry, 'entries' | 'resolve'>
  settings: DriftSettings
  metrics: Registry
  logger: Logger
  /** Milliseconds since the epoch; tests bring their own clock. */
  now?: () => number
  /** The bin counters every accepted row is also counted in (bin-counters.ts); none when undefined. */
  counters?: BinCounters | undefined
}>

/** A window, shared by the versions of one model with the same inputs; `key` names that schema. */
type SharedWindow = { readonly key: string; readonly window: FeatureWindow }

/** Per model: the last check's outcome and the last scores, to find rises and spikes. */
type ModelDrift = {
  result: DriftCheckResult | undefined
  checkedAt: number | undefined
  scoredAt: number | undefined
  scoredVersion: string | undefined
  /** The build (sha256) the scores are for; scores against another reference are not compared. */
  scoredSha256: string | undefined
  features: readonly FeatureDrift[]
  predictions: FeatureDrift | undefined
  /** Features whose series exist, to remove those a new version no longer has. */
  seriesFeatures: ReadonlySet<string>
  /** The output whose prediction series exist, if any. */
  seriesOutput: string | undefined
}

const schemaKey = ({ name, model }: ServedModel): string =>
  `${name}\n${JSON.stringify(model.inputs)}\n${model.task === 'classification' ? JSON.stringify(model.classes) : model.task}`

export const createDriftMonitor = ({ models, settings, metrics, logger, now = Date.now, counters }: DriftMonitorOptions): DriftMonitor => {
  const { window: capacity, minSamples, thresholds } = settings
  if (!(Number.isSafeInteger(minSamples) && minSamples >= 1 && minSamples <= capacity)) {
    throw new RangeError(`minSamples must be an integer from 1 to the window size (${capacity}), is ${minSamples}`)
  }
  const psiGauge = new Gauge({
    name: 'svc_drift_psi',
    help: 'Population Stability Index of a feature at the last drift check that scored it.',
    labelNames: ['model', 'feature'] as const,
    registers: [metrics],
  })
  const alerts = new Counter({
    name: 'svc_drift_alerts_total',
    help: 'Drift checks that found a feature at or above a threshold, by severity (moderate, severe, spike).',
    labelNames: ['model', 'feature', 'severity'] as const,
    registers: [metrics],
  })
  const checks = new Counter({
    name: 'svc_drift_checks_total',
    help: 'Drift checks per model, by result (ok, insufficient_data, error).',
    labelNames: ['model', 'result'] as const,
    registers: [metrics],
  })
  const predictionPsi = new Gauge({
    name: 'svc_drift_prediction_psi',
    help: "Population Stability Index of a model's answers (class shares, or binned values) at the last drift check that scored them.",
    labelNames: ['model', 'output'] as const,
    registers: [metrics],
  })
  const predictionAlerts = new Counter({
    name: 'svc_drift_prediction_alerts_total',
    help: "Drift checks that found a model's answers at or above a threshold, by severity (moderate, severe, spike).",
    labelNames: ['model', 'output', 'severity'] as const,
    registers: [metrics],
  })
  const lastCheck = new Gauge({
    name: 'svc_drift_last_check_timestamp_seconds',
    help: 'Unix time of the last drift check that produced scores.',
    labelNames: ['model'] as const,
    registers: [metrics],
  })

  const windows = new Map<string, SharedWindow>()
  const windowOf = new WeakMap<ServedModel, SharedWindow>()
  /** Per build: the bins of each input, then of its answers when the reference profiles them. */
  const binsOf = new WeakMap<ServedModel, readonly FeatureBins[]>()
  const drifts = new Map<string, ModelDrift>()
  // Scratch for one feature's bin counts: grown to the widest feature met so far.
  let counts = new Float64Array(0)

  const windowFor = (served: ServedModel): SharedWindow => {
    let shared = windowOf.get(served)
    if (shared !== undefined) return shared
    const key = schemaKey(served)
    shared = windows.get(key)
    // One column per input, and the answers last.
    if (shared === undefined) windows.set(key, (shared = { key, window: new FeatureWindow(served.model.inputs.length + 1, capacity) }))
    windowOf.set(served, shared)
    return shared
  }

  const binsFor = (served: ServedModel, reference: Reference): readonly FeatureBins[] => {
    let bins = binsOf.get(served)
    if (bins === undefined) {
      const { model } = served
      const { features, predictions } = reference
      bins =
        predictions === undefined ? compileBins(model.inputs, features) : compileBins([...model.inputs, predictionInput(model)], [...features, predictions])
      binsOf.set(served, bins)
    }
    return bins
  }

  // A READY model always serves its default version.
  const defaults = (): ServedModel[] => models.entries().flatMap((entry) => (entry.state === 'READY' ? [models.resolve(entry.name) as ServedModel] : []))

  new Gauge({
    name: 'svc_drift_window_samples',
    help: 'Input rows in the drift window of the version served by default.',
    labelNames: ['model'] as const,
    registers: [metrics],
    collect() {
      this.reset()
      for (const served of defaults()) this.set({ model: served.name }, windowFor(served).window.size)
    },
  })

  const driftOf = (name: string): ModelDrift => {
    let drift = drifts.get(name)
    if (drift === undefined) {
      drift = {
        result: undefined,
        checkedAt: undefined,
        scoredAt: undefined,
        scoredVersion: undefined,
        scoredSha256: undefined,
        features: [],
        predictions: undefined,
        seriesFeatures: new Set(),
        seriesOutput: undefined,
      }
      drifts.set(name, drift)
      // Every result from zero, so rate() and increase() see the first check.
      for (const result of DRIFT_CHECK_RESULTS) checks.inc({ model: name, result }, 0)
    }
    return drift
  }

  /** The series of one scored column: an input's, or the answers'. */
  type Series = Readonly<{ psi: typeof psiGauge; alerts: typeof alerts; labels: Record<string, string>; field: 'feature' | 'output' }>

  /** Scores one column when it has enough values: sets its series, counts breaches, logs rises and spikes. */
  const scoreOne = (
    served: ServedModel,
    feature: FeatureBins,
    window: FeatureWindow,
    column: number,
    before: FeatureDrift | undefined,
    series: Series,
    isNew: boolean,
  ): FeatureDrift | undefined => {
    if (counts.length < feature.reference.length) counts = new Float64Array(feature.reference.length)
    const { psi, samples, missing } = scoreColumn(feature, window.values, window.width, window.size, column, counts)
    if (samples < minSamples) return undefined
    const severity = severityOf(psi, thresholds)
    const isSpiking = isSpike(psi, before?.psi, thresholds)
    const { labels } = series
    if (isNew) for (const kind of ALERT_KINDS) series.alerts.inc({ ...labels, severity: kind }, 0)
    series.psi.set(labels, psi)
    if (severity !== 'none') series.alerts.inc({ ...labels, severity })
    if (isSpiking) series.alerts.inc({ ...labels, severity: 'spike' })
    const isRise = severity !== 'none' && severity !== (before?.severity ?? 'none')
    if (isRise || isSpiking) {
      logger.warning('drift_detected', {
        model: served.name,
        version: served.version,
        [series.field]: feature.name,
        psi,
        severity: isSpiking ? 'spike' : severity,
        ...(isSpiking ? { previous_psi: before?.psi } : {}),
        samples,
      })
    }
    return { name: feature.name, psi, severity, samples, missing }
  }

  /** Scores every input and the answers, each with enough values; what the check came to. */
  const score = (served: ServedModel, reference: Reference, drift: ModelDrift, window: FeatureWindow, at: number): DriftCheckResult => {
    const bins = binsFor(served, reference)
    const isSameBuild = drift.scoredSha256 === served.model.sha256
    const previous = isSameBuild ? new Map(drift.features.map((f) => [f.name, f])) : new Map<string, FeatureDrift>()
    const inputs = served.model.inputs.length
    const features: FeatureDrift[] = []
    for (let column = 0; column < inputs; column++) {
      const feature = bins[column] as FeatureBins
      const labels = { model: served.name, feature: feature.name }
      const series = { psi: psiGauge, alerts, labels, field: 'feature' } as const
      const scored = scoreOne(served, feature, window, column, previous.get(feature.name), series, !drift.seriesFeatures.has(feature.name))
      if (scored !== undefined) features.push(scored)
    }
    const answers = bins[inputs]
    const output = answers?.name
    const predictions =
      answers === undefined
        ? undefined
        : scoreOne(
            served,
            answers,
            window,
            inputs,
            isSameBuild && drift.predictions?.name === output ? drift.predictions : undefined,
            { psi: predictionPsi, alerts: predictionAlerts, labels: { model: served.name, output: answers.name }, field: 'output' },
            drift.seriesOutput !== output,
          )
    if (features.length === 0 && predictions === undefined) return 'insufficient_data'
    const scored = new Set(features.map((f) => f.name))
    for (const name of drift.seriesFeatures) {
      if (scored.has(name)) continue
      psiGauge.remove({ model: served.name, feature: name })
      for (const kind of ALERT_KINDS) alerts.remove({ model: served.name, feature: name, severity: kind })
    }
    if (drift.seriesOutput !== undefined && drift.seriesOutput !== predictions?.name) {
      predictionPsi.remove({ model: served.name, output: drift.seriesOutput })
      for (const kind of ALERT_KINDS) predictionAlerts.remove({ model: served.name, output: drift.seriesOutput, severity: kind })
    }
    drift.seriesFeatures = scored
    drift.seriesOutput = predictions?.name
    drift.features = features
    drift.predictions = predictions
    drift.scoredAt = at
    drift.scoredVersion = served.version
    drift.scoredSha256 = served.model.sha256
    lastCheck.set({ model: served.name }, at / 1000)
    return 'ok'
  }

  const checkModel = (served: ServedModel, at: number): void => {
    const drift = driftOf(served.name)
    let result: DriftCheckResult
    try {
      const { window } = windowFor(served)
      const { reference } = served.model
      result = reference === undefined ? 'no_reference' : window.size < minSamples ? 'insufficient_data' : score(served, reference, drift, window, at)
    } catch (error: unknown) {
      result = 'error'
      logger.error('drift_check_failed', { model: served.name, version: served.version, message: (error as Error).message })
    }
    checks.inc({ model: served.name, result })
    drift.result = result
    drift.checkedAt = at
  }

  /** Drops the windows no served version records into any more (a model's inputs changed). */
  const prune = (): void => {
    const live = new Set<string>()
    for (const entry of models.entries()) {
      for (const version of entry.versions) {
        const served = models.resolve(entry.name, version)
        if (served !== undefined) live.add(windowFor(served).key)
      }
    }
    for (const key of windows.keys()) if (!live.has(key)) windows.delete(key)
  }

  const answersOf = (prediction: Prediction | undefined): ArrayLike<number> | undefined =>
    prediction === undefined ? undefined : 'labels' in prediction ? prediction.labels : prediction.values

  return {
    // Decided once: with counters, every row goes to both.
    record:
      counters === undefined
        ? (served, features, rows, prediction) => windowFor(served).window.recordAnswered(features, rows, answersOf(prediction))
        : (served, features, rows, prediction) => {
            const answers = answersOf(prediction)
            windowFor(served).window.recordAnswered(features, rows, answers)
            counters.record(served, features, rows, answers)
          },
    check: () => {
      const at = now()
      for (const served of defaults()) checkModel(served, at)
      prune()
    },
    status: (served) => {
      const drift = drifts.get(served.name)
      const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString())
      return {
        // Nothing to check against, whether or not a check has run yet.
        status: served.model.reference === undefined ? 'no_reference' : (drift?.result ?? 'not_checked'),
        checked_at: iso(drift?.checkedAt),
        scored_at: iso(drift?.scoredAt),
        version: drift?.scoredVersion ?? null,
        window: { samples: windowFor(served).window.size, capacity },
        min_samples: minSamples,
        thresholds,
        features: drift?.features ?? [],
        predictions: drift?.predictions ?? null,
      }
    },
  }
}
