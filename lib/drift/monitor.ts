// Drift monitoring (lib/README.md §10): the predict path records accepted rows into a window per
// model, and each check scores every READY model's default version against its reference (from
// the version's description, whatever runtime serves it).
//
// Windows. One per model and input schema (names, types, levels), shared by every version with
// that schema: a retrained version keeps the traffic already seen, while a version whose inputs
// differ starts its own. Windows no served version uses any more are dropped at the next check.
//
// A check, per model: a window below `minSamples` rows is `insufficient_data` and touches neither
// the PSI gauges nor the last-check timestamp (the stale alert watches that timestamp); otherwise
// every feature with at least `minSamples` non-missing values is scored, `svc_drift_psi` set, each
// breached threshold counted in `svc_drift_alerts_total` on every check that breaches it, and
// `drift_detected` logged when a feature's severity rises or it spikes. A check that throws for
// one model is counted as `error` and logged; the others still run.
//
// Series:
//   svc_drift_psi{model,feature}                         gauge, set by checks that score
//   svc_drift_alerts_total{model,feature,severity}       moderate, severe, spike
//   svc_drift_checks_total{model,result}                 ok, insufficient_data, error
//   svc_drift_last_check_timestamp_seconds{model}        Unix seconds of the last check that scored
//   svc_drift_window_samples{model}                      rows in the window, read at scrape time
// The registry's default labels add `environment`.
import { Counter, Gauge, type Registry } from 'prom-client'
import type { Logger } from '../telemetry/logger.js'
import type { ModelRegistry, ServedModel } from '../models/registry.js'
import { compileBins, isSpike, scoreColumn, severityOf, type FeatureBins, type Severity, type Thresholds } from './psi.js'
import { FeatureWindow } from './window.js'

export const DRIFT_CHECK_RESULTS = ['ok', 'insufficient_data', 'error'] as const
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
}>

export type DriftMonitor = Readonly<{
  /** hot path: keeps the first `rows` rows of a successful prediction's `features`. */
  record(served: ServedModel, features: Float64Array, rows: number): void
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
  /** Features whose series exist, to remove those a new version no longer has. */
  seriesFeatures: ReadonlySet<string>
}

const schemaKey = (served: ServedModel): string => `${served.name}\n${JSON.stringify(served.model.inputs)}`

export const createDriftMonitor = ({ models, settings, metrics, logger, now = Date.now }: DriftMonitorOptions): DriftMonitor => {
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
  const lastCheck = new Gauge({
    name: 'svc_drift_last_check_timestamp_seconds',
    help: 'Unix time of the last drift check that produced scores.',
    labelNames: ['model'] as const,
    registers: [metrics],
  })

  const windows = new Map<string, SharedWindow>()
  const windowOf = new WeakMap<ServedModel, SharedWindow>()
  const binsOf = new WeakMap<ServedModel, readonly FeatureBins[]>()
  const drifts = new Map<string, ModelDrift>()
  // Scratch for one feature's bin counts: grown to the widest feature met so far.
  let counts = new Float64Array(0)

  const windowFor = (served: ServedModel): SharedWindow => {
    let shared = windowOf.get(served)
    if (shared !== undefined) return shared
    const key = schemaKey(served)
    shared = windows.get(key)
    if (shared === undefined) windows.set(key, (shared = { key, window: new FeatureWindow(served.model.inputs.length, capacity) }))
    windowOf.set(served, shared)
    return shared
  }

  const binsFor = (served: ServedModel): readonly FeatureBins[] => {
    let bins = binsOf.get(served)
    if (bins === undefined) binsOf.set(served, (bins = compileBins(served.model.inputs, served.model.reference.features)))
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
        seriesFeatures: new Set(),
      }
      drifts.set(name, drift)
      // Every result from zero, so rate() and increase() see the first check.
      for (const result of DRIFT_CHECK_RESULTS) checks.inc({ model: name, result }, 0)
    }
    return drift
  }

  /** Scores every feature with enough values; what the check came to. */
  const score = (served: ServedModel, drift: ModelDrift, window: FeatureWindow, at: number): DriftCheckResult => {
    const bins = binsFor(served)
    const previous = drift.scoredSha256 === served.model.sha256 ? new Map(drift.features.map((f) => [f.name, f])) : new Map<string, FeatureDrift>()
    const features: FeatureDrift[] = []
    bins.forEach((feature, column) => {
      if (counts.length < feature.reference.length) counts = new Float64Array(feature.reference.length)
      const { psi, samples, missing } = scoreColumn(feature, window.values, window.width, window.size, column, counts)
      if (samples < minSamples) return
      const severity = severityOf(psi, thresholds)
      const before = previous.get(feature.name)
      const isSpiking = isSpike(psi, before?.psi, thresholds)
      const labels = { model: served.name, feature: feature.name }
      if (!drift.seriesFeatures.has(feature.name)) for (const kind of ALERT_KINDS) alerts.inc({ ...labels, severity: kind }, 0)
      psiGauge.set(labels, psi)
      if (severity !== 'none') alerts.inc({ ...labels, severity })
      if (isSpiking) alerts.inc({ ...labels, severity: 'spike' })
      const isRise = severity !== 'none' && severity !== (before?.severity ?? 'none')
      if (isRise || isSpiking) {
        logger.warning('drift_detected', {
          model: served.name,
          version: served.version,
          feature: feature.name,
          psi,
          severity: isSpiking ? 'spike' : severity,
          ...(isSpiking ? { previous_psi: before?.psi } : {}),
          samples,
        })
      }
      features.push({ name: feature.name, psi, severity, samples, missing })
    })
    if (features.length === 0) return 'insufficient_data'
    const scored = new Set(features.map((f) => f.name))
    for (const name of drift.seriesFeatures) {
      if (scored.has(name)) continue
      psiGauge.remove({ model: served.name, feature: name })
      for (const kind of ALERT_KINDS) alerts.remove({ model: served.name, feature: name, severity: kind })
    }
    drift.seriesFeatures = scored
    drift.features = features
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
      result = window.size < minSamples ? 'insufficient_data' : score(served, drift, window, at)
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

  return {
    record: (served, features, rows) => windowFor(served).window.record(features, rows),
    check: () => {
      const at = now()
      for (const served of defaults()) checkModel(served, at)
      prune()
    },
    status: (served) => {
      const drift = drifts.get(served.name)
      const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString())
      return {
        status: drift?.result ?? 'not_checked',
        checked_at: iso(drift?.checkedAt),
        scored_at: iso(drift?.scoredAt),
        version: drift?.scoredVersion ?? null,
        window: { samples: windowFor(served).window.size, capacity },
        min_samples: minSamples,
        thresholds,
        features: drift?.features ?? [],
      }
    },
  }
}
