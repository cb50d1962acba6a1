// ONNX models in the worker pool, over HTTP (SVC_ONNX_INLINE_MAX_US=0 sends every graph there):
// concurrent requests answered as a model in process answers them; a full queue answered 503 with
// Retry-After and counted as overload, not as the version's error; hot reloads under load with two
// workers; and a shutdown that answers every queued request.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { startApp, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { tempTree } from '../fixtures/model-store.js'
import { type OnnxGraphs, onnxGraphs } from '../fixtures/onnx-graphs.js'

type Answer = Readonly<{ status: number; retryAfter: string | null; body: Record<string, unknown> }>

const FEATURES = ['a', 'b', 'c', 'd']
const POOLED: Env = { SVC_ONNX_INLINE_MAX_US: '0', SVC_ONNX_WORKERS: '2' }

/** Writes version `version` of `dense` (classes low, mid, high) as the default; `type` makes each build's bytes its own. */
const placeDense = async (graphs: OnnxGraphs, root: string, version: string, type = 'mlp'): Promise<void> => {
  const dir = join(root, 'dense', version)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'model.onnx'), graphs.bytes('dense'))
  await writeFile(join(dir, 'metadata.json'), JSON.stringify({ features: FEATURES, classes: ['low', 'mid', 'high'], type }))
  await writeFile(join(root, 'dense', 'manifest.json'), JSON.stringify({ default_version: version, versions: [version] }))
}

