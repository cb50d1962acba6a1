// Drift monitoring (lib/README.md §10): the predict path records accepted rows, and what the model
// answered for each, into a window per model (the default version's rows only; another version's go
// to its bin counters alone, `count`), and each check scores every READY model's default
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
// `no_reference`, and removes the PSI gauges and the last-check timestamp a version before it set
// (the stale alert watches that timestamp), as does a model no longer READY or listed; a window
// below `minSamples` rows is `insufficient_data`, which touches neither. Otherwise every
// feature with at least `minSamples` non-missing values is scored, `svc_drift_psi` set, each
// breached threshold counted in `svc_drift_alerts_total` on every check that breaches it, and
// `drift_detected` logged when a feature's severity rises or it spikes; the answers likewise, in
// the `svc_drift_prediction_*` series and with `output` in the log line (score.ts). A check that
// throws for one model is counted as `error` and logged; the others still run.
//
// The series are metrics.ts's.
import type { Registry } from 'prom-client'
import { errorMessage } from '../core/errors.js'
import { nextSlice, sliceElapsed } from '../core/schedule/slices.js'
import type { Logger } from '../telemetry/logger.js'
import type { ModelRegistry, ServedModel } from '../models/registry/registry.js'
import type { Prediction } from '../models/runtime.js'
import type { BinCounters } from './bin-counters.js'
import { createDriftMetrics, type DriftMetrics, dropModel } from './metrics.js'
import type { Thresholds } from './psi.js'
import { createScoring, dropScores, type FeatureDrift, type ModelDrift, type Scoring, scoreModel, unchecked } from './score.js'
import { FeatureWindow } from './window.js'

import { DRIFT_CHECK_RESULTS, type DriftCheckResult, type DriftStatusName } from './status.js'
export { DRIFT_CHECK_RESULTS, type DriftCheckResult } from './status.js'
export { ALERT_KINDS } from './metrics.js'
export type { FeatureDrift } from './score.js'

export type DriftSettings = Readonly<{
  /** Rows kept per window. */
  window: number
  /** Fewest rows (and non-missing values per feature) a score is computed from; at most `window`. */
  minSamples: number
  thresholds: Thresholds
}>

/** What GET /api/v1/models/{name} shows of a model's drift. */
export type DriftStatus = Readonly<{
  status: Exclude<DriftStatusName, 'disabled'>
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
  /**
   * hot path: counts them in the version's bin counters only, for a version whose rows must stay out
   * of the window: one that is not its model's default (a canary, one a request named, a shadow).
   */
  count(served: ServedModel, features: Float64Array, rows: number, prediction?: Prediction): void
  /**
   * One check of every READY model, a slice of the loop at a time (lib/core/schedule/slices.ts): at
   * hundreds of models a check in one run held every waiting request. Never rejects for one
   * model's failure.
   */
  check(): Promise<void>
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

const answersOf = (prediction: Prediction | undefined): ArrayLike<number> | undefined =>
  prediction === undefined ? undefined : 'labels' in prediction ? prediction.labels : prediction.values

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString())

/** A model's drift as last checked, with `samples` rows in its window now. */
const statusOf = (
  served: ServedModel,
  drift: ModelDrift | undefined,
  samples: number,
  { window: capacity, minSamples, thresholds }: DriftSettings,
): DriftStatus => ({
  // Nothing to check against, whether or not a check has run yet.
  status: served.model.reference === undefined ? 'no_reference' : (drift?.result ?? 'not_checked'),
  checked_at: iso(drift?.checkedAt),
  scored_at: iso(drift?.scoredAt),
  version: drift?.scoredVersion ?? null,
  window: { samples, capacity },
  min_samples: minSamples,
  thresholds,
  features: drift?.features ?? [],
  predictions: drift?.predictions ?? null,
})

const readyNames = (models: DriftMonitorOptions['models']): string[] => models.entries().flatMap((entry) => (entry.state === 'READY' ? [entry.name] : []))

/** The default version of every READY model (a READY model always serves one). */
const defaultsOf = (models: DriftMonitorOptions['models']): ServedModel[] => readyNames(models).flatMap((name) => models.resolve(name) ?? [])

/** Drops the windows no served version records into any more (a model's inputs changed). */
const prune = (models: DriftMonitorOptions['models'], windows: Map<string, SharedWindow>, windowFor: (served: ServedModel) => SharedWindow): void => {
  const live = new Set<string>()
  for (const entry of models.entries()) {
    for (const version of entry.versions) {
      const served = models.resolve(entry.name, version)
      if (served !== undefined) live.add(windowFor(served).key)
    }
  }
  for (const key of windows.keys()) if (!live.has(key)) windows.delete(key)
}

