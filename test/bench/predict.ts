// The inference kernel's own cost per row, in process: the committed iris artifact, batches of 100
// rows, CPU time over a million rows. What the HTTP figures add on top is parsing and the layers.
// And an ONNX predictor's cost per call, in process: the version loaded as the service loads it
// (runtime-onnx.ts, one intra-op thread), `predict` awaited call after call, which is the tensors,
// onnxruntime-node's setImmediate turn, the native run and reading the output.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FeatureWindow } from '../../lib/drift/window.js'
import { parseArtifact } from '../../lib/models/artifact.js'
import { encodeRows } from '../../lib/models/features.js'
import { compile, type Classifier } from '../../lib/models/kernel.js'
import { createOnnxRuntime } from '../../lib/models/runtime-onnx.js'

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

/** The drift window's cost per request of `batch` iris rows, in process: what the predict path adds. */
export const inProcessWindowNs = (batch: number): number => {
  const window = new FeatureWindow(4, 1000)
  const features = Float64Array.from({ length: batch * 4 }, (_, i) => i % 7)
  const calls = Math.ceil(ROWS / batch)
  for (let i = 0; i < 20_000; i++) window.record(features, batch)
  const start = process.cpuUsage()
  for (let i = 0; i < calls; i++) window.record(features, batch)
  const used = process.cpuUsage(start)
  return ((used.user + used.system) * 1000) / calls
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
