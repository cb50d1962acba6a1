// The model-serving series (lib/README.md §10), created once per app:
//   svc_model_prediction_requests_total{model,version,outcome}   outcome: success, client_error, server_error, overloaded
//   svc_model_predictions_total{model,version}                    rows predicted
//   svc_model_prediction_duration_seconds{model,version}          encode + predict of one request (an ONNX worker's queue left out)
//   svc_model_prediction_batch_size{model}                        rows per successful request
// The registry's default labels add `environment`. svc_model_ready belongs to the model registry.
//
// Label values come only from a served model (its description's name and version), never from a
// request: a request naming a model that does not exist never reaches `cellsFor`. A version's cells
// (lib/telemetry/metrics/cells.ts) are made at 0 by the publish that serves it (`track`), before any
// request can reach it, so the first scrape after a load reads 0 and increase() counts a burst of
// requests before the next one: made on the first request instead, a version's first rows were in
// its first sample, which increase() takes as the start, and label coverage read 1.84 for a version
// whose rows were all labelled (ops/README.md, "Model quality from labels"). They are kept while the
// version is served, so a request only adds to numbers: prom-client's `labels()` children would hash
// the labels on each of the four calls. A version the manifest no longer lists loses its series at
// the next publish (by the policy of lib/models/registry/version-series.ts); a request still running
// on it counts into cells no scrape reads. `cellsFor` is called in the turn the build was found in
// (serving.ts), before any publish can retire it, so a retired version never gets its series back.
import type { Registry } from 'prom-client'
import {
  counterCell,
  counterSeries,
  histogramCell,
  histogramSeries,
  observe,
  registerSeries,
  type CounterCell,
  type HistogramCell,
} from '../telemetry/metrics/cells.js'
import { PREDICTION_DURATION_BUCKETS } from '../models/inference/duration-buckets.js'
import type { ServedModel } from '../models/registry/registry.js'
import { createVersionFamily, type SeriesPolicy } from '../models/registry/version-series.js'

export const PREDICTION_OUTCOMES = ['success', 'client_error', 'server_error', 'overloaded'] as const
export type PredictionOutcome = (typeof PREDICTION_OUTCOMES)[number]

/**
 * Powers of 10 up to SVC_MAX_BATCH's default: no rule or panel reads these buckets, and each bound is
 * a series per model; a batch above 1000 (SVC_MAX_BATCH raised) counts in `+Inf`, and _sum/_count
 * still give the mean.
 */
export const BATCH_SIZE_BUCKETS = [1, 10, 100, 1000] as const

/** Made at 0 by the publish that serves a version, dropped by the one that no longer serves it (version-series.ts). */
const PREDICTION_SERIES: SeriesPolicy = Object.freeze({ keptS: 0 })

type Inc = Readonly<{ inc(value?: number): void }>
type Observe = Readonly<{ observe(value: number): void }>

/** One model version's series, resolved once. */
export type ModelCells = Readonly<{
  outcomes: Readonly<Record<PredictionOutcome, Inc>>
  predictions: Inc
  duration: Observe
  batchSize: Observe
}>

export type ModelMetrics = Readonly<{
  /** The series of a served model version; the same object on every call for the same ServedModel. */
  cellsFor(served: ServedModel): ModelCells
  /** The builds now served (each publish): their series are made at 0, those of every other version go. */
  track(served: readonly ServedModel[]): void
}>

const counter = (cell: CounterCell): Inc => ({
  inc: (value = 1) => {
    cell.value += value
  },
})
const histogram = (cell: HistogramCell): Observe => ({ observe: (value) => observe(cell, value, undefined) })

/** The cells of every series, keyed by their label values joined; each Map keeps its series in the order they appeared. */
type SeriesCells = Readonly<{
  requests: Map<string, CounterCell>
  predictions: Map<string, CounterCell>
  durations: Map<string, HistogramCell>
  batchSizes: Map<string, HistogramCell>
}>

/** Registers the four series over cells a scrape reads as they are then. */
const registerModelSeries = (registry: Registry): SeriesCells => {
  const series: SeriesCells = { requests: new Map(), predictions: new Map(), durations: new Map(), batchSizes: new Map() }
  const { requests, predictions, durations, batchSizes } = series
  registerSeries(registry, [
    counterSeries(
      'svc_model_prediction_requests_total',
      'Prediction requests for a served model version, by outcome (success, client_error, server_error, overloaded).',
      requests,
    ),
    counterSeries('svc_model_predictions_total', 'Rows predicted by a model version.', predictions),
    histogramSeries(
      'svc_model_prediction_duration_seconds',
      'Time to encode and predict one request batch, a wait for an ONNX worker left out, in seconds.',
      durations,
    ),
    histogramSeries('svc_model_prediction_batch_size', 'Rows per successful prediction request.', batchSizes),
  ])
  return series
}

export const createModelMetrics = (registry: Registry): ModelMetrics => {
  const { requests, predictions, durations, batchSizes } = registerModelSeries(registry)

  // Per model name (batch size) and per served version; a reload builds a new ServedModel, which
  // finds the same series through the name and version.
  const byName = new Map<string, Observe>()
  const resolved = new WeakMap<ServedModel, ModelCells>()

  const batchSizeOf = (model: string): Observe => {
    let cells = byName.get(model)
    if (cells === undefined) {
      const batchSize = histogramCell({ model }, BATCH_SIZE_BUCKETS)
      batchSizes.set(model, batchSize)
      byName.set(model, (cells = histogram(batchSize)))
    }
    return cells
  }

  const make = ({ name, version }: ServedModel): ModelCells => {
    const key = `${name}/${version}`
    const labels = { model: name, version }
    // Every outcome exists at 0 from the version's publish, so rate() sees the first error.
    const outcome = (value: PredictionOutcome): Inc => {
      const cell = counterCell({ ...labels, outcome: value })
      requests.set(`${key}/${value}`, cell)
      return counter(cell)
    }
    const rows = counterCell(labels)
    predictions.set(key, rows)
    const duration = histogramCell(labels, PREDICTION_DURATION_BUCKETS)
    durations.set(key, duration)
    return Object.freeze({
      outcomes: Object.freeze({
        success: outcome('success'),
        client_error: outcome('client_error'),
        server_error: outcome('server_error'),
        overloaded: outcome('overloaded'),
      }),
      predictions: counter(rows),
      duration: histogram(duration),
      batchSize: batchSizeOf(name),
    })
  }

  const drop = (key: string): void => {
    predictions.delete(key)
    durations.delete(key)
    for (const outcome of PREDICTION_OUTCOMES) requests.delete(`${key}/${outcome}`)
  }

  const byVersion = createVersionFamily({ policy: PREDICTION_SERIES, keyOf: ({ name, version }: ServedModel) => `${name}/${version}`, make, drop })

  return {
    cellsFor(served) {
      let cells = resolved.get(served)
      if (cells === undefined) resolved.set(served, (cells = byVersion.of(served)))
      return cells
    },
    track: (served) => {
      byVersion.publish(served, 0)
      // A model served no more (removed from the store) loses its batch-size series too.
      const names = new Set(served.map((build) => build.name))
      for (const model of byName.keys()) {
        if (names.has(model)) continue
        byName.delete(model)
        batchSizes.delete(model)
      }
    },
  }
}
