// Shadow copies alone (lib/serving/shadow/): the comparison row by row, and the queue: after the
// reply, bounded, dropped under pressure or past its cap, one run at a time (a timed-out one
// included, until it settles), timed out, counted; a reply the server replaced is not copied.
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises'
import { Registry } from 'prom-client'
import t from 'tap'
import type { Ctx } from '../../../lib/core/http/context.js'
import type { InferRequest } from '../../../lib/models/inference/request.js'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import type { ModelVersion, Prediction, Predictor } from '../../../lib/models/runtime.js'
import { disagreements } from '../../../lib/serving/shadow/compare.js'
import { createShadowCopies, type ShadowOptions } from '../../../lib/serving/shadow/copies.js'
import { createLogger } from '../../../lib/telemetry/logger.js'
import { requestStore } from '../../../lib/telemetry/request-store.js'
import { makeCtx, rethrow } from '../../fixtures/ctx.js'
import { kernelVersion } from '../../fixtures/model-runtime.js'
import { total } from '../../fixtures/rollout.js'

const classifier = (classes: readonly string[]): ModelVersion => ({ task: 'classification', classes }) as unknown as ModelVersion
const regressor = { task: 'regression' } as unknown as ModelVersion
const labels = (...values: number[]): Prediction => ({ labels: Uint32Array.from(values), probabilities: new Float64Array(0) })
const values = (...numbers: number[]): Prediction => ({ values: Float64Array.from(numbers) })

t.test('rows disagree by class name, by a relative tolerance, or all of them across tasks', async (t) => {
  const abc = classifier(['a', 'b', 'c'])
  const cba = classifier(['c', 'b', 'a'])
  t.equal(disagreements(abc, labels(0, 1, 2), abc, labels(0, 1, 1), 3, 0.05), 1)
  t.equal(disagreements(abc, labels(0, 1, 2), cba, labels(2, 1, 0), 3, 0.05), 0, 'the same names in another order agree')
  t.equal(disagreements(abc, labels(0, 1, 2), abc, labels(2, 2, 2, 2), 2, 0.05), 2, 'only the first `rows` rows')
  t.equal(disagreements(regressor, values(100, 0, -10, 1), regressor, values(104.9, 0, -10.6, 1.2), 4, 0.05), 2, '105 within 5 %, -10.6 and 1.2 beyond it')
  t.equal(disagreements(regressor, values(0), regressor, values(1e-300), 1, 0.05), 1, 'from zero, any value is all the way off')
  t.equal(disagreements(regressor, values(100), regressor, values(100), 1, 0), 0, 'a zero tolerance: equal values agree')
  t.equal(disagreements(abc, labels(0, 1), regressor, values(0, 1), 2, 0.05), 2, 'another task disagrees on every row')
  t.equal(disagreements(regressor, values(0, 1), abc, labels(0, 1), 2, 0.05), 2)
})

const iris = kernelVersion('iris')
const served = (version: string, predictor: Predictor = iris.predictor): ServedModel => Object.freeze({ name: 'iris', version, model: iris.model, predictor })
const ROW = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }
const REQUEST: InferRequest = { kind: 'instances', instances: [ROW], rows: 1, id: undefined }
const primary = served('1')

type Harness = Readonly<{
  copies: ReturnType<typeof createShadowCopies>
  text: () => Promise<string>
  lines: () => Array<Record<string, unknown>>
  rows: Array<[ServedModel, number]>
  pressure: { isOn: boolean }
}>

const harness = (options: Partial<ShadowOptions> = {}): Harness => {
  const registry = new Registry()
  const raw: string[] = []
  const rows: Array<[ServedModel, number]> = []
  const pressure = { isOn: false }
  const copies = createShadowCopies({
    metrics: registry,
    logger: createLogger({ name: 'svc', level: 'info', format: 'json', write: (chunk) => void raw.push(chunk) }),
    capacity: 4,
    timeoutMs: 50,
    tolerance: 0.05,
    isUnderPressure: () => pressure.isOn,
    onRows: (build, _features, count) => void rows.push([build, count]),
    ...options,
  })
  const lines = (): Array<Record<string, unknown>> =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { copies, text: () => registry.metrics(), lines, rows, pressure }
}

