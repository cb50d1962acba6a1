// The runtimes svc serves with, in the order a version's files are tried: the kernel's model.json
// before an ONNX graph's model.onnx.
import t from 'tap'
import { servedRuntimes } from '../../../lib/models/registry/runtimes.js'

t.test('the kernel first, then ONNX Runtime, in a frozen list', async (t) => {
  const runtimes = servedRuntimes({ onnxThreads: 1 })
  t.same(
    runtimes.map(({ platform, files }) => [platform, files[0]]),
    [
      ['svc', 'model.json'],
      ['onnxruntime', 'model.onnx'],
    ],
  )
  t.ok(Object.isFrozen(runtimes))
})

t.test('each call builds its own ONNX runtime, sharing the kernel', async (t) => {
  const [kernelA, onnxA] = servedRuntimes({ onnxThreads: 1 })
  const [kernelB, onnxB] = servedRuntimes({ onnxThreads: 2 })
  t.equal(kernelA, kernelB)
  t.not(onnxA, onnxB)
})

t.test("a service's ONNX runtime logs where each graph runs and each worker replaced, and closes its pool when the drain begins", async (t) => {
  type Options = import('../../../lib/models/onnx/runtime.js').OnnxRuntimeOptions
  let given: Options | undefined
  const closed: number[] = []
  const { servedRuntimes: served } = await t.mockImport<typeof import('../../../lib/models/registry/runtimes.js')>('../../../lib/models/registry/runtimes.js', {
    '../../../lib/models/onnx/runtime.js': {
      createOnnxRuntime: (options: Options) => {
        given = options
        return { platform: 'onnxruntime', files: ['model.onnx'], optional: [], close: (budgetMs: number) => closed.push(budgetMs) }
      },
    },
  })
  const { Registry } = await import('prom-client')
  const { logLines } = await import('../../fixtures/log-lines.js')
  const { logger, lines } = logLines('info')
  const closing = new AbortController()
  const settings = { workers: 1, inlineMaxUs: 50, maxRows: 64, maxDelayUs: 0, queueRows: 4096, timeoutMs: 10_000 }
  served({ onnxThreads: 1, pool: { settings, metrics: new Registry(), logger, closing: closing.signal, drainTimeoutMs: 2000 } })
  t.match(given, { threads: 1, inlineMaxUs: 50, pool: { workers: 1, maxRows: 64 } })
  const model = { name: 'mlp', version: '2' } as import('../../../lib/models/runtime.js').ModelVersion
  given?.events?.placed(model, 1318.4, 'workers')
  given?.events?.workerReplaced('the worker exited with code 1')
  t.match(lines(), [
    { event: 'onnx_model_placed', level: 'info', model: 'mlp', version: '2', run_us: 1318, runs_in: 'workers' },
    { event: 'onnx_worker_replaced', level: 'error', reason: 'the worker exited with code 1' },
  ])
  closing.abort()
  closing.abort()
  t.same(closed, [1500], 'once, with a quarter of the drain kept for the answers to go out')
})
