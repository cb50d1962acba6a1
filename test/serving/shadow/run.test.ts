// One shadow copy run alone: encoded for the shadow's inputs, predicted, compared and counted; a
// failure counted and logged when its message is new for the version; an asynchronous one timed
// out and counted then, its promise settled only with the prediction itself.
import { setTimeout as sleep } from 'node:timers/promises'
import { Registry } from 'prom-client'
import t from 'tap'
import type { InferRequest } from '../../../lib/models/inference/request.js'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import type { Prediction, Predictor } from '../../../lib/models/runtime.js'
import { createShadowMetrics, type ShadowCells } from '../../../lib/serving/shadow/metrics.js'
import { createCopyRunner, type RunOptions, type ShadowCopy } from '../../../lib/serving/shadow/run.js'
import { createLogger } from '../../../lib/telemetry/logger.js'
import { kernelVersion } from '../../fixtures/model-runtime.js'

const iris = kernelVersion('iris')
const served = (version: string, predictor: Predictor = iris.predictor): ServedModel => Object.freeze({ name: 'iris', version, model: iris.model, predictor })
const ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 },
]
const REQUEST: InferRequest = { kind: 'instances', instances: ROWS, rows: 2, id: undefined }
const primary = served('1')
const answered = primary.predictor.predict(new Float64Array([5.1, 3.5, 1.4, 0.2, 6.3, 3.3, 6.0, 2.5]), 2) as Prediction
const copyTo = (shadow: ServedModel, request: InferRequest = REQUEST, answer: Prediction = answered): ShadowCopy => ({
  shadow,
  primary,
  request,
  answered: answer,
})

const harness = (options: Partial<RunOptions> = {}) => {
  const raw: string[] = []
  const rows: Array<[string, number]> = []
  let timeouts = 0
  const runner = createCopyRunner({
    logger: createLogger({ name: 'svc', level: 'info', format: 'json', write: (chunk) => void raw.push(chunk) }),
    timeoutMs: 40,
    tolerance: 0.05,
    onRows: (build, _features, count) => void rows.push([build.version, count]),
    onTimeout: () => void timeouts++,
    ...options,
  })
  const cellsOf = (...versions: string[]): Map<string, ShadowCells> =>
    new Map(createShadowMetrics(new Registry()).track(versions.map((version) => ({ name: 'iris', version }))))
  const lines = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { runner, cellsOf, lines, rows, timeouts: () => timeouts }
}

const counts = (cells: ShadowCells) => ({
  success: cells.outcomes.success.value,
  error: cells.outcomes.error.value,
  timeout: cells.outcomes.timeout.value,
  rows: cells.rows.value,
  disagreements: cells.disagreements.value,
  timed: cells.duration.count,
})

t.test('a synchronous copy is done in the call: compared with the answer given, its rows to onRows', async (t) => {
  const h = harness()
  const cells = h.cellsOf('2').get('iris/2') as ShadowCells
  const shadow = served('2')
  t.equal(h.runner.run(copyTo(shadow), cells), undefined)
  t.same(counts(cells), { success: 1, error: 0, timeout: 0, rows: 2, disagreements: 0, timed: 1 })
  const flipped = { labels: Uint32Array.from([2, 0]), probabilities: new Float64Array(0) }
  h.runner.run(copyTo(shadow, REQUEST, flipped), cells)
  t.same(counts(cells), { success: 2, error: 0, timeout: 0, rows: 4, disagreements: 2, timed: 2 }, 'both rows differ from what the client was given')
  t.same(h.rows, [
    ['2', 2],
    ['2', 2],
  ])
  const quiet = harness({ onRows: undefined })
  quiet.runner.run(copyTo(shadow), cells)
  t.equal(cells.outcomes.success.value, 3, 'no onRows is fine')
})

