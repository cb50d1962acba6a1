import t from 'tap'
import { Registry } from 'prom-client'
import { createFeedback, type Feedback } from '../../../lib/serving/feedback/feedback.js'
import { createFeedbackMetrics, MAX_CONFUSION_CLASSES, OTHER_CLASS } from '../../../lib/serving/feedback/metrics.js'
import { createFeedbackVersions } from '../../../lib/serving/feedback/versions.js'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import type { ClassPrediction, Prediction, ValuePrediction } from '../../../lib/models/runtime.js'
import { encodeRows } from '../../../lib/models/inference/features.js'
import { harness, rebuilt, shippedFiles } from '../../fixtures/model-registry.js'
import { sample } from '../../fixtures/metrics-text.js'

const SECRET = 'a-fleet-secret-of-32-characters!'
const DAY_S = 86_400

type Setup = Readonly<{ feedback: Feedback; metrics: Registry; iris: ServedModel; cars: ServedModel; clock: { ms: number }; text(): Promise<string> }>

const setup = async (config: Partial<Parameters<typeof createFeedback>[0]['config']> = {}, metrics = new Registry()): Promise<Setup> => {
  const h = harness()
  await h.registry.load()
  const clock = { ms: 1_800_000_000_000 }
  const feedback = createFeedback({
    config: { secret: SECRET, previousSecret: undefined, maxAgeS: 30 * DAY_S, seen: 1000, ...config },
    metrics,
    now: () => clock.ms,
  })
  const iris = h.registry.resolve('iris') as ServedModel
  const cars = h.registry.resolve('cars') as ServedModel
  feedback.publish([cars, iris])
  return { feedback, metrics, iris, cars, clock, text: () => metrics.metrics() }
}

const predict = (served: ServedModel, rows: Record<string, unknown>[]): Prediction =>
  served.predictor.predict(encodeRows(served.model.inputs, rows), rows.length) as Prediction

const IRIS_ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 },
  { sepal_length: 5.9, sepal_width: 3.0, petal_length: 4.2, petal_width: 1.5 },
]

const tokensFor = (feedback: Feedback, served: ServedModel, rows: Record<string, unknown>[]): { tokens: string[]; prediction: Prediction } => {
  const prediction = predict(served, rows)
  return { tokens: JSON.parse(feedback.tokens(served, prediction, rows.length) as string) as string[], prediction }
}

t.test('labels are scored against the class the token carries: the confusion counters and rows', async (t) => {
  const { feedback, iris, text } = await setup()
  const { tokens, prediction } = tokensFor(feedback, iris, IRIS_ROWS)
  const classes = (iris.model as { classes: readonly string[] }).classes
  const predicted = [...(prediction as ClassPrediction).labels].map((i) => classes[i] as string)
  t.same(predicted, ['setosa', 'virginica', 'versicolor'])
  const result = feedback.score([
    { token: tokens[0] as string, truth: 'setosa' },
    { token: tokens[1] as string, truth: 'versicolor' },
    { token: tokens[2] as string, truth: 'versicolor' },
  ])
  t.same(result, { accepted: 3, refused: [] })
  const body = await text()
  const cell = (actual: string, predicted: string): number | undefined =>
    sample(body, 'svc_model_feedback_confusion_total', { model: 'iris', version: '1', actual, predicted, correct: String(actual === predicted) })
  t.equal(cell('setosa', 'setosa'), 1)
  t.equal(cell('versicolor', 'virginica'), 1)
  t.equal(cell('versicolor', 'versicolor'), 1)
  t.equal(cell('virginica', 'virginica'), 0, 'every pair exists at 0')
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'iris', version: '1' }), 3)
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'cars', version: '1' }), 0)
})

t.test("a regressor's labels add |e|, e² and max(e, 0), with e = prediction − truth", async (t) => {
  const { feedback, cars, text } = await setup()
  const rows = [
    { cylinders: 4, displacement: 97, horsepower: 88, weight_in_lbs: 2130, acceleration: 14.5, year: 1970, origin: 'Japan' },
    { cylinders: 8, displacement: 350, horsepower: 165, weight_in_lbs: 3693, acceleration: 11.5, year: 1970, origin: 'USA' },
  ]
  const { tokens, prediction } = tokensFor(feedback, cars, rows)
  const [p0, p1] = [...(prediction as ValuePrediction).values] as [number, number]
  t.same(
    feedback.score([
      { token: tokens[0] as string, truth: p0 - 2 },
      { token: tokens[1] as string, truth: p1 + 3 },
    ]),
    { accepted: 2, refused: [] },
  )
  const body = await text()
  const labels = { model: 'cars', version: '1' }
  t.ok(Math.abs((sample(body, 'svc_model_feedback_absolute_error_sum', labels) as number) - 5) < 1e-9)
  t.ok(Math.abs((sample(body, 'svc_model_feedback_squared_error_sum', labels) as number) - 13) < 1e-9)
  t.ok(Math.abs((sample(body, 'svc_model_feedback_overestimate_sum', labels) as number) - 2) < 1e-9)
  t.equal(sample(body, 'svc_model_feedback_absolute_error_count', labels), 2)
  t.equal(sample(body, 'svc_model_feedback_rows_total', labels), 2)
})

