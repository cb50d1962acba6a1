// The pieces of a batch-1 `POST /api/v1/predict` measured in process, each on its own, in CPU ns
// per request: what the predict endpoint does between reading the body and handing the reply to
// the server, with the same body the HTTP variants send. What the HTTP figures add on top of these
// is the body's read from the socket and the promise turns of an asynchronous handler (test/bench/README.md,
// "A prediction": the account of a prediction).
import { Registry } from 'prom-client'
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { encodeInputs } from '../../lib/models/inference/features.js'
import { readPredictRequest } from '../../lib/models/inference/request.js'
import { inferResponseJson } from '../../lib/models/inference/response.js'
import { createModelMetrics } from '../../lib/serving/metrics.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import type { Prediction, Predictor } from '../../lib/models/runtime.js'
import { kernelRuntime } from '../../lib/models/kernel/runtime.js'
import { driftParts } from './predict.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const CALLS = 1_000_000

/** CPU ns per call of `fn`, after a warm-up; the result is kept so nothing is optimised away. */
const cpuNs = (fn: () => unknown): number => {
  let sink: unknown
  for (let i = 0; i < 50_000; i++) sink = fn()
  const start = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) sink = fn()
  const used = process.cpuUsage(start)
  if (sink === Symbol.for('never')) process.stdout.write('')
  return ((used.user + used.system) * 1000) / CALLS
}

export type PostPiece = Readonly<{ name: string; ns: number }>

/** Each piece of a batch-1 prediction of `body` (a JSON /api/v1/predict request) on the shipped iris. */
export const postPathPieces = (body: string): readonly PostPiece[] => {
  const { model, payload } = kernelRuntime.read([readFileSync(`${ROOT}lib/models/artifacts/iris/1/model.json`)], { name: 'iris', version: '1' })
  // The kernel predicts synchronously: its predictor is never a promise.
  const predictor = kernelRuntime.load(model, payload) as Predictor
  const bytes = Buffer.from(body)
  const parsed = JSON.parse(body) as unknown
  const request = readPredictRequest(parsed, { maxBatch: 1000 })
  const features = encodeInputs(request, model)
  const prediction = predictor.predict(features, request.rows) as Prediction
  const served: ServedModel = { name: 'iris', version: '1', model, predictor }
  const cells = createModelMetrics(new Registry()).cellsFor(served)
  // What the predict path calls: the window and the bin counters, every series.
  const drift = driftParts(served).both
  const id = '6a1f6c3e-2b7a-4c47-9d0e-5f1f2c7a9b10'
  return [
    { name: 'body bytes to text, JSON.parse', ns: cpuNs(() => JSON.parse(bytes.toString('utf8'))) },
    { name: 'validation (readPredictRequest)', ns: cpuNs(() => readPredictRequest(parsed, { maxBatch: 1000 })) },
    { name: 'encode + predict (kernel)', ns: cpuNs(() => predictor.predict(encodeInputs(request, model), request.rows)) },
    { name: 'OIP response text', ns: cpuNs(() => inferResponseJson(model, prediction, request.rows, id)) },
    {
      name: 'the four prediction metrics',
      ns: cpuNs(() => {
        cells.duration.observe((performance.now() - 1) / 1e9)
        cells.predictions.inc(request.rows)
        cells.batchSize.observe(request.rows)
        cells.outcomes.success.inc()
      }),
    },
    { name: "drift monitoring: window + bin counters (the monitor's record)", ns: cpuNs(() => drift.record(served, features, request.rows, prediction)) },
  ]
}
