// The inference kernel's own cost per row, in process: the committed iris artifact, batches of 100
// rows, CPU time over a million rows. What the HTTP figures add on top is parsing and the layers.
// Drift monitoring's cost per row, in process: the window, the bin counters and both, as the
// service records a successful prediction of the shipped iris.
// And an ONNX predictor's cost per call, in process: the version loaded as the service loads it
// (runtime-onnx.ts, one intra-op thread), `predict` awaited call after call, which is the tensors,
// onnxruntime-node's setImmediate turn, the native run and reading the output.
import { Registry } from 'prom-client'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { readConfig } from '../../lib/config/config.js'
import { createBinCounters, type BinCounters } from '../../lib/drift/bin-counters.js'
import { createDriftMonitor, type DriftMonitor } from '../../lib/drift/monitor.js'
import { parseArtifact } from '../../lib/models/artifact.js'
import { encodeRows } from '../../lib/models/inference/features.js'
import { compile, type Classifier } from '../../lib/models/kernel/kernel.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import type { Prediction, Predictor } from '../../lib/models/runtime.js'
import { kernelRuntime } from '../../lib/models/kernel/runtime.js'
import { createOnnxRuntime } from '../../lib/models/onnx/runtime.js'
import { createLogger } from '../../lib/telemetry/logger.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const BATCH = 100
const ROWS = 1_000_000

export const inProcessRowNs = (): number => {
  const artifact = parseArtifact(readFileSync(`${ROOT}lib/models/artifacts/iris/1/model.json`))
  const model = compile(artifact) as Classifier
  const row = { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 }
  const features = encodeRows(
    artifact.inputs,
    Array.from({ length: BATCH }, () => row),
  )
  const probabilities = new Float64Array(BATCH * model.classes.length)
  const labels = new Uint32Array(BATCH)
  for (let i = 0; i < 2000; i++) model.predict(features, BATCH, probabilities, labels)
  const start = process.cpuUsage()
  for (let done = 0; done < ROWS; done += BATCH) model.predict(features, BATCH, probabilities, labels)
  const used = process.cpuUsage(start)
  return ((used.user + used.system) * 1000) / ROWS
}

/** CPU ns per row of drift monitoring in process, each part measured on its own (`inProcessDriftNs`). */
export type DriftRowNs = Readonly<{
  /** The window alone: the monitor's `record` built without bin counters. */
  window: number
  /** The bin counters alone, every series: `createBinCounters(...).record`. */
  counters: number
  /** The bin counters without the bin series (SVC_DRIFT_BIN_SERIES=false): the missing and out-of-range counters. */
  rangeCounters: number
  /** Both, as the service records a prediction: the monitor's `record` with the bin counters. */
  both: number
}>

/** CPU ns per row of `record`, which records `batch` rows: thousands of calls until a quarter-second of CPU time. */
const driftRowNs = (batch: number, record: () => void): number => {
  for (let i = 0; i < 20_000; i++) record()
  const start = process.cpuUsage()
  let calls = 0
  let usedUs = 0
  while (usedUs < 250_000) {
    for (let i = 0; i < 1000; i++) record()
    calls += 1000
    const used = process.cpuUsage(start)
    usedUs = used.user + used.system
  }
  return (usedUs * 1000) / (calls * batch)
}

/** Drift monitoring's parts for one served build, each built as the service builds it (lib/app.ts). */
export type DriftParts = Readonly<{
  /** A monitor without bin counters: the window alone. */
  windowOnly: DriftMonitor
  /** Bin counters with every series, and without the bin series; both tracking the build. */
  binCounters: BinCounters
  rangeCounters: BinCounters
  /** A monitor with bin counters of its own, every series: what the predict path calls. */
  both: DriftMonitor
}>

/** The parts for `served`, with the service's default drift settings. */
export const driftParts = (served: ServedModel): DriftParts => {
  const { window, minSamples, thresholds } = readConfig({}).drift
  const logger = createLogger({ name: 'bench', level: 'error', format: 'json', write: () => {} })
  // `record` reads neither: only checks go through the registry.
  const models = { entries: () => [], resolve: () => undefined }
  const counters = (hasBinSeries: boolean): BinCounters => {
    const built = createBinCounters({ metrics: new Registry(), logger, hasBinSeries })
    built.track([served])
    return built
  }
  const monitor = (withCounters: BinCounters | undefined): DriftMonitor =>
    createDriftMonitor({ models, settings: { window, minSamples, thresholds }, metrics: new Registry(), logger, counters: withCounters })
  return { windowOnly: monitor(undefined), binCounters: counters(true), rangeCounters: counters(false), both: monitor(counters(true)) }
}

/**
 * Drift monitoring's cost per row of a successful prediction of `batch` rows on the shipped iris
 * (its reference, the service's default drift settings), in process: the rows the HTTP variants
 * send, the answers the kernel gives them, each part on its own, nothing allocated per row or per
 * call. The predict path calls the monitor's `record` once per request.
 */
export const inProcessDriftNs = (batch: number): DriftRowNs => {
  const { model, payload } = kernelRuntime.read([readFileSync(`${ROOT}lib/models/artifacts/iris/1/model.json`)], { name: 'iris', version: '1' })
  // The kernel predicts synchronously: its predictor is never a promise.
  const predictor = kernelRuntime.load(model, payload) as Predictor
  const served: ServedModel = { name: 'iris', version: '1', model, predictor }
  const row = { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 }
  const features = encodeRows(
    model.inputs,
    Array.from({ length: batch }, () => row),
  )
  const prediction = predictor.predict(features, batch) as Prediction
  const answers = 'labels' in prediction ? prediction.labels : prediction.values
  const { windowOnly, binCounters, rangeCounters, both } = driftParts(served)
  return {
    window: driftRowNs(batch, () => windowOnly.record(served, features, batch, prediction)),
    counters: driftRowNs(batch, () => binCounters.record(served, features, batch, answers)),
    rangeCounters: driftRowNs(batch, () => rangeCounters.record(served, features, batch, answers)),
    both: driftRowNs(batch, () => both.record(served, features, batch, prediction)),
  }
}

/**
 * CPU µs per `predict` call on version 1 of the ONNX model `name` in the store at `dir`, with the
 * features of `instances` (the rows an HTTP variant sends: a forest's cost depends on the paths
 * its rows take through the trees).
 */
export const inProcessOnnxUs = async (dir: string, name: string, instances: readonly Readonly<Record<string, number>>[]): Promise<number> => {
  const runtime = createOnnxRuntime({ threads: 1 })
  const files = ['model.onnx', 'metadata.json'].map((file) => readFileSync(join(dir, name, '1', file)))
  const { model, payload } = runtime.read(files, { name, version: '1' })
  const predictor = await runtime.load(model, payload)
  const rows = instances.length
  const features = Float64Array.from(instances.flatMap((row) => model.inputs.map((input) => row[input.name] as number)))
  for (let i = 0; i < 2000; i++) await predictor.predict(features, rows)
  // Calls in hundreds until a second of CPU time: long enough for GC and tiering to settle.
  const start = process.cpuUsage()
  let calls = 0
  let usedUs = 0
  while (usedUs < 1e6) {
    for (let i = 0; i < 100; i++) await predictor.predict(features, rows)
    calls += 100
    const used = process.cpuUsage(start)
    usedUs = used.user + used.system
  }
  await predictor.dispose()
  return usedUs / calls
}
