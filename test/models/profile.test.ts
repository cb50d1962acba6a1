// parseProfile: the one way a profile gets in, refusing every malformed member by name.
import t from 'tap'
import type { Input } from '../../lib/models/runtime.js'
import { parseProfile, predictionInput, type Profile, ProfileError, serialiseProfile } from '../../lib/models/profile.js'
import { rawArtifact } from '../fixtures/models.js'

const GOOD = {
  format_version: 1,
  rows: 4,
  features: [
    { name: 'x', type: 'numerical', edges: [1, 2.5], proportions: [0.25, 0.5, 0.25], min: 0.5, max: 3 },
    { name: 'c', type: 'categorical', levels: ['b', 'a'], proportions: [0.75, 0.25] },
  ],
  predictions: { name: 'y', type: 'categorical', levels: ['no', 'yes'], proportions: [0.5, 0.5] },
}

const INPUTS: readonly Input[] = [
  { name: 'x', type: 'numerical' },
  { name: 'c', type: 'categorical', levels: ['b', 'a'] },
]
const MODEL = { inputs: INPUTS, predictions: { name: 'y', type: 'categorical', levels: ['no', 'yes'] } } as const

/** A fresh, mutable copy of GOOD. */
const good = (): any => structuredClone(GOOD)

t.test('a well-formed profile parses, deep-frozen, with or without a model to match', async (t) => {
  const profile = parseProfile(JSON.stringify(GOOD), MODEL)
  t.same(profile, GOOD)
  t.ok(Object.isFrozen(profile) && Object.isFrozen(profile.features[0]) && Object.isFrozen((profile.features[0] as any).edges))
  t.same(parseProfile(Buffer.from(JSON.stringify(GOOD))), GOOD, 'bytes')
  const { predictions: _, ...bare } = good()
  t.same(parseProfile(JSON.stringify(bare), MODEL), bare, 'predictions are optional')
  t.same(parseProfile(JSON.stringify({ ...bare, features: [{ name: 'x', type: 'numerical', edges: [], proportions: [1] }] })).features[0], {
    name: 'x',
    type: 'numerical',
    edges: [],
    proportions: [1],
  })
})

t.test('serialised as two-space JSON with a final newline, in member order, and read back the same', async (t) => {
  const text = serialiseProfile(GOOD as Profile)
  t.ok(text.startsWith('{\n  "format_version": 1,\n  "rows": 4,\n  "features": [\n'))
  t.ok(text.endsWith('}\n'))
  t.same(parseProfile(text), GOOD)
})

t.test("a model's answers as a profile describes them", async (t) => {
  t.same(predictionInput(rawArtifact('iris')), { name: 'species', type: 'categorical', levels: ['setosa', 'versicolor', 'virginica'] })
  t.same(predictionInput(rawArtifact('cars')), { name: 'miles_per_gallon', type: 'numerical' })
})

