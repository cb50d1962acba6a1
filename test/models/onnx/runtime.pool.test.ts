// Where the ONNX runtime (lib/models/onnx/runtime.ts) runs a version: a graph faster than the line
// stays in process; a slower one goes to the worker pool, and a pool that refuses it refuses the
// version with the reason, its in-process session released either way. The pool here is a stand-in
// (its own tests: test/models/onnx/pool/); the graphs are real.
import t, { type Test } from 'tap'
import type { OnnxEvents } from '../../../lib/models/onnx/runtime.js'
import { onnxGraphs } from '../../fixtures/onnx-graphs.js'

type PoolOptions = Readonly<{ onReplaced: (cause: string) => void }>

const runtimeWith = async (t: Test, refusal: string, inlineMaxUs: number) => {
  const placed: string[] = []
  const replaced: string[] = []
  const closed: number[] = []
  class StandIn {
    constructor(options: PoolOptions) {
      options.onReplaced('the worker exited with code 1')
    }
    add = async () => Promise.reject(new Error(refusal))
    close = (budgetMs: number) => void closed.push(budgetMs)
  }
  const { createOnnxRuntime } = await t.mockImport<typeof import('../../../lib/models/onnx/runtime.js')>('../../../lib/models/onnx/runtime.js', {
    '../../../lib/models/onnx/pool/pool.js': { OnnxPool: StandIn },
  })
  const events: OnnxEvents = {
    placed: (model, runUs, where) => void placed.push(`${model.name} ${where} ${runUs > 0}`),
    workerReplaced: (cause) => void replaced.push(cause),
  }
  const pool = { workers: 1, maxRows: 64, maxDelayUs: 0, queueRows: 64, timeoutMs: 1000, series: undefined as never }
  return { runtime: createOnnxRuntime({ threads: 1, pool, inlineMaxUs, events }), placed, replaced, closed }
}

t.test('a graph under the line stays in process; none goes to the pool, which is never made', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const s = await runtimeWith(t, 'unused', 10_000_000)
  const { model, payload } = s.runtime.read([graphs.bytes('dense'), undefined, undefined], { name: 'dense', version: '1' })
  const predictor = await s.runtime.load(model, payload)
  t.teardown(() => predictor.dispose())
  t.same(s.placed, ['dense process true'])
  t.match(await predictor.predict(new Float64Array(4), 1), { labels: { length: 1 } })
  s.runtime.close(100)
  t.same(s.closed, [], 'no pool to close')
})

t.test('a graph the pool refuses is refused with the reason, and a worker replaced is told', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const s = await runtimeWith(t, '[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : out of memory', 0)
  const { model, payload } = s.runtime.read([graphs.bytes('dense'), undefined, undefined], { name: 'dense', version: '1' })
  await t.rejects(s.runtime.load(model, payload), { message: 'the ONNX workers cannot load the graph: out of memory' })
  t.same(s.placed, [], 'placed nowhere')
  t.same(s.replaced, ['the worker exited with code 1'])
  s.runtime.close(250)
  t.same(s.closed, [250], 'the pool made for it closes with the service')
})
