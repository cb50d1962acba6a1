// The model-serving series (lib/README.md §10), created once per app:
//   svc_model_prediction_requests_total{model,version,outcome}   outcome: success, client_error, server_error
//   svc_model_predictions_total{model,version}                    rows predicted
//   svc_model_prediction_duration_seconds{model,version}          encode + predict of one request
//   svc_model_predictions_in_flight{model}
//   svc_model_prediction_batch_size{model}                        rows per successful request
// The registry's default labels add `environment`. svc_model_ready belongs to the model registry.
//
// Label values come only from a served model (its description's name and version), never from a
// request: a request naming a model that does not exist never reaches `cellsFor`. Children are
// resolved on a model version's first request and kept: prom-client's `labels()` hashes and
// allocates on every call, so a request then only calls `inc()`, `dec()` and `observe()`.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { ServedModel } from './registry.js'

export const PREDICTION_OUTCOMES = ['success', 'client_error', 'server_error'] as const
export type PredictionOutcome = (typeof PREDICTION_OUTCOMES)[number]

/** From 0.1 ms: a linear model predicts a small batch in tens of microseconds. */
export const PREDICTION_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] as const
/** Powers of 2 and 10 up to the largest SVC_MAX_BATCH accepted (100 000). */
export const BATCH_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000] as const

type Inc = Readonly<{ inc(value?: number): void }>
type Observe = Readonly<{ observe(value: number): void }>

/** One model version's series, resolved once. */
export type ModelCells = Readonly<{
  outcomes: Readonly<Record<PredictionOutcome, Inc>>
  predictions: Inc
  duration: Observe
  inFlight: Readonly<{ inc(): void; dec(): void }>
  batchSize: Observe
}>

export type ModelMetrics = Readonly<{
  /** The series of a served model version; the same object on every call for the same ServedModel. */
  cellsFor(served: ServedModel): ModelCells
}>

export const createModelMetrics = (registry: Registry): ModelMetrics => {
  const requests = new Counter({
    name: 'svc_model_prediction_requests_total',
    help: 'Prediction requests for a served model version, by outcome (success, client_error, server_error).',
    labelNames: ['model', 'version', 'outcome'] as const,
    registers: [registry],
  })
  const predictions = new Counter({
    name: 'svc_model_predictions_total',
    help: 'Rows predicted by a model version.',
    labelNames: ['model', 'version'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'svc_model_prediction_duration_seconds',
    help: 'Time to encode and predict one request batch, in seconds.',
    labelNames: ['model', 'version'] as const,
    buckets: [...PREDICTION_DURATION_BUCKETS],
    registers: [registry],
  })
  const inFlight = new Gauge({
    name: 'svc_model_predictions_in_flight',
    help: 'Prediction requests being handled by a model, from the model being found to the reply being built.',
    labelNames: ['model'] as const,
    registers: [registry],
  })
  const batchSize = new Histogram({
    name: 'svc_model_prediction_batch_size',
    help: 'Rows per successful prediction request.',
    labelNames: ['model'] as const,
    buckets: [...BATCH_SIZE_BUCKETS],
    registers: [registry],
  })

  // Per model name (in flight, batch size) and per served version; a reload builds a new
  // ServedModel, which finds the same series through the name and version.
  const byName = new Map<string, Pick<ModelCells, 'inFlight' | 'batchSize'>>()
  const byVersion = new Map<string, ModelCells>()
  const resolved = new WeakMap<ServedModel, ModelCells>()

  const build = ({ name, version }: ServedModel): ModelCells => {
    const key = `${name}/${version}`
    let cells = byVersion.get(key)
    if (cells === undefined) {
      let shared = byName.get(name)
      if (shared === undefined) {
        inFlight.set({ model: name }, 0)
        batchSize.zero({ model: name })
        byName.set(name, (shared = { inFlight: inFlight.labels(name), batchSize: batchSize.labels(name) }))
      }
      const outcome = (value: PredictionOutcome): Inc => {
        const child = requests.labels(name, version, value)
        // Every outcome exists from the version's first request at 0, so rate() sees the first error.
        child.inc(0)
        return child
      }
      predictions.labels(name, version).inc(0)
      duration.zero({ model: name, version })
      cells = Object.freeze({
        outcomes: Object.freeze({ success: outcome('success'), client_error: outcome('client_error'), server_error: outcome('server_error') }),
        predictions: predictions.labels(name, version),
        duration: duration.labels(name, version),
        ...shared,
      })
      byVersion.set(key, cells)
    }
    return cells
  }

  return {
    cellsFor(served) {
      let cells = resolved.get(served)
      if (cells === undefined) resolved.set(served, (cells = build(served)))
      return cells
    },
  }
}
