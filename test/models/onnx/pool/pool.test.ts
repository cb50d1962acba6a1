// The ONNX worker pool (lib/models/onnx/pool.ts) with real worker threads and onnxruntime-node:
// concurrent requests joined into batches and split back, each answered as if alone; a failed batch
// run request by request; the queue's bound, the time limit, a retired build and the shutdown.
import { Registry } from 'prom-client'
import t, { type Test } from 'tap'
import { PredictionBusyError } from '../../../../lib/models/onnx/pool/busy-error.js'
import { createPoolSeries, OnnxPool, type PoolOptions } from '../../../../lib/models/onnx/pool/pool.js'
import { createOnnxRuntime } from '../../../../lib/models/onnx/runtime.js'
import type { ClassPrediction, Prediction } from '../../../../lib/models/runtime.js'
import { type OnnxGraphName, onnxGraphs } from '../../../fixtures/onnx-graphs.js'
import { sample } from '../../../fixtures/metrics-text.js'

const inProcess = createOnnxRuntime({ threads: 1 })

/** A pool of one worker at the service's defaults, its series in a registry of its own, but for `overrides`. */
const optionsWith = (overrides: Partial<PoolOptions> = {}): PoolOptions => ({
  workers: 1,
  threads: 1,
  maxRows: 64,
  maxDelayUs: 0,
  queueRows: 4096,
  timeoutMs: 10_000,
  series: createPoolSeries(new Registry()),
  onReplaced: () => {},
  ...overrides,
})

type Setup = Readonly<{
  pool: OnnxPool
  metrics: Registry
  build: Awaited<ReturnType<OnnxPool['add']>>
  alone: (features: Float64Array, rows: number) => Promise<Prediction>
}>

const setup = async (t: Test, graph: OnnxGraphName, options: Partial<PoolOptions> = {}, limits = {}): Promise<Setup | undefined> => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return undefined
  const { model, payload } = inProcess.read([graphs.bytes(graph), undefined, undefined], { name: graph, version: '1' })
  const metrics = new Registry()
  const pool = new OnnxPool(optionsWith({ series: createPoolSeries(metrics), ...options }))
  t.teardown(() => pool.close(0))
  const build = await pool.add(model, payload.plan, payload.bytes, limits)
  const reference = await inProcess.load(model, payload)
  t.teardown(() => reference.dispose())
  return { pool, metrics, build, alone: (features, rows) => reference.predict(features, rows) }
}

/** `count` rows of four features, each its own, from a fixed sequence. */
const denseRows = (count: number): Float64Array => Float64Array.from({ length: count * 4 }, (_, i) => ((i * 7919) % 23) / 4 - 2.5)

const isClose = (a: ArrayLike<number>, b: ArrayLike<number>): boolean =>
  a.length === b.length && Array.from(a).every((value, i) => Math.abs(value - (b[i] as number)) <= 1e-5 * Math.max(1, Math.abs(value)))

t.test('concurrent requests run as batches, and each gets the labels and probabilities it gets alone', async (t) => {
  const s = await setup(t, 'dense')
  if (s === undefined) return
  const requests = Array.from({ length: 40 }, (_, i) => denseRows(1 + (i % 3)))
  const answers = await Promise.all(requests.map((features) => s.build.predict(features, features.length / 4)))
  for (const [i, features] of requests.entries()) {
    const own = answers[i] as ClassPrediction & { waitedS: number }
    const alone = (await s.alone(features, features.length / 4)) as ClassPrediction
    t.same([...own.labels], [...alone.labels], `request ${i}: the same labels`)
    t.ok(isClose(own.probabilities, alone.probabilities), `request ${i}: probabilities within 1e-5`)
    t.ok(own.waitedS >= 0)
  }
  const text = await s.metrics.metrics()
  const runs = sample(text, 'svc_onnx_batch_rows_count', {}) ?? 0
  t.ok(runs < 40, `${runs} runs for 40 requests: requests were joined`)
  t.equal(
    sample(text, 'svc_onnx_batch_rows_sum', {}),
    requests.reduce((sum, features) => sum + features.length / 4, 0),
    'every row ran once',
  )
  t.equal(sample(text, 'svc_onnx_queue_rows', {}), 0, 'nothing left waiting')
})

t.test('a batch holds whole requests up to its max rows; a larger request runs alone; a version may set its own', async (t) => {
  const s = await setup(t, 'dense', { maxRows: 6 }, { maxRows: 4 })
  if (s === undefined) return
  const requests = [...Array.from({ length: 10 }, () => denseRows(3)), denseRows(9)]
  const answers = await Promise.all(requests.map((features) => s.build.predict(features, features.length / 4)))
  t.same(
    answers.map((answer) => (answer as ClassPrediction).labels.length),
    requests.map((features) => features.length / 4),
  )
  const text = await s.metrics.metrics()
  t.equal(sample(text, 'svc_onnx_batch_rows_bucket', { le: '4' }), 11 - 1, 'every batch of 3-row requests held one: the version says 4 rows')
  t.equal(sample(text, 'svc_onnx_batch_rows_bucket', { le: '8' }), 10, 'the 9-row request ran on its own')
})