t.test('each refusal has its reason and counts only in svc_feedback_refused_total', async (t) => {
  const { feedback, iris, cars, clock, text } = await setup({ maxAgeS: DAY_S })
  const { tokens } = tokensFor(feedback, iris, IRIS_ROWS)
  const [a, b, c] = tokens as [string, string, string]
  const carsToken = tokensFor(feedback, cars, [
    { cylinders: 4, displacement: 97, horsepower: 88, weight_in_lbs: 2130, acceleration: 14.5, year: 1970, origin: 'Japan' },
  ]).tokens[0] as string
  // Another fleet's token: another secret, the same build.
  const other = await setup({ secret: 'another-fleet-secret-of-32-chars' })
  const foreign = tokensFor(other.feedback, other.iris, IRIS_ROWS).tokens[0] as string
  const edited = `${a.slice(0, 20)}${a[20] === 'A' ? 'B' : 'A'}${a.slice(21)}`
  const result = feedback.score([
    { token: a, truth: 'setosa' },
    { token: a, truth: 'setosa' },
    { token: b, truth: 'rose' },
    { token: b, truth: 3 },
    { token: carsToken, truth: Number.NaN },
    { token: carsToken, truth: '12' },
    { token: foreign, truth: 'setosa' },
    { token: edited, truth: 'setosa' },
    { token: 'not a token', truth: 'setosa' },
  ])
  t.same(result, {
    accepted: 1,
    refused: [
      { index: 1, reason: 'duplicate' },
      { index: 2, reason: 'invalid_truth', expected: ['setosa', 'versicolor', 'virginica'] },
      { index: 3, reason: 'invalid_truth', expected: ['setosa', 'versicolor', 'virginica'] },
      { index: 4, reason: 'invalid_truth', expected: 'number' },
      { index: 5, reason: 'invalid_truth', expected: 'number' },
      { index: 6, reason: 'invalid_token' },
      { index: 7, reason: 'invalid_token' },
      { index: 8, reason: 'invalid_token' },
    ],
  })
  t.same(feedback.score([{ token: b, truth: 'virginica' }]), { accepted: 1, refused: [] }, 'a refused truth is not remembered: corrected, it is scored')
  clock.ms += (DAY_S + 1) * 1000
  t.same(feedback.score([{ token: c, truth: 'versicolor' }]), { accepted: 0, refused: [{ index: 0, reason: 'expired' }] })
  const body = await text()
  const refused = (reason: string): number | undefined => sample(body, 'svc_feedback_refused_total', { reason })
  t.same(['invalid_token', 'expired', 'invalid_truth', 'unknown_version', 'duplicate'].map(refused), [3, 1, 4, 0, 1])
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'iris', version: '1' }), 2)
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'cars', version: '1' }), 0)
})

t.test('a token of a build this instance never served is unknown_version, though its tag checks', async (t) => {
  const h = harness({ ...shippedFiles(), 'iris/1/model.json': rebuilt('iris') })
  await h.registry.load()
  const mine = await setup()
  const theirs = createFeedback({
    config: { secret: SECRET, previousSecret: undefined, maxAgeS: DAY_S, seen: 10 },
    metrics: new Registry(),
    now: () => mine.clock.ms,
  })
  const rebuiltIris = h.registry.resolve('iris') as ServedModel
  theirs.publish([rebuiltIris])
  const token = tokensFor(theirs, rebuiltIris, IRIS_ROWS.slice(0, 1)).tokens[0] as string
  t.same(mine.feedback.score([{ token, truth: 'setosa' }]), { accepted: 0, refused: [{ index: 0, reason: 'unknown_version' }] })
  t.same(theirs.score([{ token, truth: 'setosa' }]), { accepted: 1, refused: [] })
})