/** A request answered by the primary and copied to `shadow`, its reply not written yet. */
const copied = (h: Harness, shadow: ServedModel, request: InferRequest = REQUEST, path = '/api/v1/predict'): Ctx => {
  const ctx = makeCtx('POST', path)
  h.copies.copy(ctx, { shadow, primary, request, answered: primary.predictor.predict(new Float64Array([5.1, 3.5, 1.4, 0.2]), 1) as Prediction })
  return ctx
}

/** A request answered by the primary, its reply then written: what queues the copy. */
const answered = (h: Harness, shadow: ServedModel, request: InferRequest = REQUEST): void => copied(h, shadow, request).replyWritten(undefined, rethrow)

const settled = async (h: Harness): Promise<void> => {
  for (let i = 0; i < 200 && h.copies.pending() > 0; i++) await sleep(5)
}

t.test('a copy waits for its reply, then is predicted, compared and counted against the shadow', async (t) => {
  const h = harness()
  const shadow = served('2')
  h.copies.track([shadow])
  const ctx = copied(h, shadow)
  await turn()
  t.equal(h.copies.pending(), 0, 'nothing queued before the reply is written')
  ctx.replyWritten(undefined, rethrow)
  t.equal(h.copies.pending(), 1, 'queued once it is')
  await settled(h)
  const text = await h.text()
  t.equal(total(text, 'svc_model_shadow_predictions_total', { model: 'iris', version: '2', outcome: 'success' }), 1)
  t.equal(total(text, 'svc_model_shadow_rows_total', { version: '2' }), 1)
  t.equal(total(text, 'svc_model_shadow_disagreements_total', { version: '2' }), 0)
  t.equal(total(text, 'svc_model_shadow_duration_seconds_count', { version: '2' }), 1)
  t.same(h.rows, [[shadow, 1]], "the rows go to the shadow's bin counters")
})

t.test('past the cap, or under pressure, a copy is dropped and counted; what is queued goes when pressure comes', async (t) => {
  const h = harness()
  const shadow = served('2')
  h.copies.track([shadow])
  for (let i = 0; i < 6; i++) answered(h, shadow)
  t.equal(h.copies.pending(), 4)
  t.equal(total(await h.text(), 'svc_model_shadow_dropped_total', { version: '2' }), 2, 'two past the cap of four')
  h.pressure.isOn = true
  answered(h, shadow)
  await settled(h)
  const text = await h.text()
  t.equal(total(text, 'svc_model_shadow_dropped_total', { version: '2' }), 7, 'one refused under pressure, four dropped from the queue')
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2' }), 0)
})

t.test('copies of a build that is no longer the shadow are dropped with it; one never tracked is ignored', async (t) => {
  const h = harness()
  const [old, untracked] = [served('2'), served('3')]
  h.copies.track([old])
  answered(h, old)
  answered(h, untracked)
  t.equal(h.copies.pending(), 1)
  h.copies.track([])
  await settled(h)
  const text = await h.text()
  t.equal(total(text, 'svc_model_shadow_predictions_total'), 0)
  t.notMatch(text, /version="2"/, 'a version that is no longer the shadow has no series')
})

