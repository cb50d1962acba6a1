// The pool's worker threads (lib/models/onnx/pool/workers.ts), real ones: a session loaded into
// every thread before any takes a batch, a load one refuses refused for all, and a stop that ends
// each thread once it is idle. A thread lost mid-batch: pool.test.ts.
import { once } from 'node:events'
import t from 'tap'
import { Workers } from '../../../../lib/models/onnx/pool/workers.js'
import { onnxGraphs } from '../../../fixtures/onnx-graphs.js'

const X = [{ name: 'X', type: 'float32', data: Float32Array.of(1, 2, 3, 4), dims: [1, 4] }] as const

t.test('every thread loads a session, each runs batches, and a refused load is released everywhere', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  let freed = 0
  const workers = new Workers({ count: 2, threads: 1, onFree: () => freed++, onReplaced: () => t.fail('no thread fails') })
  t.teardown(() => workers.stop())
  await workers.load(1, graphs.bytes('dense'))
  const [a, b] = workers.slots
  t.ok(a?.isReady && b?.isReady, 'both threads hold it')
  const runs = workers.slots.map(
    (slot) =>
      new Promise((resolve) => {
        t.equal(workers.free(), slot, 'a free thread is handed out until it runs')
        workers.run(slot, 1, X, 'probabilities', resolve)
      }),
  )
  t.equal(workers.free(), undefined, 'none is free while both run')
  const outputs = await Promise.all(runs)
  t.match(outputs, [{ data: { length: 3 } }, { data: { length: 3 } }])
  t.equal(freed, 2)
  await t.rejects(workers.load(2, graphs.bytes('unknown-operator')), { message: /Mystery/ })
  const done = new Promise((resolve) => workers.run(workers.free() as NonNullable<ReturnType<Workers['free']>>, 2, X, 'variable', resolve))
  t.same(await done, { error: 'no session 2 in this worker', isWorkerLost: false }, 'the refused session is in no thread')
})

t.test('stopped, each thread ends once idle, and none is replaced', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const workers = new Workers({ count: 1, threads: 1, onFree: () => {}, onReplaced: () => t.fail('a stopped thread is not replaced') })
  await workers.load(1, graphs.bytes('dense'))
  const slot = workers.slots[0] as (typeof workers.slots)[number]
  const ran = new Promise((resolve) => workers.run(slot, 1, X, 'probabilities', resolve))
  workers.stop()
  t.match(await ran, { data: { length: 3 } }, 'the batch under way ends first')
  await once(slot.worker, 'exit')
  t.equal(workers.slots[0], slot)
})