/** The predict path's two entries, decided once: with counters, every row goes to both. */
const recorders = (windowFor: (served: ServedModel) => SharedWindow, counters: BinCounters | undefined): Pick<DriftMonitor, 'record' | 'count'> =>
  counters === undefined
    ? { record: (served, features, rows, prediction) => windowFor(served).window.recordAnswered(features, rows, answersOf(prediction)), count: () => {} }
    : {
        record: (served, features, rows, prediction) => {
          const answers = answersOf(prediction)
          windowFor(served).window.recordAnswered(features, rows, answers)
          counters.record(served, features, rows, answers)
        },
        count: (served, features, rows, prediction) => counters.record(served, features, rows, answersOf(prediction)),
      }

const schemaKey = ({ name, model }: ServedModel): string =>
  `${name}\n${JSON.stringify(model.inputs)}\n${model.task === 'classification' ? JSON.stringify(model.classes) : model.task}`

/** A model served no more is scored no more; one the registry removed loses every series. */
const forgetUnchecked = (
  models: DriftMonitorOptions['models'],
  drifts: Map<string, ModelDrift>,
  checked: ReadonlySet<string>,
  scoring: Scoring,
  series: DriftMetrics,
): void => {
  const held = new Set(models.entries().map((entry) => entry.name))
  for (const [name, drift] of drifts) {
    if (checked.has(name)) continue
    if (!held.has(name)) {
      dropModel(series, name, drift.seriesFeatures, drift.seriesOutput)
      drifts.delete(name)
      continue
    }
    dropScores(scoring, name, drift)
  }
}

export const createDriftMonitor = ({ models, settings, metrics, logger, now = Date.now, counters }: DriftMonitorOptions): DriftMonitor => {
  const { window: capacity, minSamples, thresholds } = settings
  if (!(Number.isSafeInteger(minSamples) && minSamples >= 1 && minSamples <= capacity)) {
    throw new RangeError(`minSamples must be an integer from 1 to the window size (${capacity}), is ${minSamples}`)
  }
  const windows = new Map<string, SharedWindow>()
  const windowOf = new WeakMap<ServedModel, SharedWindow>()
  const drifts = new Map<string, ModelDrift>()

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

  const series = createDriftMetrics(metrics, () => defaultsOf(models).map((served) => [served.name, windowFor(served).window.size] as const))
  const scoring = createScoring(series, logger, minSamples, thresholds)

  const driftOf = (name: string): ModelDrift => {
    let drift = drifts.get(name)
    if (drift === undefined) {
      drifts.set(name, (drift = unchecked()))
      // Every result from zero, so rate() and increase() see the first check.
      for (const result of DRIFT_CHECK_RESULTS) series.checks.inc({ model: name, result }, 0)
    }
    return drift
  }

  const checkModel = (served: ServedModel, at: number): void => {
    const drift = driftOf(served.name)
    let result: DriftCheckResult
    try {
      const { window } = windowFor(served)
      const { reference } = served.model
      if (reference === undefined) dropScores(scoring, served.name, drift)
      result =
        reference === undefined ? 'no_reference' : window.size < minSamples ? 'insufficient_data' : scoreModel(scoring, served, reference, drift, window, at)
    } catch (error: unknown) {
      result = 'error'
      logger.error('drift_check_failed', { model: served.name, version: served.version, message: errorMessage(error) })
    }
    series.checks.inc({ model: served.name, result })
    drift.result = result
    drift.checkedAt = at
  }

  return {
    ...recorders(windowFor, counters),
    check: async () => {
      const at = now()
      const checked = new Set<string>()
      const started = performance.now()
      let sliceStart = started
      for (const name of readyNames(models)) {
        if (sliceElapsed(sliceStart)) sliceStart = await nextSlice()
        // Resolved here, not before the loop: a reload may have published another default during a turn.
        const served = models.resolve(name)
        if (served === undefined) continue
        checkModel(served, at)
        checked.add(name)
      }
      forgetUnchecked(models, drifts, checked, scoring, series)
      prune(models, windows, windowFor)
      logger.debug('drift_check_completed', { models: checked.size, duration_ms: Math.round((performance.now() - started) * 1000) / 1000 })
    },
    status: (served) => statusOf(served, drifts.get(served.name), windowFor(served).window.size, settings),
  }
}