t.test('a copy that throws, rejects or hangs is counted, and logged when its message is new', async (t) => {
  const h = harness()
  let mode: 'throw' | 'reject' | 'hang' | 'late' | 'too late' | 'fails too late' = 'throw'
  const hung: Array<() => void> = []
  const predictor: Predictor = {
    predict: (features, rows) => {
      if (mode === 'throw') throw new Error('no session')
      if (mode === 'reject') return Promise.reject(new Error('run failed'))
      if (mode === 'hang') return new Promise<Prediction>((resolve) => void hung.push(() => resolve(iris.predictor.predict(features, rows) as Prediction)))
      if (mode === 'too late') return sleep(80).then(() => iris.predictor.predict(features, rows) as Prediction)
      if (mode === 'fails too late') return sleep(80).then(() => Promise.reject(new Error('run failed late')))
      return sleep(10).then(() => iris.predictor.predict(features, rows) as Prediction)
    },
    dispose: () => {},
  }
  const shadow = served('2', predictor)
  h.copies.track([shadow])
  answered(h, shadow)
  answered(h, shadow)
  await settled(h)
  mode = 'reject'
  answered(h, shadow)
  await settled(h)
  mode = 'hang'
  answered(h, shadow)
  answered(h, shadow)
  t.equal(h.copies.pending(), 2, 'the second waits for the first')
  await sleep(80)
  t.equal(h.copies.pending(), 1, 'past the timeout the first still runs, and what waited behind it is dropped')
  for (const settle of hung) settle()
  await settled(h)
  mode = 'late'
  answered(h, shadow)
  await settled(h)
  mode = 'too late'
  answered(h, shadow)
  await settled(h) // its answer comes after the timeout, and is not counted again
  mode = 'fails too late'
  answered(h, shadow)
  await settled(h) // nor its failure
  const text = await h.text()
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2', outcome: 'error' }), 3)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2', outcome: 'timeout' }), 3)
  t.equal(total(text, 'svc_model_shadow_dropped_total', { version: '2' }), 1)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2', outcome: 'success' }), 1, 'an answer within the timeout counts')
  t.same(
    h.lines().map((l) => [l['event'], l['outcome'], l['message']]),
    [
      ['shadow_prediction_failed', 'error', 'no session'],
      ['shadow_prediction_failed', 'error', 'run failed'],
      ['shadow_prediction_failed', 'timeout', 'no answer within 50 ms'],
    ],
  )
  // A shadow dropped and taken again is logged afresh.
  h.copies.track([])
  h.copies.track([shadow])
  mode = 'throw'
  answered(h, shadow)
  await settled(h)
  t.equal(h.lines().length, 4)
})

t.test('a timed-out run holds its slot until it settles: copies meanwhile are dropped, even once its version is released', async (t) => {
  const h = harness()
  let [starts, running, most] = [0, 0, 0]
  const hung: Array<() => void> = []
  const predictor: Predictor = {
    predict: (features, rows) => {
      starts++
      most = Math.max(most, ++running)
      return new Promise<Prediction>(
        (resolve) =>
          void hung.push(() => {
            running--
            resolve(iris.predictor.predict(features, rows) as Prediction)
          }),
      )
    },
    dispose: () => {},
  }
  const [shadow, next] = [served('2', predictor), served('3', predictor)]
  h.copies.track([shadow])
  answered(h, shadow)
  await sleep(80)
  for (let i = 0; i < 5; i++) answered(h, shadow)
  await sleep(120)
  t.equal(starts, 1, 'no copy starts beside the timed-out run')
  t.equal(h.copies.pending(), 1, 'the timed-out run is still pending')
  let text = await h.text()
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2', outcome: 'timeout' }), 1)
  t.equal(total(text, 'svc_model_shadow_dropped_total', { version: '2' }), 5, 'the copies meanwhile dropped and counted')
  h.copies.track([next])
  t.equal(h.copies.pending(), 1, 'and stays so once its version is no longer the shadow')
  answered(h, next)
  await sleep(80)
  t.equal(starts, 1, "another shadow's copy waits for it too: one run's worth of CPU and memory")
  ;(hung.shift() as () => void)()
  await settled(h)
  t.equal(h.copies.pending(), 0)
  answered(h, next)
  await turn()
  t.equal(starts, 2, 'copies run again once it settled')
  ;(hung.shift() as () => void)()
  await settled(h)
  t.equal(most, 1, 'never two runs at once')
  text = await h.text()
  t.equal(total(text, 'svc_model_shadow_dropped_total', { version: '3' }), 1)
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '3', outcome: 'success' }), 1)
})

