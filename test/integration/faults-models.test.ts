// Faults: a model artifact corrupted under a running service with hot reload on (a real directory
// store, the real 1 s schedule): a copy cut short, as a deploy interrupted half way would leave it,
// then a damaged copy whose bytes no longer match its sha256. Predictions keep coming over HTTP the
// whole time and never fail; the old model serves until a whole, valid artifact arrives, which is
// then served by itself, with nothing restarted.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startApp, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { corrupted, rebuilt, shippedFiles } from '../fixtures/model-registry.js'
import { tempTree } from '../fixtures/model-store.js'
import { rawArtifact } from '../fixtures/models.js'

const ROW = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }

type Prediction = Readonly<{ status: number; probabilities: readonly number[] | undefined }>

const predict = async (base: string): Promise<Prediction> => {
  const res = await fetch(`${base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'iris', instances: [ROW] }),
  })
  const body = (await res.json()) as { outputs?: Array<{ name: string; data: number[] }> }
  return { status: res.status, probabilities: body.outputs?.find((o) => o.name === 'probabilities')?.data }
}

const served = async (base: string): Promise<{ state: unknown; sha256: unknown }> => {
  const body = (await (await fetch(`${base}/api/v1/models/iris`)).json()) as Record<string, unknown>
  return { state: body['state'], sha256: body['sha256'] }
}

const waitForEvent = async (running: Running, event: string, count: number): Promise<void> => {
  const deadline = performance.now() + 10_000
  while (running.lines().filter((l) => l.event === event).length < count) {
    if (performance.now() > deadline) throw new Error(`no ${event} number ${count} within 10 s`)
    await sleep(20)
  }
}

t.test('an artifact corrupted during hot reload: the old model serves on, and the fixed artifact is served by itself', async (t) => {
  const root = await tempTree(t, shippedFiles())
  const file = join(root, 'iris/1/model.json')
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_MODEL_RELOAD_INTERVAL_S: '1' })
  running.app.models.start()
  const { base } = running
  const original = rawArtifact('iris').sha256 as string
  const before = await predict(base)
  t.equal(before.status, 200)
  t.same(await served(base), { state: 'READY', sha256: original })

  // Predictions keep coming throughout, as traffic would.
  const seen: Prediction[] = []
  let isRunning = true
  const traffic = (async () => {
    while (isRunning) {
      seen.push(await predict(base))
      await sleep(10)
    }
  })()
  t.teardown(async () => {
    isRunning = false
    await traffic
  })

  const fix = rebuilt('iris')
  for (const [count, what, bytes, reason] of [
    [1, 'cut short', fix.slice(0, Math.floor(fix.length / 2)), /^iris\/1\/model\.json: /],
    [2, 'with bytes that no longer match its sha256', corrupted('iris'), /sha256: does not match the content/],
  ] as const) {
    await writeFile(file, bytes)
    await waitForEvent(running, 'model_reload_failed', count)
    t.match(
      running.lines().filter((l) => l.event === 'model_reload_failed')[count - 1],
      { level: 'warning', model: 'iris', version: '1', reason },
      `${what}: the failed reload is logged`,
    )
    t.same(await predict(base), before, `${what}: the old model still answers, the same prediction`)
    t.same(await served(base), { state: 'READY', sha256: original }, `${what}: still READY, on the old artifact`)
    t.equal((await fetch(`${base}/ready`)).status, 200, `${what}: the instance stays ready`)
    t.equal((await fetch(`${base}/v2/models/iris/ready`)).status, 200)
  }
  t.equal(sample((await running.app.metrics.render(undefined)).text, 'svc_model_ready', { model: 'iris', version: '1', environment: 'dev' }), 1)

  // The whole, valid artifact arrives: the next pass serves it, nothing restarted.
  await writeFile(file, fix)
  await waitForEvent(running, 'model_reloaded', 1)
  const sha256 = (JSON.parse(fix) as { sha256: string }).sha256
  t.same(await served(base), { state: 'READY', sha256 }, 'the fixed artifact is served')
  const after = await predict(base)
  t.equal(after.status, 200)
  t.not(JSON.stringify(after.probabilities), JSON.stringify(before.probabilities), 'with its own predictions')
  t.match(
    running.lines().find((l) => l.event === 'model_loaded' && l['sha256'] === sha256.slice(0, 12)),
    { model: 'iris', version: '1' },
  )

  isRunning = false
  await traffic
  t.ok(seen.length > 20, `${seen.length} predictions during the faults`)
  t.same(
    seen.filter((p) => p.status !== 200),
    [],
    'none of them failed',
  )
  const known = new Set([JSON.stringify(before.probabilities), JSON.stringify(after.probabilities)])
  t.same(
    seen.filter((p) => !known.has(JSON.stringify(p.probabilities))),
    [],
    'each came from the old model or the fixed one, never anything else',
  )
  t.same(
    running.lines().filter((l) => l.event === 'model_unavailable'),
    [],
    'the model was never taken out of service',
  )
})