t.test('a copy that cannot be encoded or throws is an error, logged once per message and version while it is the shadow', async (t) => {
  const h = harness()
  const cells = h.cellsOf('2', '3')
  let message = 'no session'
  const throwing: Predictor = {
    predict: () => {
      throw new Error(message)
    },
    dispose: () => {},
  }
  h.runner.forget(cells)
  const [two, three] = [served('2', throwing), served('3', throwing)]
  const twoCells = cells.get('iris/2') as ShadowCells
  t.equal(h.runner.run(copyTo(two), twoCells), undefined)
  h.runner.run(copyTo(two), twoCells)
  h.runner.run(copyTo(three), cells.get('iris/3') as ShadowCells)
  message = 'still no session'
  h.runner.run(copyTo(two), twoCells)
  h.runner.run(copyTo(served('2'), { kind: 'instances', instances: [{ horsepower: 1 }], rows: 1, id: undefined }), twoCells)
  t.same(counts(twoCells), { success: 0, error: 4, timeout: 0, rows: 0, disagreements: 0, timed: 4 })
  t.match(
    h.lines().map((line) => [line['event'], line['level'], line['version'], line['outcome'], line['message']]),
    [
      ['shadow_prediction_failed', 'warning', '2', 'error', 'no session'],
      ['shadow_prediction_failed', 'warning', '3', 'error', 'no session'],
      ['shadow_prediction_failed', 'warning', '2', 'error', 'still no session'],
      ['shadow_prediction_failed', 'warning', '2', 'error', /^instances: row 0: sepal_length is missing/],
    ],
    'the same message again is not logged; a new one, or another version, is',
  )
  t.equal(h.lines().length, 4)
  message = 'no session'
  h.runner.forget(new Map([['iris/3', undefined]]))
  h.runner.run(copyTo(two), twoCells)
  h.runner.run(copyTo(three), cells.get('iris/3') as ShadowCells)
  t.equal(h.lines().length, 5, 'a version forgotten is logged afresh; one kept is not')
  h.runner.forget(new Map())
  h.runner.run(copyTo(two), twoCells)
  h.runner.run(copyTo(two), twoCells)
  t.equal(h.lines().length, 7, 'a failure of a version no longer the shadow is logged, not remembered')
})

t.test('an asynchronous copy: its answer or its failure within the timeout counted; past it a timeout, and the promise waits for the run', async (t) => {
  const h = harness()
  const cells = h.cellsOf('2')
  h.runner.forget(cells)
  const twoCells = cells.get('iris/2') as ShadowCells
  let mode: 'answer' | 'reject' | 'late' | 'late reject' = 'answer'
  const predictor: Predictor = {
    predict: async (features, rows) => {
      if (mode === 'late' || mode === 'late reject') await sleep(100)
      if (mode === 'reject' || mode === 'late reject') throw new Error(`run failed (${mode})`)
      return iris.predictor.predict(features, rows)
    },
    dispose: () => {},
  }
  const shadow = served('2', predictor)
  const running = h.runner.run(copyTo(shadow), twoCells)
  t.ok(running instanceof Promise)
  t.equal(twoCells.outcomes.success.value, 0, 'not counted before it settles')
  await running
  t.same(counts(twoCells), { success: 1, error: 0, timeout: 0, rows: 2, disagreements: 0, timed: 1 })
  mode = 'reject'
  await h.runner.run(copyTo(shadow), twoCells)
  t.equal(twoCells.outcomes.error.value, 1)
  mode = 'late'
  let isSettled = false
  const late = (h.runner.run(copyTo(shadow), twoCells) as Promise<void>).then(() => void (isSettled = true))
  await sleep(70)
  t.equal(h.timeouts(), 1, 'onTimeout heard it')
  t.equal(twoCells.outcomes.timeout.value, 1, 'counted as a timeout at the timeout')
  t.notOk(isSettled, 'the promise waits for the run itself')
  await late
  t.equal(twoCells.outcomes.success.value, 1, 'its late answer is not counted again')
  mode = 'late reject'
  await h.runner.run(copyTo(shadow), twoCells)
  t.same(counts(twoCells), { success: 1, error: 1, timeout: 2, rows: 2, disagreements: 0, timed: 4 }, 'nor its late failure')
  t.same(
    h.lines().map((line) => [line['outcome'], line['message']]),
    [
      ['error', 'run failed (reject)'],
      ['timeout', 'no answer within 40 ms'],
    ],
    'the second timeout repeats the message',
  )
})
