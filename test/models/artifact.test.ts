import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import {
  ArtifactError,
  artifactSha256,
  canonicalJson,
  parseArtifact,
  serialiseArtifact,
  signArtifact,
  type ArtifactErrorCode,
} from '../../lib/models/artifact.js'
import { artifactBytes, rawArtifact, sign } from '../fixtures/models.js'

const rejects = (t: Test, text: string | Buffer, code: ArtifactErrorCode, field: string) => {
  t.throws(() => parseArtifact(text), { name: 'ArtifactError', code, field })
}

t.test('the committed artifacts parse, deep-frozen, from bytes or text', async (t) => {
  const iris = parseArtifact(artifactBytes('iris'))
  t.equal(iris.type, 'logistic_regression')
  t.same(iris.type === 'logistic_regression' && iris.classes, ['setosa', 'versicolor', 'virginica'])
  t.ok(Object.isFrozen(iris.parameters.weights[0]))
  const cars = parseArtifact(artifactBytes('cars').toString('utf8'))
  t.equal(cars.task, 'regression')
  t.same(cars.inputs.at(-1), { name: 'origin', type: 'categorical', levels: ['USA', 'Europe', 'Japan'] })
})

t.test('the sha256 covers the canonical JSON, so whitespace and member order do not matter', async (t) => {
  const raw = rawArtifact('iris')
  const { sha256, ...rest } = raw
  t.equal(createHash('sha256').update(canonicalJson(rest)).digest('hex'), sha256)
  const reordered = Object.fromEntries(Object.entries(raw).reverse())
  t.equal(parseArtifact(JSON.stringify(reordered)).sha256, sha256)
  t.equal(canonicalJson({ b: [1, 'x', null, true], a: { d: 0.1, c: -0 } }), '{"a":{"c":0,"d":0.1},"b":[1,"x",null,true]}')
})

t.test('signArtifact and serialiseArtifact write what parseArtifact reads back', async (t) => {
  const { sha256: _, ...unsigned } = parseArtifact(artifactBytes('cars'))
  const text = serialiseArtifact(signArtifact(unsigned))
  t.equal(text, artifactBytes('cars').toString('utf8'))
  t.equal(artifactSha256(unsigned), parseArtifact(text).sha256)
})

t.test('a changed byte is a SHA256_MISMATCH', async (t) => {
  const text = artifactBytes('iris').toString('utf8').replace('"sepal_width"', '"sepal_widht"')
  rejects(t, text, 'SHA256_MISMATCH', 'sha256')
  const raw = rawArtifact('iris')
  raw.parameters.intercepts[0] += 1e-12
  rejects(t, JSON.stringify(raw), 'SHA256_MISMATCH', 'sha256')
})

t.test('what is not UTF-8 JSON, or not an object, is refused before anything else', async (t) => {
  rejects(t, Buffer.from([0x7b, 0xff, 0x7d]), 'INVALID_JSON', '(document)')
  rejects(t, '{"format_version": 1', 'INVALID_JSON', '(document)')
  for (const text of ['null', '[]', '1']) rejects(t, text, 'INVALID_SCHEMA', '(document)')
  rejects(t, '{}', 'UNSUPPORTED_FORMAT', 'format_version')
})

t.test('an ArtifactError names the field and keeps the reason apart from it', async (t) => {
  const error = new ArtifactError('INVALID_SCHEMA', 'inputs[0].name', 'must be a non-empty string')
  t.equal(error.message, 'inputs[0].name: must be a non-empty string')
  t.equal(error.reason, 'must be a non-empty string')
  t.ok(error instanceof Error)
})

