// Shadow copies over real HTTP (lib/serving/shadow/): every copied request is predicted again by the
// shadow version after its reply is written, compared row by row with what the client was given,
// and counted in the shadow's own series and drift bin counters, never in the prediction series or
// the default version's window. A shadow that throws or hangs never touches a reply; copies past
// the queue's cap are dropped and counted, and no real request is shed for them. One run at a time:
// while one that timed out still runs, later copies are dropped; a reply the server replaced with a
// 500 is not compared.
import type { IncomingMessage, ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import type { App } from '../../lib/app.js'
import type { RouteDef } from '../../lib/core/pipeline.js'
import type { InferRequest } from '../../lib/models/inference/request.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import type { Prediction } from '../../lib/models/runtime.js'
import { kernelRuntime } from '../../lib/models/kernel/runtime.js'
import { startApp, type Running } from '../fixtures/app.js'
import { fakeFiles, fakeRuntime } from '../fixtures/model-runtime.js'
import { artifactBytes } from '../fixtures/models.js'
import { tempTree } from '../fixtures/model-store.js'
import { inParallel, irisRow, irisVersions, predictIris, scrape, total, until } from '../fixtures/rollout.js'

const withShadow = (percent: number): Record<string, unknown> => ({ default_version: '1', versions: ['1', '2'], shadow: { version: '2', percent } })

/** Iris 1 on the kernel, and iris 2 on the fake runtime, whose predictions a test can make fail or hang. */
const fakeShadow = async (t: Test, env: Record<string, string> = {}): Promise<{ running: Running; runtime: ReturnType<typeof fakeRuntime> }> => {
  const root = await tempTree(t, {
    'iris/manifest.json': JSON.stringify(withShadow(100)),
    'iris/1/model.json': artifactBytes('iris'),
    ...fakeFiles('iris', '2'),
  })
  const runtime = fakeRuntime()
  const running = await startApp(t, { SVC_MODEL_STORE: root, ...env }, [], [kernelRuntime, runtime])
  return { running, runtime }
}

const idle = (running: Running): Promise<void> => until(() => running.app.shadows.pending() === 0, 'the shadow queue to empty')

t.test('a 100 % shadow predicts every request again, compared with the answer given, counted apart', async (t) => {
  const root = await tempTree(t, irisVersions(withShadow(100)))
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const N = 300
  const answers = await inParallel(N, 8, (i) => predictIris(running.base, { instances: [irisRow(i)] }))
  t.ok(
    answers.every((a) => a.status === 200 && a.version === '1'),
    'the default answers every request',
  )
  await idle(running)
  // What the shadow would have said, asked directly: the disagreements the service must have counted.
  const direct = await inParallel(N, 8, (i) => predictIris(running.base, { version: '2', instances: [irisRow(i)] }))
  const label = (a: { body: Record<string, unknown> }): unknown => (a.body['outputs'] as Array<{ data: unknown[] }>)[0]?.data[0]
  const differing = answers.filter((a, i) => label(a) !== label(direct[i] as typeof a)).length
  t.ok(differing > 0 && differing < N, `the retrained version disagrees on some rows (${differing} of ${N})`)

  const text = await scrape(running)
  const shadow = { model: 'iris', version: '2' }
  t.equal(total(text, 'svc_model_shadow_predictions_total', { ...shadow, outcome: 'success' }), N, 'every copy predicted')
  t.equal(total(text, 'svc_model_shadow_predictions_total', { ...shadow, outcome: 'error' }), 0)
  t.equal(total(text, 'svc_model_shadow_rows_total', shadow), N)
  t.equal(total(text, 'svc_model_shadow_disagreements_total', shadow), differing, 'disagreements are the rows whose label differs')
  t.equal(total(text, 'svc_model_shadow_dropped_total', shadow), 0, 'none dropped')
  t.equal(total(text, 'svc_model_shadow_duration_seconds_count', shadow), N)
  t.equal(total(text, 'svc_model_rollout_percent', { ...shadow, role: 'shadow' }), 100)
  t.equal(
    total(text, 'svc_model_prediction_requests_total', { ...shadow, outcome: 'success' }),
    N,
    "the prediction series count only the direct requests, never the shadow's",
  )
  t.equal(
    total(text, 'svc_drift_bin_total', { ...shadow, feature: 'sepal_length' }),
    2 * N,
    "the shadow's rows (and the direct ones) are in its own bin counters",
  )
  const drift = (await (await fetch(`${running.base}/api/v1/models/iris`)).json()) as { drift: { window: { samples: number } } }
  t.equal(drift.drift.window.samples, N, "the window holds the default's rows only")
})

t.test("the reply is written before the shadow starts: the order of the server's events", async (t) => {
  const { running, runtime } = await fakeShadow(t)
  const events: string[] = []
  running.app.server.http.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
    res.end = ((...args: unknown[]) => {
      const result = end(...args)
      events.push('reply')
      return result
    }) as typeof res.end
  })
  runtime.behaviour.onPredict = () => void events.push('shadow')
  for (let i = 0; i < 20; i++) t.equal((await predictIris(running.base)).status, 200)
  await idle(running)
  t.equal(events.filter((e) => e === 'shadow').length, 20, 'every request copied')
  let [replies, shadows] = [0, 0]
  for (const event of events) {
    if (event === 'reply') replies++
    else shadows++
    if (shadows > replies) break
  }
  t.ok(shadows <= replies, `no shadow prediction starts before its reply is written: ${events.slice(0, 6).join(', ')} …`)
  t.equal(events[0], 'reply')
})

