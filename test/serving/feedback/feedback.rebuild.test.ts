// Feedback across a hot reload that rebuilds a version: the registry publishes the new build to
// feedback as the service wires it (onPublish), labels for the old build's tokens keep arriving, and
// the version's series, tokens and reference quality follow each build.
import t from 'tap'
import { Registry } from 'prom-client'
import { createFeedback, type Feedback } from '../../../lib/serving/feedback/feedback.js'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import type { ClassPrediction, Prediction } from '../../../lib/models/runtime.js'
import { encodeRows } from '../../../lib/models/inference/features.js'
import { artifactFile, harness, type Harness } from '../../fixtures/model-registry.js'
import { sample } from '../../fixtures/metrics-text.js'

const SECRET = 'a-fleet-secret-of-32-characters!'

type Setup = Readonly<{ h: Harness; feedback: Feedback; text(): Promise<string> }>

const setup = async (): Promise<Setup> => {
  const metrics = new Registry()
  const clock = { ms: 1_800_000_000_000 }
  const feedback = createFeedback({
    config: { secret: SECRET, previousSecret: undefined, maxAgeS: 86_400, seen: 1000 },
    metrics,
    now: () => clock.ms,
  })
  const h = harness(undefined, { onPublish: (served) => feedback.publish(served) })
  await h.registry.load()
  return { h, feedback, text: () => metrics.metrics() }
}

const ROW = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }

/** The served iris's answer to ROW: its class name and token. */
const answer = (feedback: Feedback, h: Harness): { predicted: string; token: string } => {
  const served = h.registry.resolve('iris') as ServedModel
  const prediction = served.predictor.predict(encodeRows(served.model.inputs, [ROW]), 1) as Prediction
  const classes = (served.model as { classes: readonly string[] }).classes
  const token = (JSON.parse(feedback.tokens(served, prediction, 1) as string) as string[])[0] as string
  return { predicted: classes[(prediction as ClassPrediction).labels[0] as number] as string, token }
}

const confusion = (body: string, actual: string, predicted: string): number | undefined =>
  sample(body, 'svc_model_feedback_confusion_total', { model: 'iris', version: '1', actual, predicted, correct: String(actual === predicted) })

/** Rebuilds iris 1 and reloads: `change` edits the committed artifact. */
const rebuild = async (h: Harness, change: (raw: any) => void): Promise<void> => {
  h.files.put('iris/1/model.json', artifactFile('iris', '1', change))
  await h.registry.reload()
}

t.test('a rebuild that adds a class: its labels are scored under the new class, and the old build is still scored', async (t) => {
  const { h, feedback, text } = await setup()
  const old = answer(feedback, h)
  t.equal(old.predicted, 'setosa')
  // A fourth class every row is answered with.
  await rebuild(h, (raw) => {
    raw.classes.push('hybrid')
    raw.parameters.weights.push([0, 0, 0, 0])
    raw.parameters.intercepts.push(100)
    raw.reference.predictions.levels.push('hybrid')
    raw.reference.predictions.proportions.push(0)
  })
  const fresh = answer(feedback, h)
  t.equal(fresh.predicted, 'hybrid')
  t.equal(confusion(await text(), 'hybrid', 'hybrid'), 0, "the new class's series are made at 0 by the publish")
  t.same(
    feedback.score([
      { token: fresh.token, truth: 'hybrid' },
      { token: old.token, truth: 'setosa' },
    ]),
    { accepted: 2, refused: [] },
  )
  const body = await text()
  t.equal(confusion(body, 'hybrid', 'hybrid'), 1)
  t.equal(confusion(body, 'setosa', 'setosa'), 1)
  t.equal(confusion(body, 'setosa', 'hybrid'), 0)
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'iris', version: '1' }), 2, "one version's series for both builds")
  t.same(feedback.score([{ token: fresh.token, truth: 'hybrid' }]).refused, [{ index: 0, reason: 'duplicate' }])
  t.same(
    feedback.score([{ token: old.token, truth: 'hybrid' }]).refused,
    [{ index: 0, reason: 'invalid_truth', expected: ['setosa', 'versicolor', 'virginica'] }],
    "the old build's classes check its truth",
  )
})

t.test('a rebuild that reorders the classes: each label is counted under its own names', async (t) => {
  const { h, feedback, text } = await setup()
  const old = answer(feedback, h)
  // The same model with its classes in reverse order: the same answers, other class indices.
  await rebuild(h, (raw) => {
    raw.classes.reverse()
    raw.parameters.weights.reverse()
    raw.parameters.intercepts.reverse()
    raw.reference.predictions.levels.reverse()
    raw.reference.predictions.proportions.reverse()
  })
  const fresh = answer(feedback, h)
  t.equal(fresh.predicted, 'setosa')
  t.not(fresh.token, old.token)
  t.same(
    feedback.score([
      { token: fresh.token, truth: 'setosa' },
      { token: old.token, truth: 'virginica' },
    ]),
    { accepted: 2, refused: [] },
  )
  const body = await text()
  t.equal(confusion(body, 'setosa', 'setosa'), 1, 'a right answer of the new build is right')
  t.equal(confusion(body, 'virginica', 'setosa'), 1, "a wrong answer of the old build is the old build's class")
  t.equal(confusion(body, 'virginica', 'virginica'), 0)
  t.equal(confusion(body, 'setosa', 'virginica'), 0)
  t.equal(body.split('\n').filter((line) => line.startsWith('svc_model_feedback_confusion_total{model="iris"')).length, 9, 'still 3 × 3 series')
})

t.test('the reference quality follows each build', async (t) => {
  const { h, text } = await setup()
  const quality = async (metric: string): Promise<number | undefined> =>
    sample(await text(), 'svc_model_reference_quality', { model: 'iris', version: '1', metric })
  t.equal(await quality('accuracy'), 0.9777777777777777)
  await rebuild(h, (raw) => {
    raw.provenance.metrics = { accuracy: 0.9 }
  })
  t.equal(await quality('accuracy'), 0.9)
  t.equal(await quality('log_loss'), undefined, 'a metric the new build does not have is gone')
})
