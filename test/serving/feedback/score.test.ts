// Scoring labels: each item checked in order (token, age, build, truth, duplicate), an accepted one
// counted in its version's cells and handed to onLabel, a refused one counted by reason alone.
import t from 'tap'
import { createFeedbackScorer, type AcceptedLabel, type FeedbackScorer } from '../../../lib/serving/feedback/score.js'
import { FEEDBACK_REFUSALS, type FeedbackRefusal } from '../../../lib/serving/feedback/metrics.js'
import { createSeenSet } from '../../../lib/serving/feedback/seen.js'
import { mintTokens, versionKey, type VersionKey } from '../../../lib/serving/feedback/token.js'
import type { KnownBuild } from '../../../lib/serving/feedback/versions.js'
import { type CounterCell, counterCell, histogramCell, sumCell } from '../../../lib/telemetry/metrics/cells.js'

const SECRET = Buffer.from('a-fleet-secret-of-32-characters!')
const NOW_S = 1_800_000_000
const MAX_AGE_S = 3600
const CLASSES = ['setosa', 'versicolor', 'virginica']

const keyOf = (model: string, kind: 'class' | 'value'): VersionKey => versionKey(SECRET, model, '1', 'abcdef012345', kind) as VersionKey

/** The shipped iris's build, its confusion cells kept by `actual,predicted` for the test to read. */
const classifier = (): KnownBuild & { cells: Map<string, CounterCell> } => {
  const cells = new Map<string, CounterCell>()
  const confusion = (actual: number, predicted: number): CounterCell => {
    const key = `${actual},${predicted}`
    const cell = cells.get(key) ?? counterCell({})
    cells.set(key, cell)
    return cell
  }
  return {
    model: 'iris',
    version: '1',
    classes: CLASSES,
    feedback: { rows: counterCell({}), confusion, errors: undefined },
    delay: histogramCell({}, [60, 3600]),
    keys: [keyOf('iris', 'class')],
    cells,
  }
}

const regressor = (): KnownBuild => ({
  model: 'cars',
  version: '1',
  classes: undefined,
  feedback: { rows: counterCell({}), confusion: undefined, errors: { absolute: sumCell({}), squared: sumCell({}), overestimate: sumCell({}) } },
  delay: histogramCell({}, [60, 3600]),
  keys: [keyOf('cars', 'value')],
})

type Setup = Readonly<{ scorer: FeedbackScorer; refused: Record<FeedbackRefusal, { value: number }>; labels: AcceptedLabel[] }>

const setup = (builds: readonly KnownBuild[]): Setup => {
  const refused = Object.fromEntries(FEEDBACK_REFUSALS.map((reason) => [reason, { value: 0 }])) as Record<FeedbackRefusal, { value: number }>
  const labels: AcceptedLabel[] = []
  const scorer = createFeedbackScorer({
    versions: {
      publish: () => {},
      keyOf: () => undefined,
      known: (model, version, build) => builds.find((b) => b.model === model && b.version === version && b.keys[0]?.build === build),
      // As the fleet's ring does: a build it does not serve still has the key its secret derives.
      ring: (model, version, build, kind) => [versionKey(SECRET, model, version, build, kind) as VersionKey],
    },
    seen: createSeenSet(100),
    maxAgeS: MAX_AGE_S,
    refused,
    onLabel: (label) => void labels.push(label),
  })
  return { scorer, refused, labels }
}

const tokens = (build: KnownBuild, answers: number[], issuedS = NOW_S - 120): string[] =>
  JSON.parse(mintTokens(build.keys[0] as VersionKey, answers, answers.length, issuedS)) as string[]

t.test("a classifier's labels: counted by (truth, answer), the delay observed, each handed on", async (t) => {
  const iris = classifier()
  const { scorer, labels } = setup([iris])
  const [a, b] = tokens(iris, [0, 2])
  t.same(
    scorer.score(
      [
        { token: a as string, truth: 'setosa' },
        { token: b as string, truth: 'versicolor' },
      ],
      NOW_S,
    ),
    { accepted: 2, refused: [] },
  )
  t.equal(iris.feedback.rows.value, 2)
  t.same(
    [...iris.cells].map(([key, cell]) => [key, cell.value]),
    [
      ['0,0', 1],
      ['1,2', 1],
    ],
  )
  t.equal(iris.delay.count, 2)
  t.equal(iris.delay.sum, 240)
  t.match(labels[1], { token: b, model: 'iris', version: '1', build: 'abcdef012345', truth: 'versicolor', predicted: 'virginica', delayS: 120 })
})