t.test('a shadow that throws never affects the reply, and is counted and logged once', async (t) => {
  const { running, runtime } = await fakeShadow(t)
  const expected = await predictIris(running.base, { id: 'same' })
  runtime.behaviour.predictError = new Error('shadow is broken')
  const answers = await inParallel(50, 8, () => predictIris(running.base, { id: 'same' }))
  t.ok(
    answers.every((a) => a.status === 200),
    'every reply 200',
  )
  t.same(
    answers.map((a) => a.body),
    answers.map(() => expected.body),
    'the same answer as before the shadow broke',
  )
  await idle(running)
  const text = await scrape(running)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2', outcome: 'error' }), 50)
  const logged = running.lines().filter((l) => l.event === 'shadow_prediction_failed')
  t.equal(logged.length, 1, 'logged when it starts, not on every copy')
  t.match(logged[0], { level: 'warning', model: 'iris', version: '2', outcome: 'error', message: 'shadow is broken' })
  t.notOk('request_id' in (logged[0] as object), "a shadow's line is not a request's")
})

t.test('a shadow that hangs never delays a reply; one run at a time: while a timed-out run goes on, copies are dropped, then resume', async (t) => {
  const { running, runtime } = await fakeShadow(t, { SVC_SHADOW_TIMEOUT_MS: '100', SVC_SHADOW_QUEUE: '4', SVC_MAX_IN_FLIGHT: '64' })
  let starts = 0
  runtime.behaviour.onPredict = () => void starts++
  runtime.behaviour.isPredictHanging = true
  const shadow = { version: '2' }
  const counted = async (outcome: string): Promise<number> => total(await scrape(running), 'svc_model_shadow_predictions_total', { ...shadow, outcome })
  const started = performance.now()
  const answers = await inParallel(40, 8, () => predictIris(running.base))
  t.ok(
    answers.every((a) => a.status === 200 && a.version === '1'),
    'every reply 200',
  )
  t.ok(performance.now() - started < 5000, 'replies did not wait for the hanging shadow')
  await until(async () => (await counted('timeout')) === 1, 'the hung copy to time out')
  for (let i = 0; i < 10; i++) t.equal((await predictIris(running.base)).status, 200)
  await new Promise((resolve) => setTimeout(resolve, 400)) // four timeouts: time for copies to start beside the hung run, were they let
  t.equal(starts, 1, 'one run started, however long it hangs')
  t.equal(runtime.inFlight.most, 1, 'never two runs at once')
  t.equal(running.app.shadows.pending(), 1, 'the timed-out run is still pending')
  let text = await scrape(running)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { ...shadow, outcome: 'timeout' }), 1, 'counted once, as a timeout')
  t.equal(total(text, 'svc_model_shadow_dropped_total', shadow), 49, 'every other copy dropped and counted')

  runtime.behaviour.isPredictHanging = false
  t.equal(runtime.settleHung(), 1, 'the hung run answers, late')
  await idle(running)
  for (let i = 0; i < 5; i++) t.equal((await predictIris(running.base)).status, 200)
  await idle(running)
  text = await scrape(running)
  t.equal(starts, 6, 'copies run again once it settled')
  t.equal(runtime.inFlight.most, 1)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { ...shadow, outcome: 'success' }), 5, 'its late answer is not counted')
  t.equal(total(text, 'svc_model_shadow_predictions_total', { ...shadow, outcome: 'timeout' }), 1)
  t.equal(total(text, 'svc_model_shadow_dropped_total', shadow), 49)
  t.equal(total(text, 'svc_requests_shed_total'), 0, 'no real request was shed')
})

t.test('a copy whose reply the server replaced with a 500 is not compared, nor counted', async (t) => {
  const root = await tempTree(t, irisVersions(withShadow(100)))
  let app: App | undefined
  // An endpoint that copies as the serving one does, then answers a body JSON cannot hold: the
  // server writes its last-resort 500 instead, and the written hooks hear why.
  const replaced: RouteDef = {
    method: 'POST',
    path: '/test/replaced',
    handler: (ctx) => {
      const models = (app as App).models
      const primary = models.resolve('iris') as ServedModel
      const answered = primary.predictor.predict(new Float64Array(Object.values(irisRow(0))), 1) as Prediction
      const request: InferRequest = { kind: 'instances', instances: [irisRow(0)], rows: 1, id: undefined }
      ;(app as App).shadows.copy(ctx, { shadow: models.shadowOf('iris')?.served as ServedModel, primary, request, answered })
      return { kind: 'json', status: 200, body: { count: 1n } }
    },
  }
  const running = await startApp(t, { SVC_MODEL_STORE: root }, [replaced])
  app = running.app
  for (let i = 0; i < 5; i++) t.equal((await fetch(`${running.base}/test/replaced`, { method: 'POST' })).status, 500)
  t.equal((await predictIris(running.base)).status, 200)
  await idle(running)
  const text = await scrape(running)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2' }), 1, 'only the answered request was compared')
  t.equal(total(text, 'svc_model_shadow_rows_total', { version: '2' }), 1)
  t.equal(total(text, 'svc_model_shadow_dropped_total', { version: '2' }), 0, 'not a drop: no copy was owed')
})

t.test('at the default cap, eight clients at batch 1 lose under 10 % of their copies, and nothing is shed', async (t) => {
  const root = await tempTree(t, irisVersions(withShadow(100)))
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_MAX_IN_FLIGHT: '64' })
  const N = 2000
  const answers = await inParallel(N, 8, (i) => predictIris(running.base, { instances: [irisRow(i)] }))
  t.ok(answers.every((a) => a.status === 200))
  await idle(running)
  const text = await scrape(running)
  const dropped = total(text, 'svc_model_shadow_dropped_total', { version: '2' })
  t.ok(dropped < N / 10, `${dropped} of ${N} copies dropped`)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2' }) + dropped, N)
  t.equal(total(text, 'svc_requests_shed_total'), 0)
})