const serve = async (t: Test, graphs: OnnxGraphs, env: Env): Promise<Running & { root: string; predict: (row: number) => Promise<Answer> }> => {
  const root = await tempTree(t, {})
  await placeDense(graphs, root, '1')
  const running = await startApp(t, { SVC_MODEL_STORE: root, ...env })
  const predict = async (row: number): Promise<Answer> => {
    const inputs = Object.fromEntries(FEATURES.map((name, j) => [name, ((row + j) % 7) - 3]))
    const res = await fetch(`${running.base}/api/v1/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'dense', instances: [inputs] }),
    })
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> }
  }
  return { ...running, root, predict }
}

type Outputs = Readonly<{ labels: string[]; probabilities: number[] }>

/** An answer's label and probabilities, without what differs between runs of the same rows (ids). */
const outputsOf = (answer: Answer): Outputs => {
  const [label, probabilities] = answer.body['outputs'] as { data: unknown[] }[]
  return { labels: label?.data as string[], probabilities: probabilities?.data as number[] }
}

t.test('pooled, concurrent requests get the answers the model gives in process, within float32 rounding', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const pooled = await serve(t, graphs, POOLED)
  const inline = await serve(t, graphs, { SVC_ONNX_WORKERS: '0' })
  const rows = Array.from({ length: 64 }, (_, i) => i)
  const [fromPool, fromProcess] = await Promise.all([Promise.all(rows.map(pooled.predict)), Promise.all(rows.map(inline.predict))])
  t.same(
    fromPool.map((answer) => answer.status),
    rows.map(() => 200),
  )
  for (const i of rows) {
    const a = outputsOf(fromPool[i] as Answer)
    const b = outputsOf(fromProcess[i] as Answer)
    t.same(a.labels, b.labels, `row ${i}: the same label`)
    t.ok(
      a.probabilities.length === 3 && a.probabilities.every((p, j) => Math.abs(p - (b.probabilities[j] as number)) <= 1e-5),
      `row ${i}: probabilities within 1e-5`,
    )
  }
  t.match(
    pooled.lines().find((line) => line.event === 'onnx_model_placed'),
    { model: 'dense', version: '1', runs_in: 'workers' },
  )
  t.match(
    inline.lines().find((line) => line.event === 'onnx_model_placed'),
    undefined,
    'with no workers, nothing is placed',
  )
  const text = await (await fetch(`${pooled.base}/metrics`)).text()
  t.ok((sample(text, 'svc_onnx_batch_rows_count', { environment: pooled.config.environment }) ?? 0) > 0, 'the pool ran batches')
})

t.test('a full queue answers 503 with Retry-After, counted as overloaded, never as the version server_error', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const s = await serve(t, graphs, { ...POOLED, SVC_ONNX_WORKERS: '1', SVC_BATCH_QUEUE_ROWS: '1', SVC_BATCH_MAX_ROWS: '1' })
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => s.predict(i)))
  const busy = answers.filter((answer) => answer.status === 503)
  t.ok(busy.length > 0, `${busy.length} of 200 refused`)
  t.ok(
    answers.every((answer) => answer.status === 200 || answer.status === 503),
    'every other request answered',
  )
  t.match(busy[0], { retryAfter: '1', body: { type: 'urn:svc:problem:overloaded', status: 503, reason: 'queue_full' } })
  const text = await (await fetch(`${s.base}/metrics`)).text()
  const count = (outcome: string) =>
    sample(text, 'svc_model_prediction_requests_total', { model: 'dense', version: '1', outcome, environment: s.config.environment })
  t.equal(count('overloaded'), busy.length)
  t.equal(count('server_error'), 0)
  t.equal(count('success'), 200 - busy.length)
})

t.test('twenty hot reloads under load with two workers: every request answered by a build, none lost', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const s = await serve(t, graphs, POOLED)
  let isLoading = true
  const statuses: number[] = []
  const load = (async () => {
    for (let row = 0; isLoading; row += 16) {
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => s.predict(row + i)))
      for (const answer of answers) statuses.push(answer.status)
    }
  })()
  for (let i = 0; i < 20; i++) {
    await placeDense(graphs, s.root, String(2 + i), `mlp-${i}`)
    await s.app.models.reload()
  }
  isLoading = false
  await load
  t.match(s.app.models.entry('dense'), { state: 'READY', defaultVersion: '21' })
  t.ok(statuses.length >= 16, `${statuses.length} requests during the reloads`)
  t.same(
    statuses.filter((status) => status !== 200),
    [],
    'no request failed',
  )
  t.equal(s.lines().filter((line) => line.event === 'model_dispose_failed').length, 0, 'every replaced build was released')
})

t.test('a drain answers every queued request: run within its budget, or 503 shutting_down before the connections close', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const root = await tempTree(t, {})
  const features = Array.from({ length: 16 }, (_, j) => `x${j}`)
  await mkdir(join(root, 'wide', '1'), { recursive: true })
  await writeFile(join(root, 'wide', '1', 'model.onnx'), graphs.bytes('wide'))
  await writeFile(join(root, 'wide', '1', 'metadata.json'), JSON.stringify({ features }))
  await writeFile(join(root, 'wide', 'manifest.json'), JSON.stringify({ default_version: '1', versions: ['1'] }))
  // A free worker waits up to a second for company, so requests queue whatever the machine's speed;
  // the drain then runs them at once, one 5 000-row request (tens of ms) a batch, for its 75 ms.
  const env = {
    SVC_MODEL_STORE: root,
    SVC_ONNX_INLINE_MAX_US: '0',
    SVC_ONNX_WORKERS: '1',
    SVC_MAX_BATCH: '5000',
    SVC_BATCH_MAX_ROWS: '5000',
    SVC_BATCH_MAX_DELAY_US: '1000000',
    SVC_BATCH_QUEUE_ROWS: '1000000',
    SVC_DRAIN_TIMEOUT_MS: '100',
  }
  const s = await startApp(t, env)
  const instances = Array.from({ length: 5000 }, (_, r) => Object.fromEntries(features.map((name, j) => [name, ((r * 3 + j) % 9) / 2 - 2])))
  const body = JSON.stringify({ model: 'wide', instances })
  const requests = Array.from({ length: 40 }, () =>
    fetch(`${s.base}/api/v1/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }),
      (error: unknown) => error,
    ),
  )
  const queued = async (): Promise<number> =>
    sample(await (await fetch(`${s.base}/metrics`)).text(), 'svc_onnx_queue_rows', { environment: s.config.environment }) ?? 0
  const started = performance.now()
  while ((await queued()) < 20_000 && performance.now() - started < 900) await new Promise((resolve) => setTimeout(resolve, 5))
  const held = (await queued()) / 5000
  t.ok(held >= 4, `${held} requests waiting for the worker`)
  await s.app.server.drain()
  const settled = await Promise.all(requests)
  // A connection still in the kernel's queue when the listener closed is reset before svc holds it.
  const statuses = settled.map((answer) => (answer instanceof Error ? answer.message : (answer as { status: number }).status))
  t.ok(statuses.filter((status) => status === 200 || status === 503).length >= held, 'each request held was answered 200 or 503, none cut off')
  const stopped = settled.filter((answer) => !(answer instanceof Error) && (answer as { status: number }).status === 503) as { body: Record<string, unknown> }[]
  t.ok(stopped.length > 0, `${statuses.filter((status) => status === 200).length} answered in the budget, ${stopped.length} answered 503`)
  t.ok(stopped.every((answer) => answer.body['reason'] === 'shutting_down'))
})