// Each case mutates a good artifact, re-signs it, and names the code and field parseArtifact reports.
type Case = readonly [name: string, model: 'iris' | 'cars', mutate: (a: any) => void, code: ArtifactErrorCode, field: string]
const CASES: readonly Case[] = [
  ['an unknown format version', 'iris', (a) => (a.format_version = 2), 'UNSUPPORTED_FORMAT', 'format_version'],
  ['a sha256 that is not hex', 'iris', (a) => (a.sha256 = 'x'), 'INVALID_SCHEMA', 'sha256'],
  ['an unknown type', 'iris', (a) => (a.type = 'tree'), 'INVALID_SCHEMA', 'type'],
  ['a task that does not fit the type', 'iris', (a) => (a.task = 'regression'), 'INVALID_SCHEMA', 'task'],
  ['an unknown member', 'iris', (a) => (a.extra = 1), 'INVALID_SCHEMA', '(document).extra'],
  ['classes on a regression', 'cars', (a) => (a.classes = ['a', 'b']), 'INVALID_SCHEMA', '(document).classes'],
  ['a missing member', 'iris', (a) => delete a.provenance, 'INVALID_SCHEMA', '(document).provenance'],
  ['a model name that is not path-safe', 'iris', (a) => (a.name = '../iris'), 'INVALID_SCHEMA', 'name'],
  ['an empty version', 'iris', (a) => (a.version = ''), 'INVALID_SCHEMA', 'version'],
  ['a numeric version', 'iris', (a) => (a.version = 1), 'INVALID_SCHEMA', 'version'],
  ['inputs that are not an array', 'iris', (a) => (a.inputs = {}), 'INVALID_SCHEMA', 'inputs'],
  ['no inputs', 'iris', (a) => (a.inputs = []), 'INVALID_SCHEMA', 'inputs'],
  ['an input of unknown type', 'iris', (a) => (a.inputs[1].type = 'text'), 'INVALID_SCHEMA', 'inputs[1].type'],
  ['an input that is not an object', 'iris', (a) => (a.inputs[1] = null), 'INVALID_SCHEMA', 'inputs[1].type'],
  ['a numerical input with levels', 'iris', (a) => (a.inputs[0].levels = ['a']), 'INVALID_SCHEMA', 'inputs[0].levels'],
  ['an input name with a space', 'iris', (a) => (a.inputs[0].name = 'sepal length'), 'INVALID_SCHEMA', 'inputs[0].name'],
  ['a repeated input name', 'iris', (a) => (a.inputs[3].name = 'sepal_length'), 'INVALID_SCHEMA', 'inputs[3].name'],
  ['a categorical input without levels', 'cars', (a) => (a.inputs[6].levels = []), 'INVALID_SCHEMA', 'inputs[6].levels'],
  ['a categorical input with a bad name', 'cars', (a) => (a.inputs[6].name = '1origin'), 'INVALID_SCHEMA', 'inputs[6].name'],
  ['a repeated level', 'cars', (a) => (a.inputs[6].levels[2] = 'USA'), 'INVALID_SCHEMA', 'inputs[6].levels[2]'],
  ['an empty level', 'cars', (a) => (a.inputs[6].levels[1] = ''), 'INVALID_SCHEMA', 'inputs[6].levels[1]'],
  ['outputs that are not an array', 'iris', (a) => (a.outputs = null), 'INVALID_SCHEMA', 'outputs'],
  ['a classifier with one output', 'iris', (a) => a.outputs.pop(), 'INVALID_SCHEMA', 'outputs'],
  ['outputs in the wrong order', 'iris', (a) => a.outputs.reverse(), 'INVALID_SCHEMA', 'outputs[0].type'],
  ['an output that is not an object', 'cars', (a) => (a.outputs[0] = 'mpg'), 'INVALID_SCHEMA', 'outputs[0]'],
  ['an output without a name', 'cars', (a) => delete a.outputs[0].name, 'INVALID_SCHEMA', 'outputs[0].name'],
  ['an output name with a dash', 'cars', (a) => (a.outputs[0].name = 'miles-per-gallon'), 'INVALID_SCHEMA', 'outputs[0].name'],
  ['a repeated output name', 'iris', (a) => (a.outputs[1].name = 'species'), 'INVALID_SCHEMA', 'outputs[1].name'],
  ['one class', 'iris', (a) => (a.classes = ['setosa']), 'INVALID_SCHEMA', 'classes'],
  ['a repeated class', 'iris', (a) => (a.classes[2] = 'setosa'), 'INVALID_SCHEMA', 'classes[2]'],
  ['classes that are not strings', 'iris', (a) => (a.classes[0] = 0), 'INVALID_SCHEMA', 'classes[0]'],
  ['preprocessing with an extra step', 'iris', (a) => (a.preprocessing.log = true), 'INVALID_SCHEMA', 'preprocessing.log'],
  [
    'a mean per encoded column instead of per numerical input',
    'cars',
    (a) => a.preprocessing.standardisation.mean.push(0, 0, 0),
    'DIMENSION_MISMATCH',
    'preprocessing.standardisation.mean',
  ],
  ['a mean that is not a number', 'iris', (a) => (a.preprocessing.standardisation.mean[2] = '5'), 'INVALID_SCHEMA', 'preprocessing.standardisation.mean[2]'],
  ['a scale of zero', 'iris', (a) => (a.preprocessing.standardisation.scale[1] = 0), 'INVALID_SCHEMA', 'preprocessing.standardisation.scale[1]'],
  ['a scale that is not an array', 'iris', (a) => (a.preprocessing.standardisation.scale = 1), 'INVALID_SCHEMA', 'preprocessing.standardisation.scale'],
  ['weights that are not an array', 'iris', (a) => (a.parameters.weights = 1), 'INVALID_SCHEMA', 'parameters.weights'],
  ['a weight row missing for a class', 'iris', (a) => a.parameters.weights.pop(), 'DIMENSION_MISMATCH', 'parameters.weights'],
  ['two weight rows on a regression', 'cars', (a) => a.parameters.weights.push(a.parameters.weights[0]), 'DIMENSION_MISMATCH', 'parameters.weights'],
  ['weights not covering the one-hot columns', 'cars', (a) => a.parameters.weights[0].pop(), 'DIMENSION_MISMATCH', 'parameters.weights[0]'],
  ['a weight beyond the bound', 'iris', (a) => (a.parameters.weights[1][2] = -1e101), 'INVALID_SCHEMA', 'parameters.weights[1][2]'],
  ['an intercept per class on a regression', 'cars', (a) => a.parameters.intercepts.push(0), 'DIMENSION_MISMATCH', 'parameters.intercepts'],
  ['an intercept beyond the bound', 'cars', (a) => (a.parameters.intercepts[0] = 1e101), 'INVALID_SCHEMA', 'parameters.intercepts[0]'],
  ['a reference that is not an object', 'iris', (a) => (a.reference = []), 'INVALID_SCHEMA', 'reference'],
  ['a reference of no rows', 'iris', (a) => (a.reference.rows = 0), 'INVALID_SCHEMA', 'reference.rows'],
  ['a reference of fractional rows', 'iris', (a) => (a.reference.rows = 1.5), 'INVALID_SCHEMA', 'reference.rows'],
  ['a reference missing a feature', 'iris', (a) => a.reference.features.pop(), 'DIMENSION_MISMATCH', 'reference.features'],
  ['a reference for another feature', 'iris', (a) => (a.reference.features[1].name = 'petal_width'), 'INVALID_REFERENCE', 'reference.features[1]'],
  ['a reference of the wrong type', 'cars', (a) => (a.reference.features[6].type = 'numerical'), 'INVALID_REFERENCE', 'reference.features[6]'],
  ['a numerical reference with levels', 'iris', (a) => (a.reference.features[0].levels = []), 'INVALID_SCHEMA', 'reference.features[0].levels'],
  ['edges that are not an array', 'iris', (a) => (a.reference.features[0].edges = 5), 'INVALID_SCHEMA', 'reference.features[0].edges'],
  ['an edge that is not a number', 'iris', (a) => (a.reference.features[0].edges[1] = null), 'INVALID_SCHEMA', 'reference.features[0].edges[1]'],
  ['edges out of order', 'iris', (a) => a.reference.features[2].edges.reverse(), 'INVALID_REFERENCE', 'reference.features[2].edges[1]'],
  [
    'a repeated edge',
    'iris',
    (a) => (a.reference.features[2].edges[1] = a.reference.features[2].edges[0]),
    'INVALID_REFERENCE',
    'reference.features[2].edges[1]',
  ],
  [
    'a proportion per edge instead of per bin',
    'iris',
    (a) => a.reference.features[0].proportions.pop(),
    'DIMENSION_MISMATCH',
    'reference.features[0].proportions',
  ],
  ['a negative proportion', 'iris', (a) => (a.reference.features[3].proportions[0] = -0.5), 'INVALID_REFERENCE', 'reference.features[3].proportions[0]'],
  ['a proportion above one', 'iris', (a) => (a.reference.features[3].proportions[0] = 1.5), 'INVALID_REFERENCE', 'reference.features[3].proportions[0]'],
  ['proportions not summing to one', 'iris', (a) => (a.reference.features[3].proportions[2] += 1e-6), 'INVALID_REFERENCE', 'reference.features[3].proportions'],
  ['reference levels in another order', 'cars', (a) => a.reference.features[6].levels.reverse(), 'INVALID_REFERENCE', 'reference.features[6].levels'],
  ['a reference missing a level', 'cars', (a) => a.reference.features[6].levels.pop(), 'INVALID_REFERENCE', 'reference.features[6].levels'],
  ['a training minimum without its maximum', 'iris', (a) => delete a.reference.features[0].max, 'INVALID_SCHEMA', 'reference.features[0].max'],
  ['a training maximum without its minimum', 'iris', (a) => delete a.reference.features[0].min, 'INVALID_SCHEMA', 'reference.features[0].min'],
  ['a training minimum that is not a number', 'iris', (a) => (a.reference.features[1].min = '2'), 'INVALID_SCHEMA', 'reference.features[1].min'],
  ['a training minimum above the maximum', 'iris', (a) => (a.reference.features[1].min = 5), 'INVALID_REFERENCE', 'reference.features[1]'],
  ['a training maximum below the last edge', 'iris', (a) => (a.reference.features[2].max = 4), 'INVALID_REFERENCE', 'reference.features[2]'],
  ['a training range on a categorical feature', 'cars', (a) => (a.reference.features[6].min = 0), 'INVALID_SCHEMA', 'reference.features[6].min'],
  [
    'categorical proportions that do not sum to one',
    'cars',
    (a) => (a.reference.features[6].proportions[0] = 0.5),
    'INVALID_REFERENCE',
    'reference.features[6].proportions',
  ],
  ['provenance without a dataset source', 'iris', (a) => (a.provenance.dataset.source = ''), 'INVALID_SCHEMA', 'provenance.dataset.source'],
  ['provenance with an unnamed dataset', 'iris', (a) => (a.provenance.dataset.name = 7), 'INVALID_SCHEMA', 'provenance.dataset.name'],
  ['provenance with negative rows', 'iris', (a) => (a.provenance.dataset.rows = -1), 'INVALID_SCHEMA', 'provenance.dataset.rows'],
  ['a seed beyond 32 bits', 'iris', (a) => (a.provenance.seed = 2 ** 32), 'INVALID_SCHEMA', 'provenance.seed'],
  ['a test fraction of one', 'iris', (a) => (a.provenance.split.test_fraction = 1), 'INVALID_SCHEMA', 'provenance.split.test_fraction'],
  ['a negative test fraction', 'iris', (a) => (a.provenance.split.test_fraction = -0.1), 'INVALID_SCHEMA', 'provenance.split.test_fraction'],
  ['stratified given as a string', 'iris', (a) => (a.provenance.split.stratified = 'yes'), 'INVALID_SCHEMA', 'provenance.split.stratified'],
  ['fractional train rows', 'iris', (a) => (a.provenance.split.train_rows = 0.5), 'INVALID_SCHEMA', 'provenance.split.train_rows'],
  ['missing test rows', 'iris', (a) => delete a.provenance.split.test_rows, 'INVALID_SCHEMA', 'provenance.split.test_rows'],
  ['no method', 'iris', (a) => (a.provenance.method = null), 'INVALID_SCHEMA', 'provenance.method'],
  ['hyperparameters as a list', 'iris', (a) => (a.provenance.hyperparameters = [1]), 'INVALID_SCHEMA', 'provenance.hyperparameters'],
  ['a metric that is not a number', 'cars', (a) => (a.provenance.metrics.r2 = 'good'), 'INVALID_SCHEMA', 'provenance.metrics.r2'],
]