t.test("a regressor's labels: its absolute, squared and over-estimate errors summed", async (t) => {
  const cars = regressor()
  const { scorer, labels } = setup([cars])
  const [a, b] = tokens(cars, [20, 30])
  t.same(
    scorer.score(
      [
        { token: a as string, truth: 25 },
        { token: b as string, truth: 28 },
      ],
      NOW_S,
    ),
    { accepted: 2, refused: [] },
  )
  const errors = cars.feedback.errors as NonNullable<KnownBuild['feedback']['errors']>
  t.same([errors.absolute.sum, errors.squared.sum, errors.overestimate.sum, errors.absolute.count], [7, 29, 2, 2])
  t.match(labels[0], { model: 'cars', truth: 25, predicted: 20 })
})

t.test('each refusal by its reason, counted there alone, in the order the checks run', async (t) => {
  const iris = classifier()
  const { scorer, refused } = setup([iris])
  const [fresh, again, badTruth] = tokens(iris, [1, 1, 1])
  const [old] = tokens(iris, [1], NOW_S - MAX_AGE_S - 1)
  const [stranger] = tokens({ ...classifier(), keys: [versionKey(SECRET, 'iris', '2', 'abcdef012345', 'class') as VersionKey] }, [1])
  const result = scorer.score(
    [
      { token: 'not a token', truth: 'setosa' },
      { token: old as string, truth: 'setosa' },
      { token: stranger as string, truth: 'setosa' },
      { token: badTruth as string, truth: 3 },
      { token: badTruth as string, truth: 'rose' },
      { token: fresh as string, truth: 'setosa' },
      { token: fresh as string, truth: 'setosa' },
      { token: again as string, truth: 'setosa' },
    ],
    NOW_S,
  )
  t.same(result.refused, [
    { index: 0, reason: 'invalid_token' },
    { index: 1, reason: 'expired' },
    { index: 2, reason: 'unknown_version' },
    { index: 3, reason: 'invalid_truth', expected: CLASSES },
    { index: 4, reason: 'invalid_truth', expected: CLASSES },
    { index: 6, reason: 'duplicate' },
  ])
  t.equal(result.accepted, 2)
  t.same(
    FEEDBACK_REFUSALS.map((reason) => [reason, refused[reason].value]),
    [
      ['invalid_token', 1],
      ['expired', 1],
      ['invalid_truth', 2],
      ['unknown_version', 1],
      ['duplicate', 1],
    ],
  )
  t.equal(iris.feedback.rows.value, 2, 'the refused are not counted as rows')
  // A refused truth is not seen: the corrected resend is scored.
  t.same(scorer.score([{ token: badTruth as string, truth: 'setosa' }], NOW_S), { accepted: 1, refused: [] })
})

t.test("a class index beyond the build's classes is another build: unknown_version", async (t) => {
  const iris = classifier()
  const { scorer } = setup([iris])
  const [token] = tokens(iris, [5])
  t.same(scorer.score([{ token: token as string, truth: 'setosa' }], NOW_S).refused, [{ index: 0, reason: 'unknown_version' }])
})

t.test('a batch whose checking throws is not scored, and nothing in it is remembered: the resend is scored', async (t) => {
  const iris = classifier()
  // A build whose classes cannot be read: checking a label of it throws.
  const broken = { ...classifier(), keys: [versionKey(SECRET, 'iris', '2', 'abcdef012345', 'class') as VersionKey], version: '2' } as KnownBuild
  Object.defineProperty(broken, 'classes', {
    get: () => {
      throw new TypeError('unreadable classes')
    },
  })
  const { scorer } = setup([iris, broken])
  const [token] = tokens(iris, [0])
  const [bad] = tokens(broken, [0])
  t.throws(
    () =>
      scorer.score(
        [
          { token: token as string, truth: 'setosa' },
          { token: bad as string, truth: 'setosa' },
        ],
        NOW_S,
      ),
    TypeError,
  )
  t.equal(iris.feedback.rows.value, 0, 'nothing counted')
  t.same(scorer.score([{ token: token as string, truth: 'setosa' }], NOW_S), { accepted: 1, refused: [] }, 'not remembered: the resend is scored')
  t.equal(iris.feedback.rows.value, 1)
})

t.test('the label handed on carries the token as minted, not the variant a client sent', async (t) => {
  const iris = classifier()
  const { scorer, labels } = setup([iris])
  const [token] = tokens(iris, [0]) as [string]
  // base64url's last character of a token whose bytes are not a multiple of 3 has unused low bits.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const bytes = Buffer.from(token, 'base64url')
  const variant = [...alphabet]
    .map((last) => `${token.slice(0, -1)}${last}`)
    .find((text) => text !== token && Buffer.from(text, 'base64url').equals(bytes)) as string
  t.type(variant, 'string')
  t.same(scorer.score([{ token: variant, truth: 'setosa' }], NOW_S), { accepted: 1, refused: [] })
  t.equal(labels[0]?.token, token)
  t.same(scorer.score([{ token, truth: 'setosa' }], NOW_S).refused, [{ index: 0, reason: 'duplicate' }], 'one token, whichever text')
})