t.test('during a rotation tokens of the previous secret are accepted, and new ones are signed with the new secret', async (t) => {
  const before = await setup()
  const old = tokensFor(before.feedback, before.iris, IRIS_ROWS.slice(0, 1)).tokens[0] as string
  const after = await setup({ secret: 'the-new-fleet-secret-0123456789!', previousSecret: SECRET })
  const fresh = tokensFor(after.feedback, after.iris, IRIS_ROWS.slice(0, 1)).tokens[0] as string
  t.same(
    after.feedback.score([
      { token: old, truth: 'setosa' },
      { token: fresh, truth: 'setosa' },
    ]),
    { accepted: 2, refused: [] },
  )
  t.same(
    before.feedback.score([{ token: fresh, truth: 'setosa' }]).refused,
    [{ index: 0, reason: 'invalid_token' }],
    'the old fleet does not know the new secret',
  )
})

t.test('a retired version is scored until its last token expires, then its series go', async (t) => {
  const { feedback, iris, cars, clock, text } = await setup({ maxAgeS: DAY_S })
  const { tokens } = tokensFor(feedback, iris, IRIS_ROWS)
  clock.ms += 1000
  feedback.publish([cars]) // iris left the manifest
  clock.ms += (DAY_S - 10) * 1000
  t.same(feedback.score([{ token: tokens[0] as string, truth: 'setosa' }]), { accepted: 1, refused: [] })
  feedback.publish([cars])
  t.equal(sample(await text(), 'svc_model_feedback_rows_total', { model: 'iris', version: '1' }), 1, 'kept while a token may be valid')
  clock.ms += 20 * 1000
  feedback.publish([cars])
  const body = await text()
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'iris', version: '1' }), undefined)
  t.equal(sample(body, 'svc_model_reference_quality', { model: 'iris', version: '1', metric: 'accuracy' }), undefined)
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_count', { model: 'iris' }), undefined)
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'cars', version: '1' }), 0, 'the served version stays')
  t.same(feedback.score([{ token: tokens[1] as string, truth: 'setosa' }]).refused, [{ index: 0, reason: 'expired' }])
})

t.test('a version served again before its tokens expire keeps its series', async (t) => {
  const { feedback, iris, cars, clock, text } = await setup({ maxAgeS: 10 })
  const { tokens } = tokensFor(feedback, iris, IRIS_ROWS)
  feedback.score([{ token: tokens[0] as string, truth: 'setosa' }])
  feedback.publish([cars])
  clock.ms += 5000
  feedback.publish([cars, iris])
  clock.ms += 60_000
  feedback.publish([cars, iris])
  t.equal(sample(await text(), 'svc_model_feedback_rows_total', { model: 'iris', version: '1' }), 1)
})

t.test("the delay from prediction to label is observed per model, and the reference quality is the artifact's", async (t) => {
  const { feedback, iris, clock, text } = await setup()
  const { tokens } = tokensFor(feedback, iris, IRIS_ROWS)
  clock.ms += 2 * 3600 * 1000
  feedback.score([{ token: tokens[0] as string, truth: 'setosa' }])
  const body = await text()
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_bucket', { model: 'iris', le: '3600' }), 0)
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_bucket', { model: 'iris', le: '14400' }), 1)
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_sum', { model: 'iris' }), 7200)
  t.equal(sample(body, 'svc_model_reference_quality', { model: 'iris', version: '1', metric: 'accuracy' }), 0.9777777777777777)
  t.equal(sample(body, 'svc_model_reference_quality', { model: 'cars', version: '1', metric: 'rmse' }), 3.9039406767780105)
})

