// The runtime's own limit for the heavy section (heavy.ts): one onnxruntime-node InferenceSession
// with svc's session options (lib/models/onnx/runtime.ts: one intra-op and one inter-op thread,
// sequential, every graph optimisation), fed 64-row batches back to back for `seconds`, fetching
// only `probabilities` as svc does. Run in a process of its own, pinned by the caller (taskset).
// Usage: heavy-session.js <model.onnx> <features> <seconds>; prints { rows, seconds } as JSON.
import { InferenceSession, Tensor } from 'onnxruntime-node'
import { normalRows } from './onnx-store.js'

const BATCH = 64
const [path = '', features = '0', seconds = '10'] = process.argv.slice(2)
const width = Number(features)
const names = Array.from({ length: width }, (_, i) => `x${i}`)
const data = Float32Array.from(normalRows(names, BATCH, 20240614).flatMap((row) => names.map((name) => row[name] as number)))
const session = await InferenceSession.create(path, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  logSeverityLevel: 4,
})
const feeds = { X: new Tensor('float32', data, [BATCH, width]) }
for (let i = 0; i < 3; i++) await session.run(feeds, ['probabilities'])
const started = performance.now()
const end = started + Number(seconds) * 1000
let rows = 0
while (performance.now() < end) {
  await session.run(feeds, ['probabilities'])
  rows += BATCH
}
process.stdout.write(`${JSON.stringify({ rows, seconds: (performance.now() - started) / 1000 })}\n`)
await session.release()
