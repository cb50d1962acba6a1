// The inference kernel's own cost per row, in process: the committed iris artifact, batches of 100
// rows, CPU time over a million rows. What the HTTP figures add on top is parsing and the layers.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { FeatureWindow } from '../../lib/drift/window.js'
import { parseArtifact } from '../../lib/models/artifact.js'
import { encodeRows } from '../../lib/models/features.js'
import { compile, type Classifier } from '../../lib/models/kernel.js'

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