t.test(`above ${MAX_CONFUSION_CLASSES} classes a version keeps 2·C confusion series: right, or ${OTHER_CLASS}`, async (t) => {
  const registry = new Registry()
  const metrics = createFeedbackMetrics(registry)
  const classes = Array.from({ length: MAX_CONFUSION_CLASSES + 1 }, (_, i) => `c${i}`)
  const wide = metrics.track('wide', '1', classes, {})
  const wideCell = wide.confusion as NonNullable<typeof wide.confusion>
  wideCell(4, 4).value++
  wideCell(4, 7).value++
  const narrow = metrics.track('narrow', '1', classes.slice(0, MAX_CONFUSION_CLASSES), {})
  ;(narrow.confusion as NonNullable<typeof narrow.confusion>)(4, 7).value++
  t.equal(metrics.track('narrow', '1', [], {}).rows, narrow.rows, 'one version, one set of series')
  const body = await registry.metrics()
  const lines = (model: string): number => body.split('\n').filter((line) => line.startsWith(`svc_model_feedback_confusion_total{model="${model}"`)).length
  t.equal(lines('wide'), 2 * (MAX_CONFUSION_CLASSES + 1))
  t.equal(lines('narrow'), MAX_CONFUSION_CLASSES ** 2)
  t.equal(sample(body, 'svc_model_feedback_confusion_total', { model: 'wide', version: '1', actual: 'c4', predicted: 'c4', correct: 'true' }), 1)
  t.equal(sample(body, 'svc_model_feedback_confusion_total', { model: 'wide', version: '1', actual: 'c4', predicted: OTHER_CLASS, correct: 'false' }), 1)
  t.equal(sample(body, 'svc_model_feedback_confusion_total', { model: 'narrow', version: '1', actual: 'c4', predicted: 'c7', correct: 'false' }), 1)
  metrics.drop('wide', '1')
  metrics.drop('wide', '1')
  t.notMatch(await registry.metrics(), /model="wide"/)
  const regressor = metrics.track('value', '1', undefined, { rmse: 2 })
  regressor.rows.value++
  const errors = regressor.errors as NonNullable<typeof regressor.errors>
  errors.absolute.sum += 3
  errors.absolute.count++
  registry.resetMetrics()
  const reset = await registry.metrics()
  t.equal(sample(reset, 'svc_model_feedback_confusion_total', { model: 'narrow', version: '1', actual: 'c4', predicted: 'c7', correct: 'false' }), 0)
  t.equal(sample(reset, 'svc_model_feedback_absolute_error_sum', { model: 'value', version: '1' }), 0, 'summaries reset too')
  t.equal(sample(reset, 'svc_model_feedback_absolute_error_count', { model: 'value', version: '1' }), 0)
})

t.test('a version whose name cannot be carried gets no tokens', async (t) => {
  const { feedback, iris } = await setup()
  const long = { ...iris, model: { ...iris.model, name: 'm'.repeat(300), sha256: iris.model.sha256 } } as ServedModel
  feedback.publish([long])
  t.equal(feedback.tokens(long, predict(iris, IRIS_ROWS), 3), undefined)
  t.equal(feedback.tokens({ ...iris } as ServedModel, predict(iris, IRIS_ROWS), 3), undefined, 'nor a build never published')
})

t.test('a version first published without a reference quality gets it from the build that has one', async (t) => {
  const h = harness()
  await h.registry.load()
  const metrics = new Registry()
  const late = createFeedback({ config: { secret: SECRET, previousSecret: undefined, maxAgeS: DAY_S, seen: 10 }, metrics })
  const iris = h.registry.resolve('iris') as ServedModel
  // An ONNX version before `svc profile` wrote its quality, then after (another sha256: the profile is in it).
  const unprofiled = { ...iris, model: { ...iris.model, quality: undefined, sha256: `0${iris.model.sha256.slice(1)}` } } as ServedModel
  late.publish([unprofiled])
  t.equal(sample(await metrics.metrics(), 'svc_model_reference_quality', { model: 'iris', version: '1', metric: 'accuracy' }), undefined)
  late.publish([iris])
  t.equal(sample(await metrics.metrics(), 'svc_model_reference_quality', { model: 'iris', version: '1', metric: 'accuracy' }), 0.9777777777777777)
})

t.test('the keys of a build this instance does not know are derived once while kept, the oldest of 256 forgotten first', async (t) => {
  const versions = createFeedbackVersions({ current: Buffer.from(SECRET), previous: undefined }, DAY_S, createFeedbackMetrics(new Registry()))
  const first = versions.ring('iris', '9', 'abcdef012345', 'class')
  t.equal(first.length, 1)
  t.equal(versions.ring('iris', '9', 'abcdef012345', 'class'), first, 'the same keys: not derived again')
  t.not(versions.ring('iris', '9', 'abcdef012345', 'value'), first, "another kind's keys")
  for (let i = 0; i < 255; i++) versions.ring('iris', `v${i}`, 'abcdef012345', 'class')
  t.not(versions.ring('iris', '9', 'abcdef012345', 'class'), first, 'forgotten, derived again')
})

t.test('a label a few seconds late is told apart from one a minute late by the delay buckets', async (t) => {
  const { feedback, iris, clock, text } = await setup()
  const { tokens } = tokensFor(feedback, iris, IRIS_ROWS)
  clock.ms += 5000
  feedback.score([{ token: tokens[0] as string, truth: 'setosa' }])
  const body = await text()
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_bucket', { model: 'iris', le: '1' }), 0)
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_bucket', { model: 'iris', le: '5' }), 1)
  t.equal(sample(body, 'svc_model_feedback_delay_seconds_bucket', { model: 'iris', le: '60' }), 1)
})
