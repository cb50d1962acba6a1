// What an ONNX worker thread does with the pool's messages (lib/models/onnx/worker-session.ts), on
// the real onnxruntime-node: in this thread, where coverage sees it, and once through a real worker
// thread started from worker.ts, as the pool starts it.
import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import t from 'tap'
import type { ToPool, ToWorker } from '../../../../lib/models/onnx/pool/messages.js'
import { createWorkerSession } from '../../../../lib/models/onnx/pool/worker-session.js'
import { onnxGraphs } from '../../../fixtures/onnx-graphs.js'

/** A handler whose answers come back in order, awaited one at a time. */
const inThread = () => {
  const answers: ToPool[] = []
  let wake: (() => void) | undefined
  const handle = createWorkerSession((message) => {
    answers.push(message)
    wake?.()
  })
  const next = async (): Promise<ToPool> => {
    while (answers.length === 0) await new Promise<void>((resolve) => (wake = resolve))
    return answers.shift() as ToPool
  }
  return { send: (message: ToWorker) => handle(message), next }
}

const ROW = new Float32Array([1, 2, 3, 4])

t.test('a session loaded runs batches and answers the fetched output; released, it runs no more', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { send, next } = inThread()
  send({ kind: 'load', id: 7, bytes: graphs.bytes('dense'), threads: 1 })
  t.same(await next(), { kind: 'loaded', id: 7 })
  const feeds = [{ name: 'X', type: 'float32', data: new Float32Array([...ROW, ...ROW]), dims: [2, 4] }] as const
  send({ kind: 'run', id: 7, seq: 1, feeds, fetch: 'probabilities' })
  const ran = await next()
  t.equal(ran.kind, 'ran')
  const data = [...(ran.kind === 'ran' ? ran.data : [])]
  t.equal(data.length, 6, 'two rows of three probabilities')
  const [a = 0, b = 0, c = 0, d] = data
  t.ok(Math.abs(a + b + c - 1) < 1e-6 && a === d, 'each row sums to 1, the same row alike')
  send({ kind: 'run', id: 7, seq: 2, feeds, fetch: 'nothing' })
  t.match(await next(), { kind: 'run_failed', seq: 2, message: /nothing/ })
  send({ kind: 'release', id: 7 })
  send({ kind: 'run', id: 7, seq: 3, feeds, fetch: 'probabilities' })
  t.same(await next(), { kind: 'run_failed', seq: 3, message: 'no session 7 in this worker' })
})

t.test('a graph onnxruntime cannot load is load_failed, naming why; an output that is no float tensor fails its run', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { send, next } = inThread()
  send({ kind: 'load', id: 1, bytes: graphs.bytes('unknown-operator'), threads: 1 })
  t.match(await next(), { kind: 'load_failed', id: 1, message: /\w/ })
  send({ kind: 'load', id: 2, bytes: graphs.bytes('dense-argmax'), threads: 1 })
  t.same(await next(), { kind: 'loaded', id: 2 })
  send({ kind: 'run', id: 2, seq: 1, feeds: [{ name: 'X', type: 'float32', data: ROW, dims: [1, 4] }], fetch: 'label' })
  t.same(await next(), { kind: 'run_failed', seq: 1, message: 'output label is not a float tensor' })
})

t.test('worker.ts, started as a worker thread, answers the same messages', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const worker = new Worker(new URL('../../../../lib/models/onnx/pool/worker.ts', import.meta.url))
  t.teardown(() => worker.terminate())
  worker.postMessage({ kind: 'load', id: 1, bytes: graphs.bytes('dense'), threads: 1 })
  t.same((await once(worker, 'message'))[0], { kind: 'loaded', id: 1 })
  worker.postMessage({ kind: 'run', id: 1, seq: 9, feeds: [{ name: 'X', type: 'float32', data: ROW, dims: [1, 4] }], fetch: 'probabilities' })
  t.match((await once(worker, 'message'))[0], { kind: 'ran', seq: 9, data: { length: 3 } })
})