t.test('every malformed member is refused by name, with a stable code', async (t) => {
  const cases: Array<[string, (p: any) => unknown, string, string]> = [
    ['not JSON', () => '{', 'INVALID_JSON', '(document): is not UTF-8 JSON'],
    ['not an object', () => [], 'INVALID_SCHEMA', '(document): must be a JSON object'],
    ['another format', (p) => ({ ...p, format_version: 2 }), 'UNSUPPORTED_FORMAT', 'format_version: 2 is not 1'],
    ['no format', ({ format_version: _, ...p }) => p, 'UNSUPPORTED_FORMAT', 'format_version: undefined is not 1'],
    ['an unknown member', (p) => ({ ...p, model: 'iris' }), 'INVALID_SCHEMA', '(document).model: is not a member of this object'],
    ['no rows', ({ rows: _, ...p }) => p, 'INVALID_SCHEMA', '(document).rows: is missing'],
    ['rows 0', (p) => ({ ...p, rows: 0 }), 'INVALID_SCHEMA', 'rows: must be a positive integer'],
    ['rows 1.5', (p) => ({ ...p, rows: 1.5 }), 'INVALID_SCHEMA', 'rows: must be a positive integer'],
    ['features not a list', (p) => ({ ...p, features: {} }), 'INVALID_SCHEMA', 'features: must be an array'],
    ['no features', (p) => ({ ...p, features: [] }), 'INVALID_SCHEMA', 'features: must have at least 1 entry'],
    ['a feature not an object', (p) => ({ ...p, features: [1] }), 'INVALID_SCHEMA', 'features[0]: must be an object'],
    [
      'a feature of no type',
      (p) => {
        p.features[1].type = 'ordinal'
      },
      'INVALID_SCHEMA',
      "features[1].type: must be 'numerical' or 'categorical'",
    ],
    [
      'a member of the other type',
      (p) => {
        p.features[0].levels = []
      },
      'INVALID_SCHEMA',
      'features[0].levels: is not a member of this object',
    ],
    [
      'no edges',
      (p) => {
        delete p.features[0].edges
      },
      'INVALID_SCHEMA',
      'features[0].edges: is missing',
    ],
    [
      'an empty name',
      (p) => {
        p.features[0].name = ''
      },
      'INVALID_SCHEMA',
      'features[0].name: must be a non-empty string',
    ],
    [
      'a repeated name',
      (p) => {
        p.features[1].name = 'x'
      },
      'INVALID_SCHEMA',
      'features[1].name: repeats "x"',
    ],
    [
      'edges not a list',
      (p) => {
        p.features[0].edges = 1
      },
      'INVALID_SCHEMA',
      'features[0].edges: must be an array',
    ],
    [
      'an edge not a number',
      (p) => {
        p.features[0].edges[1] = '2.5'
      },
      'INVALID_SCHEMA',
      'features[0].edges[1]: must be a finite number',
    ],
    [
      'a minimum without a maximum',
      (p) => {
        delete p.features[0].max
      },
      'INVALID_SCHEMA',
      'features[0].max: is missing: min and max come together',
    ],
    [
      'a maximum without a minimum',
      (p) => {
        delete p.features[0].min
      },
      'INVALID_SCHEMA',
      'features[0].min: is missing: min and max come together',
    ],
    [
      'a maximum that is not a number',
      (p) => {
        p.features[0].max = null
      },
      'INVALID_SCHEMA',
      'features[0].max: must be a finite number',
    ],
    [
      'a minimum above the maximum',
      (p) => {
        p.features[0].min = 4
      },
      'INVALID_REFERENCE',
      'features[0]: min (4) must not exceed max (3)',
    ],
    [
      'a minimum above the first edge',
      (p) => {
        p.features[0].min = 1.5
      },
      'INVALID_REFERENCE',
      'features[0]: min (1.5) must not exceed the first edge (1)',
    ],
    [
      'a maximum below the last edge',
      (p) => {
        p.features[0].max = 2
      },
      'INVALID_REFERENCE',
      'features[0]: max (2) must not be below the last edge (2.5)',
    ],
    [
      'a range on a categorical feature',
      (p) => {
        p.features[1].min = 0
      },
      'INVALID_SCHEMA',
      'features[1].min: is not a member of this object',
    ],
    [
      'edges out of order',
      (p) => {
        p.features[0].edges = [2.5, 2.5]
      },
      'INVALID_REFERENCE',
      'features[0].edges[1]: edges must be strictly increasing',
    ],
    [
      'a proportion short',
      (p) => {
        p.features[0].proportions = [0.5, 0.5]
      },
      'DIMENSION_MISMATCH',
      'features[0].proportions: must have 3 entries, has 2',
    ],
    [
      'proportions not a list',
      (p) => {
        p.features[1].proportions = null
      },
      'INVALID_SCHEMA',
      'features[1].proportions: must be an array',
    ],
    [
      'a proportion not a number',
      (p) => {
        p.features[1].proportions[0] = null
      },
      'INVALID_SCHEMA',
      'features[1].proportions[0]: must be a finite number',
    ],
    [
      'a negative proportion',
      (p) => {
        p.features[1].proportions = [1.25, -0.25]
      },
      'INVALID_REFERENCE',
      'features[1].proportions[0]: must be between 0 and 1',
    ],
    [
      'proportions not summing to 1',
      (p) => {
        p.features[0].proportions = [0.25, 0.5, 0.5]
      },
      'INVALID_REFERENCE',
      'features[0].proportions: must sum to 1 (within 1e-9), sum to 1.25',
    ],
    [
      'levels not a list',
      (p) => {
        p.features[1].levels = 'a'
      },
      'INVALID_SCHEMA',
      'features[1].levels: must be an array',
    ],
    [
      'no levels',
      (p) => {
        p.features[1].levels = []
      },
      'INVALID_SCHEMA',
      'features[1].levels: must have at least 1 entry',
    ],
    [
      'an empty level',
      (p) => {
        p.features[1].levels[1] = ''
      },
      'INVALID_SCHEMA',
      'features[1].levels[1]: must be a non-empty string',
    ],
    [
      'a repeated level',
      (p) => {
        p.features[1].levels[1] = 'b'
      },
      'INVALID_SCHEMA',
      'features[1].levels[1]: repeats "b"',
    ],
    [
      'predictions malformed',
      (p) => {
        p.predictions.proportions = [1]
      },
      'DIMENSION_MISMATCH',
      'predictions.proportions: must have 2 entries, has 1',
    ],
    ['predictions not an object', (p) => ({ ...p, predictions: null }), 'INVALID_SCHEMA', 'predictions: must be an object'],
  ]
  for (const [what, change, code, message] of cases) {
    const raw = good()
    const text = (change(raw) ?? raw) as any
    const error = t.throws(() => parseProfile(typeof text === 'string' ? text : JSON.stringify(text)), what) as ProfileError
    t.type(error, ProfileError)
    t.equal(error.code, code, what)
    t.ok(error.message.startsWith(message), `${what}: ${error.message}`)
    t.equal(error.message, `${error.field}: ${error.reason}`)
  }
  t.throws(() => parseProfile(Buffer.from([0x7b, 0xff, 0x7d])), { code: 'INVALID_JSON' }, 'bytes that are not UTF-8')
})

