// The kernel behind the runtime seam: one file, a description that is the artifact's own members,
// and a predictor that answers synchronously with arrays of its own.
import t from 'tap'
import { parseArtifact } from '../../../lib/models/artifact.js'
import { encodeRows } from '../../../lib/models/inference/features.js'
import { compile, type Classifier } from '../../../lib/models/kernel/kernel.js'
import type { ClassPrediction, ValuePrediction } from '../../../lib/models/runtime.js'
import { describeArtifact, KERNEL_PLATFORM, kernelRuntime } from '../../../lib/models/kernel/runtime.js'
import { artifactBytes } from '../../fixtures/models.js'

t.test('the kernel runtime is "svc", reads one model.json and describes it with the artifact’s own members', async (t) => {
  t.equal(kernelRuntime.platform, 'svc')
  t.equal(KERNEL_PLATFORM, 'svc')
  t.same(kernelRuntime.files, ['model.json'])
  const { model, payload } = kernelRuntime.read([artifactBytes('iris')], { name: 'iris', version: '1' })
  t.same(payload, parseArtifact(artifactBytes('iris')), 'the payload is the checked artifact')
  t.match(model, { name: 'iris', version: '1', platform: 'svc', type: 'logistic_regression', task: 'classification', sha256: payload.sha256 })
  t.equal(model.inputs, payload.inputs, 'shared, not copied')
  t.equal(model.outputs, payload.outputs)
  t.equal(model.reference, payload.reference)
  t.equal(model.provenance, payload.provenance)
  t.equal(model.quality, payload.provenance.metrics, 'the quality is the held-out metrics')
  t.equal(model.standardisation, payload.preprocessing.standardisation)
  t.same(model.task === 'classification' && model.classes, ['setosa', 'versicolor', 'virginica'])
  t.ok(Object.isFrozen(model))
  const cars = describeArtifact(parseArtifact(artifactBytes('cars')))
  t.same({ name: cars.name, version: cars.version, task: cars.task, inputs: cars.inputs.length }, { name: 'cars', version: '1', task: 'regression', inputs: 7 })
  t.notOk('classes' in cars)
  t.throws(() => kernelRuntime.read([Buffer.from('{}')], { name: 'iris', version: '1' }), { name: 'ArtifactError' }, 'read checks what it is given')
})

t.test('the kernel predictor answers synchronously what the kernel computes, in new arrays every call', async (t) => {
  const { model, payload } = kernelRuntime.read([artifactBytes('iris')], { name: 'iris', version: '1' })
  const predictor = kernelRuntime.load(model, payload)
  t.notOk(predictor instanceof Promise, 'loaded synchronously')
  if (predictor instanceof Promise) return
  const features = encodeRows(model.inputs, [
    { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
    { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 },
  ])
  const first = predictor.predict(features, 2)
  t.notOk(first instanceof Promise, 'a sync answer')
  const second = predictor.predict(features, 2) as ClassPrediction
  const { labels, probabilities } = first as ClassPrediction
  t.not(labels, second.labels, 'each call its own arrays')
  t.not(probabilities, second.probabilities)
  const expected = { probabilities: new Float64Array(6), labels: new Uint32Array(2) }
  ;(compile(payload) as Classifier).predict(features, 2, expected.probabilities, expected.labels)
  t.same([...labels], [...expected.labels])
  t.same([...probabilities], [...expected.probabilities])
  t.equal(predictor.dispose(), undefined, 'nothing to free')

  const cars = kernelRuntime.read([artifactBytes('cars')], { name: 'cars', version: '1' })
  const regressor = kernelRuntime.load(cars.model, cars.payload)
  if (regressor instanceof Promise) return
  const { values } = regressor.predict(new Float64Array(14), 2) as ValuePrediction
  t.equal(values.length, 2)
  t.ok(values.every(Number.isFinite))
})
