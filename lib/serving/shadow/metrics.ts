// The shadow series (declared in lib/telemetry/contract/metrics.ts; lib/README.md §10), `version` the
// shadow's; every one exists at 0 from the moment a version becomes a model's shadow (`track`, at
// each publish), and goes when it stops being one. Rows are those of successful copies, disagreements
// those whose answer differs (compare.ts); a copy is dropped when the queue is full, under load, or
// while a timed-out run is still going; the duration is encode + predict of a copy, answered or not.
// Shadow rows never count in the svc_model_prediction* series: those stay what users were answered.
import type { Registry } from 'prom-client'
import {
  counterCell,
  counterSeries,
  histogramCell,
  histogramSeries,
  registerSeries,
  type CounterCell,
  type HistogramCell,
} from '../../telemetry/metrics/cells.js'
import { PREDICTION_DURATION_BUCKETS } from '../../models/inference/duration-buckets.js'
import { createVersionFamily, type SeriesPolicy } from '../../models/registry/version-series.js'

export const SHADOW_OUTCOMES = ['success', 'error', 'timeout'] as const
export type ShadowOutcome = (typeof SHADOW_OUTCOMES)[number]

/** One shadow version's cells. */
export type ShadowCells = Readonly<{
  outcomes: Readonly<Record<ShadowOutcome, CounterCell>>
  rows: CounterCell
  disagreements: CounterCell
  dropped: CounterCell
  duration: HistogramCell
}>

export type ShadowMetrics = Readonly<{
  /** The cells of every shadow now, by `model/version`, made at 0 when new; the others are dropped. */
  track(shadows: ReadonlyArray<Readonly<{ name: string; version: string }>>): ReadonlyMap<string, ShadowCells>
}>

/** Made at 0 by the publish that makes a version the shadow, dropped by the one that ends the role (version-series.ts). */
const SHADOW_SERIES: SeriesPolicy = Object.freeze({ keptS: 0 })

type Shadow = Readonly<{ name: string; version: string }>

const shadowCells = ({ name, version }: Shadow): ShadowCells => {
  const labels = { model: name, version }
  return Object.freeze({
    outcomes: Object.freeze({
      success: counterCell({ ...labels, outcome: 'success' }),
      error: counterCell({ ...labels, outcome: 'error' }),
      timeout: counterCell({ ...labels, outcome: 'timeout' }),
    }),
    rows: counterCell(labels),
    disagreements: counterCell(labels),
    dropped: counterCell(labels),
    duration: histogramCell(labels, PREDICTION_DURATION_BUCKETS),
  })
}

export const createShadowMetrics = (registry: Registry): ShadowMetrics => {
  // A scrape reads the family's series as they are: dropping one is leaving the family.
  const family = createVersionFamily({ policy: SHADOW_SERIES, keyOf: ({ name, version }: Shadow) => `${name}/${version}`, make: shadowCells, drop: () => {} })
  const all = <T>(pick: (shadow: ShadowCells) => T | readonly T[]) => ({ values: () => [...family.series().values()].flatMap(pick) })
  registerSeries(registry, [
    counterSeries(
      'svc_model_shadow_predictions_total',
      'Shadow copies of prediction requests by outcome (success, error, timeout), for the shadow version.',
      all((shadow) => Object.values(shadow.outcomes)),
    ),
    counterSeries(
      'svc_model_shadow_rows_total',
      'Rows of successful shadow copies compared with the answer the client was given.',
      all((s) => s.rows),
    ),
    counterSeries(
      'svc_model_shadow_disagreements_total',
      "Rows whose shadow answer differs from the primary's: another label, or a value beyond the relative tolerance.",
      all((s) => s.disagreements),
    ),
    counterSeries(
      'svc_model_shadow_dropped_total',
      'Shadow copies dropped because the shadow queue was full, the service was under load, or a timed-out copy was still running.',
      all((s) => s.dropped),
    ),
    histogramSeries(
      'svc_model_shadow_duration_seconds',
      'Time to encode and predict one shadow copy, in seconds.',
      all((s) => s.duration),
    ),
  ])
  return {
    track: (shadows) => {
      family.publish(shadows, 0)
      return family.series()
    },
  }
}