t.test('a failed batch runs each of its requests alone: only the request at fault fails, with the reason', async (t) => {
  const s = await setup(t, 'gather')
  if (s === undefined) return
  // Queued behind a first batch, the next ones join: one holds an index outside the table.
  const indices = [0, 1, 2, 7, 1, 0]
  const settled = await Promise.allSettled(indices.map((index) => s.build.predict(Float64Array.of(index), 1)))
  for (const [i, index] of indices.entries()) {
    const outcome = settled[i] as PromiseSettledResult<Prediction>
    if (index === 7) t.match(outcome, { status: 'rejected', reason: { message: /model gather version 1: onnxruntime failed: .*indices/i } })
    else t.match(outcome, { status: 'fulfilled', value: { labels: [index === 0 ? 1 : index === 1 ? 0 : 0] } }, `index ${index} answered`)
  }
})

t.test('past its bound in rows the queue refuses at once, as overload', async (t) => {
  const s = await setup(t, 'dense', { queueRows: 5 })
  if (s === undefined) return
  const settled = await Promise.allSettled(Array.from({ length: 12 }, () => s.build.predict(denseRows(1), 1)))
  const refused = settled.filter((outcome) => outcome.status === 'rejected')
  t.ok(refused.length >= 12 - 1 - 5, `${refused.length} refused: at most one running and five waiting`)
  t.ok(
    refused.every((outcome) => outcome.reason instanceof PredictionBusyError && outcome.reason.reason === 'queue_full'),
    'each refused as queue_full',
  )
})

t.test('a request not answered within the time limit is answered as busy; the others are unaffected', async (t) => {
  const s = await setup(t, 'dense', { timeoutMs: 1, maxRows: 1 })
  if (s === undefined) return
  const settled = await Promise.allSettled(Array.from({ length: 300 }, () => s.build.predict(denseRows(1), 1)))
  const late = settled.filter((outcome) => outcome.status === 'rejected')
  t.ok(late.length > 0, `${late.length} of 300 timed out`)
  t.ok(late.every((outcome) => outcome.reason instanceof PredictionBusyError && outcome.reason.reason === 'timeout'))
  t.ok(settled.length === 300, 'every request answered once')
})

t.test('a retired build answers what it holds, then refuses', async (t) => {
  const s = await setup(t, 'dense')
  if (s === undefined) return
  const held = Array.from({ length: 20 }, () => s.build.predict(denseRows(2), 2))
  const retired = s.build.retire()
  t.equal((await Promise.all(held)).length, 20, 'what was queued is answered')
  await retired
  await t.rejects(s.build.predict(denseRows(1), 1), { message: 'model dense version 1 was replaced; its session is released' })
})

t.test('on close, batches go on for the budget; then what is left, and anything new, is answered as shutting down', async (t) => {
  const s = await setup(t, 'dense', { maxRows: 1 })
  if (s === undefined) return
  const held = Promise.allSettled(Array.from({ length: 2000 }, () => s.build.predict(denseRows(1), 1)))
  s.pool.close(20)
  const settled = await held
  const answered = settled.filter((outcome) => outcome.status === 'fulfilled').length
  const stopped = settled.filter((outcome) => outcome.status === 'rejected' && (outcome.reason as PredictionBusyError).reason === 'shutting_down').length
  t.ok(answered > 0 && stopped > 0 && answered + stopped === 2000, `${answered} answered within the budget, ${stopped} answered 503`)
  await t.rejects(s.build.predict(denseRows(1), 1), new PredictionBusyError('shutting_down'))
})

t.test('with a max delay, a free worker waits for company, and a full batch goes at once', async (t) => {
  const s = await setup(t, 'dense', { maxDelayUs: 50_000, maxRows: 4 })
  if (s === undefined) return
  const first = s.build.predict(denseRows(1), 1)
  const second = new Promise<Prediction>((resolve) => setTimeout(() => resolve(s.build.predict(denseRows(1), 1)), 10))
  await Promise.all([first, second])
  t.equal(sample(await s.metrics.metrics(), 'svc_onnx_batch_rows_count', {}), 1, 'the second request joined the first, 10 ms later')
  await Promise.all(Array.from({ length: 4 }, () => s.build.predict(denseRows(1), 1)))
  t.equal(sample(await s.metrics.metrics(), 'svc_onnx_batch_rows_count', {}), 2, 'four rows: one batch, without the wait')
})

