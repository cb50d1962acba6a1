// One check's scoring of one model (monitor.ts): every input with at least `minSamples` values,
// then the answers when the reference profiles them, each against the version's reference bins.
// Scoring sets the column's PSI gauge, counts each breached threshold on every check that breaches
// it, logs `drift_detected` (with every severity counted) when a column's severity rises or it
// spikes, and drops the series of columns no longer scored. Scores of another build are never
// compared: a new reference starts afresh.
import type { Logger } from '../telemetry/logger.js'
import type { ServedModel } from '../models/registry/registry.js'
import type { Reference } from '../models/runtime.js'
import { predictionInput } from '../models/profile.js'
import { ALERT_KINDS, type DriftMetrics } from './metrics.js'
import { compileBins, isSpike, scoreColumn, severityOf, type FeatureBins, type Severity, type Thresholds } from './psi.js'
import type { DriftCheckResult } from './status.js'
import type { FeatureWindow } from './window.js'

export type FeatureDrift = Readonly<{ name: string; psi: number; severity: Severity; samples: number; missing: number }>

/** Per model: the last check's outcome and the last scores, to find rises and spikes. */
export type ModelDrift = {
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

/** A model's drift before its first check. */
export const unchecked = (): ModelDrift => ({
  result: undefined,
  checkedAt: undefined,
  scoredAt: undefined,
  scoredVersion: undefined,
  scoredSha256: undefined,
  features: [],
  predictions: undefined,
  seriesFeatures: new Set(),
  seriesOutput: undefined,
})

/** What scoring keeps between checks: made once per monitor. */
export type Scoring = {
  readonly metrics: DriftMetrics
  readonly logger: Logger
  readonly minSamples: number
  readonly thresholds: Thresholds
  /** Per build: the bins of each input, then of its answers when the reference profiles them. */
  readonly bins: WeakMap<ServedModel, readonly FeatureBins[]>
  /** Scratch for one feature's bin counts: grown to the widest feature met so far. */
  counts: Float64Array
}

export const createScoring = (metrics: DriftMetrics, logger: Logger, minSamples: number, thresholds: Thresholds): Scoring => ({
  metrics,
  logger,
  minSamples,
  thresholds,
  bins: new WeakMap(),
  counts: new Float64Array(0),
})

const binsFor = (scoring: Scoring, served: ServedModel, reference: Reference): readonly FeatureBins[] => {
  let bins = scoring.bins.get(served)
  if (bins === undefined) {
    const { model } = served
    const { features, predictions } = reference
    bins = predictions === undefined ? compileBins(model.inputs, features) : compileBins([...model.inputs, predictionInput(model)], [...features, predictions])
    scoring.bins.set(served, bins)
  }
  return bins
}

/** The series of one scored column: an input's, or the answers'. */
type Series = Readonly<{
  psi: DriftMetrics['features']['psi']
  alerts: DriftMetrics['features']['alerts']
  labels: Record<string, string>
  field: 'feature' | 'output'
}>

/** One column to score: where it is in the window, its last score, and whether its series are new. */
type Column = Readonly<{ feature: FeatureBins; column: number; before: FeatureDrift | undefined; series: Series; isNew: boolean }>

/** Scores one column when it has enough values: sets its series, counts breaches, logs rises and spikes. */
const scoreOne = (
  scoring: Scoring,
  served: ServedModel,
  window: FeatureWindow,
  { feature, column, before, series, isNew }: Column,
): FeatureDrift | undefined => {
  const { minSamples, thresholds } = scoring
  if (scoring.counts.length < feature.reference.length) scoring.counts = new Float64Array(feature.reference.length)
  const { psi, samples, missing } = scoreColumn(feature, window.values, window.width, window.size, column, scoring.counts)
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
    scoring.logger.warning('drift_detected', {
      model: served.name,
      version: served.version,
      [series.field]: feature.name,
      psi,
      // What the alerts counter just counted: a spike is at least moderate (isSpike), so both.
      severity: isSpiking ? [severity, 'spike'] : [severity],
      ...(isSpiking ? { previous_psi: before?.psi } : {}),
      samples,
    })
  }
  return { name: feature.name, psi, severity, samples, missing }
}

