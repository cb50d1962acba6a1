// The ONNX runtime with the real onnxruntime-node, no HTTP: reading a version's files, loading a
// session, what a classifier makes of raw scores, and the release of a replaced session.
import t from 'tap'
import { createOnnxRuntime } from '../../../lib/models/onnx/runtime.js'
import type { ClassPrediction } from '../../../lib/models/runtime.js'
import { onnxGraphs } from '../../fixtures/onnx-graphs.js'

const runtime = createOnnxRuntime({ threads: 1 })
const place = { name: 'm', version: '1' }
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

t.test('a classifier of raw scores answers shares of non-negative rows and the softmax of rows with a negative score', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { model, payload } = runtime.read([graphs.bytes('scores'), json({ features: ['a', 'b', 'c'], classes: ['x', 'y', 'z'] }), undefined], place)
  t.match(model, { platform: 'onnxruntime', task: 'classification', classes: ['x', 'y', 'z'], reference: undefined })
  const predictor = await runtime.load(model, payload)
  t.teardown(() => predictor.dispose())
  const rows = [1, 2, 5, -1, 0, 1, 0, 0, 0]
  const { labels, probabilities } = (await predictor.predict(Float64Array.from(rows), 3)) as ClassPrediction
  const [e0, e1, e2] = [Math.exp(-2), Math.exp(-1), 1]
  const sum = e0 + e1 + e2
  const expected = [1 / 8, 2 / 8, 5 / 8, e0 / sum, e1 / sum, e2 / sum, 1 / 3, 1 / 3, 1 / 3]
  for (const [k, p] of expected.entries()) t.ok(Math.abs((probabilities[k] as number) - p) < 1e-7, `probability ${k}: ${probabilities[k]} ≈ ${p}`)
  t.same(Array.from(labels), [2, 2, 0], 'the most probable class; the first on a tie')
})

t.test('a session whose answers do not fit the classes is refused at load, by its first prediction', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { model, payload } = runtime.read([graphs.bytes('scores'), json({ features: ['a', 'b', 'c'], classes: ['x', 'y'] }), undefined], place)
  await t.rejects(runtime.load(model, payload), { message: /^a first prediction failed: model m version 1: output scores has 3 values for 1 rows of 2/ })
})

t.test('a graph with an operator onnxruntime lacks is refused at load, with onnxruntime’s words', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { model, payload } = runtime.read([graphs.bytes('unknown-operator'), json({ features: ['a', 'b', 'c', 'd'] }), undefined], place)
  await t.rejects(runtime.load(model, payload), { message: /^onnxruntime cannot load the graph: .*com\.example\.private:Mystery/ })
})

t.test('read refuses what it cannot serve, naming the file', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  t.throws(() => runtime.read([graphs.bytes('linear'), Buffer.from('{'), undefined], place), { message: /^metadata\.json \(document\): is not UTF-8 JSON/ })
  t.throws(() => runtime.read([Buffer.from([0x0a, 0xff]), undefined, undefined], place), { name: 'OnnxGraphError' })
})

t.test('a replaced session is released once its runs settle; a prediction after that is refused', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { model, payload } = runtime.read([graphs.bytes('linear-zipmap'), json({ features: ['a', 'b', 'c', 'd'] }), undefined], place)
  const predictor = await runtime.load(model, payload)
  const running = predictor.predict(new Float64Array([5.1, 3.5, 1.4, 0.2]), 1)
  const disposed = predictor.dispose()
  t.match(await running, { labels: new Uint32Array([0]) }, 'the run under way completes')
  await disposed
  await t.rejects(predictor.predict(new Float64Array(4), 1), { message: 'model m version 1 was replaced; its session is released' })
})