t.test('an answer the graph got wrong fails its own request: a non-finite score, or an output of the wrong width for all', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const metadata = (features: string[]) => Buffer.from(JSON.stringify({ features, classes: ['x', 'y', 'z'] }))
  const pool = new OnnxPool(optionsWith({ queueRows: 100 }))
  t.teardown(() => pool.close(0))
  const add = async (features: string[]) => {
    const { model, payload } = inProcess.read([graphs.bytes('scores'), metadata(features), undefined], { name: 'scores', version: '1' })
    return pool.add(model, payload.plan, payload.bytes, {})
  }
  const three = await add(['a', 'b', 'c'])
  const settled = await Promise.allSettled([three.predict(Float64Array.of(1, 2, 3), 1), three.predict(Float64Array.of(1, Number.NaN, 3), 1)])
  t.match(settled, [
    { status: 'fulfilled' },
    { status: 'rejected', reason: { message: 'model scores version 1: the graph answered a non-finite score in row 0' } },
  ])
  const four = await add(['a', 'b', 'c', 'd'])
  await t.rejects(four.predict(Float64Array.of(1, 2, 3, 4), 1), { message: /output scores has 4 values for 1 rows of 3; the graph and its classes disagree/ })
})

t.test('a graph the workers cannot load is refused with onnxruntime reason', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const pool = new OnnxPool(optionsWith({ workers: 2, queueRows: 100 }))
  t.teardown(() => pool.close(0))
  const { model, payload } = inProcess.read([graphs.bytes('unknown-operator'), undefined, undefined], { name: 'u', version: '1' })
  await t.rejects(pool.add(model, payload.plan, payload.bytes, {}), { message: /Mystery/ })
})

t.test('a worker that exits fails only its batch, naming the cause, and is replaced with its sessions', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const { Worker } = await import('node:worker_threads')
  const started: InstanceType<typeof Worker>[] = []
  class Captured extends Worker {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args)
      started.push(this)
    }
  }
  const workers = await t.mockImport<typeof import('../../../../lib/models/onnx/pool/workers.js')>('../../../../lib/models/onnx/pool/workers.js', {
    'node:worker_threads': { Worker: Captured },
  })
  const { OnnxPool: Pool } = await t.mockImport<typeof import('../../../../lib/models/onnx/pool/pool.js')>('../../../../lib/models/onnx/pool/pool.js', {
    '../../../../lib/models/onnx/pool/workers.js': workers,
  })
  const replaced: string[] = []
  const metrics = new Registry()
  const pool = new Pool(optionsWith({ series: createPoolSeries(metrics), onReplaced: (cause) => replaced.push(cause) }))
  t.teardown(() => pool.close(0))
  const { model, payload } = inProcess.read([graphs.bytes('dense'), undefined, undefined], { name: 'dense', version: '1' })
  const build = await pool.add(model, payload.plan, payload.bytes, {})
  // Ended idle, with a batch posted to it at once: a thread ended while onnxruntime runs aborts the process.
  const ending = (started[0] as InstanceType<typeof Worker>).terminate()
  const running = build.predict(denseRows(2), 2)
  await ending
  await t.rejects(running, { message: 'model dense version 1: the ONNX worker failed: the worker exited with code 1' })
  t.same(replaced, ['the worker exited with code 1'])
  t.equal(started.length, 2, 'a new worker took its place')
  t.match(await build.predict(denseRows(2), 2), { labels: { length: 2 } }, 'and runs the build it loaded again')
  t.equal(sample(await metrics.metrics(), 'svc_onnx_worker_restarts_total', {}), 1)
  // Stopped first: a stopping thread takes no message, so the load posted next is never answered.
  const stopping = (started[1] as InstanceType<typeof Worker>).terminate()
  const adding = pool.add({ ...model, version: '2' }, payload.plan, payload.bytes, {})
  await stopping
  await t.rejects(adding, { message: 'the ONNX worker failed: the worker exited with code 1' }, 'a worker lost while loading refuses the load')
  t.match(await build.predict(denseRows(1), 1), { labels: { length: 1 } }, 'the third worker serves the first build')
})

t.test('builds share the workers: a batch holds one build, the oldest request first; a regressor answers as alone', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const pool = new OnnxPool(optionsWith())
  t.teardown(() => pool.close(0))
  const builds = await Promise.all(
    (['dense', 'forest'] as const).map(async (graph) => {
      const { model, payload } = inProcess.read([graphs.bytes(graph), undefined, undefined], { name: graph, version: '1' })
      const reference = await inProcess.load(model, payload)
      t.teardown(() => reference.dispose())
      return { width: model.inputs.length, pooled: await pool.add(model, payload.plan, payload.bytes, {}), reference }
    }),
  )
  const order: number[] = []
  const requests = Array.from({ length: 30 }, (_, i) => {
    const { width, pooled, reference } = builds[i % 2 === 0 || i > 20 ? 0 : 1] as (typeof builds)[number]
    const features = Float64Array.from({ length: width }, (_, j) => ((i + j) % 5) - 2)
    return pooled.predict(features, 1).then(async (answer) => {
      order.push(i)
      t.ok(isClose(Object.values(answer)[0] as ArrayLike<number>, Object.values(await reference.predict(features, 1))[0] as ArrayLike<number>))
    })
  })
  await Promise.all(requests)
  t.equal(order.length, 30)
  const idle = builds[1] as (typeof builds)[number]
  await idle.pooled.retire()
  await t.rejects(idle.pooled.predict(Float64Array.of(0, 0, 0, 0, 0, 0, 0, 0), 1), { message: /replaced/ }, 'an idle build retires at once')
})
