// The drift checks' series (lib/README.md §10; declared in lib/telemetry/contract/metrics.ts),
// created once per monitor (monitor.ts): the PSI gauges are set by
// checks that score, the timestamp (Unix seconds) by the last check that scored, and the window's
// samples are read at scrape time.
// The registry's default labels add `environment`. A check resolves labels per feature, once a
// check: none of this is on a request's path.
//
// The PSI gauges and svc_drift_last_check_timestamp_seconds go at the first check that finds the
// model's default without a reference, or the model no longer served, so SvcDriftStale clears; a
// column no longer scored loses its gauge and alert counters; a model the registry removed
// (removed from the store) loses every series at the next check (`dropModel`); otherwise the drift
// counters stay.
import { Counter, Gauge, type Registry } from 'prom-client'
import { gaugeSeries, registerSeries } from '../telemetry/metrics/cells.js'
import { DRIFT_CHECK_RESULTS } from './status.js'

export const ALERT_KINDS = ['moderate', 'severe', 'spike'] as const

/** The series one scored column writes: an input's (`feature`) or the answers' (`output`). */
export type ColumnSeries<L extends string> = Readonly<{ psi: Gauge<L>; alerts: Counter<L | 'severity'> }>

export type DriftMetrics = Readonly<{
  features: ColumnSeries<'model' | 'feature'>
  predictions: ColumnSeries<'model' | 'output'>
  checks: Counter<'model' | 'result'>
  lastCheck: Gauge<'model'>
}>

/** The rows in each model's window now, for the scrape: model name and row count. */
export type WindowSamples = () => Iterable<readonly [model: string, samples: number]>

export const createDriftMetrics = (metrics: Registry, windowSamples: WindowSamples): DriftMetrics => {
  const psi = new Gauge({
    name: 'svc_drift_psi',
    help: 'Population Stability Index of a feature at the last drift check that scored it.',
    labelNames: ['model', 'feature'] as const,
    registers: [metrics],
  })
  const alerts = new Counter({
    name: 'svc_drift_alerts_total',
    help: `Drift checks that found a feature at or above a threshold, by severity (${ALERT_KINDS.join(', ')}).`,
    labelNames: ['model', 'feature', 'severity'] as const,
    registers: [metrics],
  })
  const checks = new Counter({
    name: 'svc_drift_checks_total',
    help: `Drift checks per model, by result (${DRIFT_CHECK_RESULTS.join(', ')}).`,
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
    help: `Drift checks that found a model's answers at or above a threshold, by severity (${ALERT_KINDS.join(', ')}).`,
    labelNames: ['model', 'output', 'severity'] as const,
    registers: [metrics],
  })
  const lastCheck = new Gauge({
    name: 'svc_drift_last_check_timestamp_seconds',
    help: 'Unix time of the last drift check that produced scores.',
    labelNames: ['model'] as const,
    registers: [metrics],
  })
  // A series read as the scrape goes, as the cells are: a prom-client gauge set at each scrape
  // hashed and validated 500 label sets at 500 models, in one turn of the render.
  registerSeries(metrics, [
    gaugeSeries('svc_drift_window_samples', 'Input rows in the drift window of the version served by default.', function* () {
      for (const [model, samples] of windowSamples()) yield { labels: { model }, value: samples }
    }),
  ])
  return { features: { psi, alerts }, predictions: { psi: predictionPsi, alerts: predictionAlerts }, checks, lastCheck }
}

/** Every series of a model the registry no longer holds: its columns' (`features`, `output`) scores and alert counters, its checks, its last check. */
export const dropModel = (metrics: DriftMetrics, model: string, features: Iterable<string>, output: string | undefined): void => {
  for (const feature of features) {
    metrics.features.psi.remove({ model, feature })
    for (const severity of ALERT_KINDS) metrics.features.alerts.remove({ model, feature, severity })
  }
  if (output !== undefined) {
    metrics.predictions.psi.remove({ model, output })
    for (const severity of ALERT_KINDS) metrics.predictions.alerts.remove({ model, output, severity })
  }
  for (const result of DRIFT_CHECK_RESULTS) metrics.checks.remove({ model, result })
  metrics.lastCheck.remove({ model })
}