t.test('with a model, the features must be its inputs and the predictions its answers', async (t) => {
  const cases: Array<[string, (p: any) => unknown, string, string]> = [
    [
      'an input short',
      (p) => {
        p.features = [p.features[0]]
      },
      'DIMENSION_MISMATCH',
      'features: must have one entry per input (2), has 1',
    ],
    [
      'inputs out of order',
      (p) => {
        p.features.reverse()
      },
      'INVALID_REFERENCE',
      'features[0]: must describe x (numerical), describes c (categorical)',
    ],
    [
      'another type',
      (p) => {
        p.features[1] = { name: 'c', type: 'numerical', edges: [], proportions: [1] }
      },
      'INVALID_REFERENCE',
      'features[1]: must describe c (categorical), describes c (numerical)',
    ],
    [
      'other levels',
      (p) => {
        p.features[1].levels.reverse()
      },
      'INVALID_REFERENCE',
      'features[1].levels: must equal the levels of c: b, a',
    ],
    [
      'another answer',
      (p) => {
        p.predictions.name = 'z'
      },
      'INVALID_REFERENCE',
      'predictions: must describe y (categorical), describes z (categorical)',
    ],
  ]
  for (const [what, change, code, message] of cases) {
    const raw = good()
    change(raw)
    const error = t.throws(() => parseProfile(JSON.stringify(raw), MODEL), what) as ProfileError
    t.equal(error.code, code, what)
    t.equal(error.message, message)
  }
  t.same(parseProfile(JSON.stringify(good())).features.length, 2, 'the same profiles parse without a model')
})

t.test('quality: optional, metrics by safe names, each a finite number, kept and frozen', async (t) => {
  const quality = { accuracy: 0.96, log_loss: 0.125, f1_macro: 0.5, r2: -3 }
  const profile = parseProfile(JSON.stringify({ ...GOOD, quality }), MODEL)
  t.same(profile.quality, quality)
  t.ok(Object.isFrozen(profile.quality), 'frozen with the rest')
  t.equal(parseProfile(JSON.stringify(GOOD)).quality, undefined, 'absent: no quality')
  t.ok(
    serialiseProfile(profile).endsWith('"quality": {\n    "accuracy": 0.96,\n    "log_loss": 0.125,\n    "f1_macro": 0.5,\n    "r2": -3\n  }\n}\n'),
    'the last member',
  )
  const long = `m${'x'.repeat(63)}`
  t.same(parseProfile(JSON.stringify({ ...GOOD, quality: { [long]: 1 } })).quality, { [long]: 1 }, 'a name of 64 characters')

  const named = 'a metric name is 1 to 64 lower-case letters, digits and underscores, starting with a letter'
  // The member as JSON text: 1e400 is no number JSON.stringify can write.
  const cases: Array<[string, string, string]> = [
    ['not an object', '[0.9]', 'quality: must be an object of metric names to numbers'],
    ['null', 'null', 'quality: must be an object of metric names to numbers'],
    ['empty', '{}', 'quality: must have at least 1 metric (leave quality out when none was measured)'],
    ['a string value', '{"accuracy":"0.9"}', 'quality.accuracy: must be a finite number'],
    ['null value', '{"rmse":null}', 'quality.rmse: must be a finite number'],
    ['a value past float64', '{"rmse":1e400}', 'quality.rmse: must be a finite number'],
    ['upper case', '{"Accuracy":0.9}', `quality."Accuracy": ${named}`],
    ['a space', '{"log loss":0.1}', `quality."log loss": ${named}`],
    ['a quote', '{"a\\"b":0.1}', `quality."a\\"b": ${named}`],
    ['a leading digit', '{"1st":0.1}', `quality."1st": ${named}`],
    ['a leading underscore', '{"_x":0.1}', `quality."_x": ${named}`],
    ['the empty name', '{"":0.1}', `quality."": ${named}`],
    ['65 characters', `{"${long}x":0.1}`, `quality."${long}x": ${named}`],
  ]
  for (const [what, member, message] of cases) {
    const text = `${JSON.stringify(GOOD).slice(0, -1)},"quality":${member}}`
    const error = t.throws(() => parseProfile(text, MODEL), what) as ProfileError
    t.equal(error.code, 'INVALID_SCHEMA', what)
    t.equal(error.message, message, what)
  }
})