/** Every input scored, in input order: those with enough values. */
const scoreInputs = (scoring: Scoring, served: ServedModel, bins: readonly FeatureBins[], drift: ModelDrift, window: FeatureWindow, isSameBuild: boolean) => {
  const previous = isSameBuild ? new Map(drift.features.map((f) => [f.name, f])) : new Map<string, FeatureDrift>()
  const { psi, alerts } = scoring.metrics.features
  const features: FeatureDrift[] = []
  for (let column = 0; column < served.model.inputs.length; column++) {
    const feature = bins[column] as FeatureBins
    const series = { psi, alerts, labels: { model: served.name, feature: feature.name }, field: 'feature' } as const
    const scored = scoreOne(scoring, served, window, {
      feature,
      column,
      before: previous.get(feature.name),
      series,
      isNew: !drift.seriesFeatures.has(feature.name),
    })
    if (scored !== undefined) features.push(scored)
  }
  return features
}

/** The answers scored, when the reference profiles them and there are enough. */
const scoreAnswers = (scoring: Scoring, served: ServedModel, bins: readonly FeatureBins[], drift: ModelDrift, window: FeatureWindow, isSameBuild: boolean) => {
  const column = served.model.inputs.length
  const answers = bins[column]
  if (answers === undefined) return undefined
  const { psi, alerts } = scoring.metrics.predictions
  return scoreOne(scoring, served, window, {
    feature: answers,
    column,
    before: isSameBuild && drift.predictions?.name === answers.name ? drift.predictions : undefined,
    series: { psi, alerts, labels: { model: served.name, output: answers.name }, field: 'output' },
    isNew: drift.seriesOutput !== answers.name,
  })
}

/** Removes the series of the columns the last scoring had and this one has not. */
const dropUnscored = ({ metrics }: Scoring, model: string, drift: ModelDrift, scored: ReadonlySet<string>, output: string | undefined): void => {
  for (const name of drift.seriesFeatures) {
    if (scored.has(name)) continue
    metrics.features.psi.remove({ model, feature: name })
    for (const kind of ALERT_KINDS) metrics.features.alerts.remove({ model, feature: name, severity: kind })
  }
  if (drift.seriesOutput !== undefined && drift.seriesOutput !== output) {
    metrics.predictions.psi.remove({ model, output: drift.seriesOutput })
    for (const kind of ALERT_KINDS) metrics.predictions.alerts.remove({ model, output: drift.seriesOutput, severity: kind })
  }
}

/**
 * Removes a model's gauges, its columns' PSI and the last-check timestamp, once nothing will score it
 * (its default has no reference, or it is served no more): a stale score would read as current, and
 * a timestamp left behind fires SvcDriftStale for good. Its counters stay, and `drift` still names
 * the columns whose alert series exist.
 */
export const dropScores = ({ metrics }: Scoring, model: string, drift: ModelDrift): void => {
  for (const feature of drift.seriesFeatures) metrics.features.psi.remove({ model, feature })
  if (drift.seriesOutput !== undefined) metrics.predictions.psi.remove({ model, output: drift.seriesOutput })
  metrics.lastCheck.remove({ model })
}

/** Scores every input and the answers, each with enough values, into `drift`; what the check came to. */
export const scoreModel = (
  scoring: Scoring,
  served: ServedModel,
  reference: Reference,
  drift: ModelDrift,
  window: FeatureWindow,
  at: number,
): 'ok' | 'insufficient_data' => {
  const bins = binsFor(scoring, served, reference)
  const isSameBuild = drift.scoredSha256 === served.model.sha256
  const features = scoreInputs(scoring, served, bins, drift, window, isSameBuild)
  const predictions = scoreAnswers(scoring, served, bins, drift, window, isSameBuild)
  if (features.length === 0 && predictions === undefined) return 'insufficient_data'
  const scored = new Set(features.map((f) => f.name))
  dropUnscored(scoring, served.name, drift, scored, predictions?.name)
  drift.seriesFeatures = scored
  drift.seriesOutput = predictions?.name
  drift.features = features
  drift.predictions = predictions
  drift.scoredAt = at
  drift.scoredVersion = served.version
  drift.scoredSha256 = served.model.sha256
  scoring.metrics.lastCheck.set({ model: served.name }, at / 1000)
  return 'ok'
}