t.test('a reply the server replaced (its written hooks hear an error) is not copied, nor counted', async (t) => {
  const h = harness()
  const shadow = served('2')
  h.copies.track([shadow])
  const ctx = copied(h, shadow)
  ctx.replyWritten(new TypeError('Do not know how to serialize a BigInt'), rethrow)
  t.equal(h.copies.pending(), 0)
  await settled(h)
  const text = await h.text()
  t.equal(total(text, 'svc_model_shadow_predictions_total', { version: '2' }), 0)
  t.equal(total(text, 'svc_model_shadow_dropped_total', { version: '2' }), 0)
})

t.test('a copy that fails after its shadow was dropped leaves nothing behind: taken again, the shadow is logged afresh', async (t) => {
  const h = harness()
  let reject: (error: Error) => void = () => {}
  const predictor: Predictor = {
    predict: () =>
      new Promise<never>((_, no) => {
        reject = no
      }),
    dispose: () => {},
  }
  const shadow = served('2', predictor)
  h.copies.track([shadow])
  answered(h, shadow)
  for (let i = 0; i < 10 && h.copies.pending() > 0 && h.lines().length === 0; i++) await turn()
  h.copies.track([])
  reject(new Error('run failed'))
  await settled(h)
  t.equal(h.lines().length, 1, 'the late failure is logged')
  h.copies.track([shadow])
  answered(h, shadow)
  await turn()
  await turn()
  reject(new Error('run failed'))
  await settled(h)
  t.same(
    h.lines().map((l) => [l['version'], l['message']]),
    [
      ['2', 'run failed'],
      ['2', 'run failed'],
    ],
    'the same message from a shadow taken again is new to it',
  )
})

t.test("a request the shadow cannot encode is its error, not the reply's", async (t) => {
  const h = harness()
  const shadow = served('2')
  h.copies.track([shadow])
  answered(h, shadow, { kind: 'instances', instances: [{ horsepower: 130 }], rows: 1, id: undefined })
  await settled(h)
  t.equal(total(await h.text(), 'svc_model_shadow_predictions_total', { outcome: 'error' }), 1)
  t.match(h.lines()[0], { event: 'shadow_prediction_failed', model: 'iris', version: '2' })
})

t.test('synchronous copies yield the event loop once they have run for a turn budget', async (t) => {
  const h = harness({ capacity: 16 })
  const slow: Predictor = {
    predict: (features, rows) => {
      const until = performance.now() + 0.6
      while (performance.now() < until);
      return iris.predictor.predict(features, rows)
    },
    dispose: () => {},
  }
  const shadow = served('2', slow)
  h.copies.track([shadow])
  for (let i = 0; i < 10; i++) answered(h, shadow)
  await turn()
  const after = h.copies.pending()
  t.ok(after > 0 && after < 10, `a turn ran some and left the rest (${after} left)`)
  await settled(h)
  t.equal(total(await h.text(), 'svc_model_shadow_predictions_total', { outcome: 'success' }), 10)
})

t.test("a reply written inside the request's store still runs its copy outside it", async (t) => {
  const h = harness()
  const failing: Predictor = {
    predict: () => {
      throw new Error(`store: ${JSON.stringify(requestStore.getStore()?.requestId)}`)
    },
    dispose: () => {},
  }
  const shadow = served('2', failing)
  h.copies.track([shadow])
  const ctx = copied(h, shadow, REQUEST, '/v2/models/iris/infer')
  // An asynchronous reply is written from a continuation that still holds the request's store.
  requestStore.run(ctx, () => ctx.replyWritten(undefined, rethrow))
  await settled(h)
  t.match(h.lines()[0], { event: 'shadow_prediction_failed', message: 'store: undefined' })
  t.notOk('request_id' in (h.lines()[0] as object), "the line is not the request's")
})