t.test('each malformation is refused with its code and field', async (t) => {
  for (const [name, model, mutate, code, field] of CASES) {
    t.test(name, async (t) => {
      const raw = rawArtifact(model)
      mutate(raw)
      rejects(t, raw.sha256 === 'x' ? JSON.stringify(raw) : sign(raw), code, field)
    })
  }
})

t.test('a number too large for a double is refused as not finite', async (t) => {
  // JSON.parse reads 1e999 as Infinity, which canonical JSON (like JSON.stringify) writes as null.
  const raw = rawArtifact('iris')
  raw.preprocessing.standardisation.mean[0] = Infinity
  rejects(t, sign(raw).replace('"mean":[null', '"mean":[1e999'), 'INVALID_SCHEMA', 'preprocessing.standardisation.mean[0]')
})

t.test('a two-class logistic regression has one weight row: the logit of the second class', async (t) => {
  const raw = rawArtifact('iris')
  raw.classes = ['setosa', 'other']
  delete raw.reference.predictions
  raw.parameters.weights = [raw.parameters.weights[0]]
  raw.parameters.intercepts = [raw.parameters.intercepts[0]]
  t.equal(parseArtifact(sign(raw)).parameters.weights.length, 1)
  raw.parameters.weights.push(raw.parameters.weights[0])
  rejects(t, sign(raw), 'DIMENSION_MISMATCH', 'parameters.weights')
})

t.test('the reference of the answers is optional, and checked as an entry over the label or value output', async (t) => {
  const iris = rawArtifact('iris')
  t.match(parseArtifact(sign(iris)).reference.predictions, { name: 'species', type: 'categorical', levels: iris.classes })
  delete iris.reference.predictions
  t.equal(parseArtifact(sign(iris)).reference.predictions, undefined, 'an artifact without one is served alike')

  const wrongLevels = rawArtifact('iris')
  wrongLevels.reference.predictions.levels = ['setosa', 'virginica', 'versicolor']
  rejects(t, sign(wrongLevels), 'INVALID_REFERENCE', 'reference.predictions.levels')
  const wrongName = rawArtifact('iris')
  wrongName.reference.predictions.name = 'probabilities'
  rejects(t, sign(wrongName), 'INVALID_REFERENCE', 'reference.predictions')
  const cars = rawArtifact('cars')
  t.match(parseArtifact(sign(cars)).reference.predictions, { name: 'miles_per_gallon', type: 'numerical' })
  cars.reference.predictions.proportions = [1]
  rejects(t, sign(cars), 'DIMENSION_MISMATCH', 'reference.predictions.proportions')
})
