// The classifier quality gate: Newcombe's interval on canary − default accuracy against −0.05, and
// Wilson's on the canary's accuracy against its reference − 0.05 (SvcCanaryQualityLow and
// SvcModelAccuracyLow, ops/prometheus/rules/quality.yml), from 200 labelled rows, earlier only on a
// confident breach. The intervals' own figures are held by intervals.test.ts; here the bounds.
import t from 'tap'
import { ACCURACY_MARGIN, type AccuracyInput, accuracyGate, QUALITY_GATE_DEFAULTS } from '../../../../lib/tools/rollout/gates/accuracy.js'
import { newcombe, wilson, Z_999 } from '../../../../lib/tools/rollout/gates/intervals.js'

const input = (correct: number, labelled: number, defaultCorrect = 9400, defaultLabelled = 10_000, reference?: number): AccuracyInput => ({
  canary: { correct, labelled },
  default: { correct: defaultCorrect, labelled: defaultLabelled },
  ...(reference === undefined ? {} : { reference }),
})

t.test("the margin is the alerts' 0.05, from 200 labelled rows, a confident breach from 50", async (t) => {
  t.equal(ACCURACY_MARGIN, 0.05)
  t.same(QUALITY_GATE_DEFAULTS, { minLabels: 200, criticalFrom: 50 })
})

t.test('6 points under the default on 10 000 rows a side fails; 4 points under passes', async (t) => {
  // 0.88 − 0.94: Newcombe's upper bound is −0.0521, past −0.05; at 99.9 % it is −0.0468, not.
  const fail = accuracyGate(input(8800, 10_000))
  t.same([fail.gate, fail.verdict, fail.critical], ['quality', 'fail', false])
  t.match(
    fail.reason,
    /^canary accuracy against the default version's: 88\.00 % against 94\.00 % over 10000 and 10000 labelled rows, difference -0\.06 \(95 % interval -0\.06\d+ to -0\.052\d+\): wholly past the margin -0\.05$/,
  )
  const pass = accuracyGate(input(9000, 10_000))
  t.equal(pass.verdict, 'pass')
  t.match(pass.reason, /difference -0\.04 .*: wholly within the margin -0\.05$/)
})

t.test('the figures behind it: both accuracies, the difference and its intervals', async (t) => {
  const { values } = accuracyGate(input(8800, 10_000))
  t.same(values, {
    min_labels: 200,
    canary_correct: 8800,
    canary_labelled: 10_000,
    default_correct: 9400,
    default_labelled: 10_000,
    canary_accuracy: 0.88,
    default_accuracy: 0.94,
    difference: 0.88 - 0.94,
    difference_low: newcombe(8800, 10_000, 9400, 10_000)?.low,
    difference_high: newcombe(8800, 10_000, 9400, 10_000)?.high,
    difference_confident_high: newcombe(8800, 10_000, 9400, 10_000, Z_999)?.high,
  })
})

t.test('an interval across the margin is inconclusive, with the rows that would decide, or none when it sits on it', async (t) => {
  const open = accuracyGate(input(180, 200, 1880, 2000))
  t.equal(open.verdict, 'inconclusive')
  t.match(open.reason, /: across the margin -0\.05, about \d+ more labelled rows to decide at the current figures$/)
  // 0/400 against 20/400: a difference of exactly −0.05.
  t.match(accuracyGate(input(0, 400, 20, 400)).reason, /undecidable at the current figures, which sit on it$/)
})

t.test("against the reference: Wilson's interval on the canary's accuracy against the reference less 0.05", async (t) => {
  // 0.90 on 10 000 rows: 95 % interval 0.894 to 0.906, 99.9 % up to 0.910.
  const below = accuracyGate(input(9000, 10_000, 9400, 10_000, 0.97))
  t.same([below.verdict, below.critical], ['fail', true])
  t.match(
    below.reason,
    /; canary accuracy against its reference: 90\.00 % over 10000 labelled rows .*: wholly past the floor 92\.00 % \(the reference 97\.00 % less 0\.05\), a confident breach$/,
  )
  t.match(below.values, { reference: 0.97, reference_floor: 0.97 - 0.05, canary_high: wilson(9000, 10_000)?.high })
  t.equal(accuracyGate(input(9000, 10_000, 9400, 10_000, 0.93)).verdict, 'pass', 'floor 0.88')
  t.equal(accuracyGate(input(9000, 10_000, 9400, 10_000, 0.955)).verdict, 'inconclusive', 'floor 0.905, inside the interval')
})

t.test('before 200 labelled rows only a confident breach fails; before 50 nothing does', async (t) => {
  const wrong = accuracyGate(input(20, 100))
  t.same([wrong.verdict, wrong.critical], ['fail', true])
  t.match(wrong.reason, /over 100 and 10000 labelled rows, .*: its 99\.9 % interval is past the margin -0\.05, a confident breach$/)
  const early = accuracyGate(input(90, 100))
  t.equal(early.verdict, 'inconclusive')
  t.match(early.reason, /: 100 more labelled rows needed \(100 of 200\)$/)
  const none = accuracyGate(input(0, 49, 9400, 10_000, 0.97))
  t.equal(none.verdict, 'inconclusive')
  t.equal(
    none.reason,
    "canary accuracy against the default version's, on the side with fewer labels: 151 more labelled rows needed (49 of 200); canary accuracy against its reference: 151 more labelled rows needed (49 of 200)",
  )
})

t.test('the comparison counts the side with fewer labels; a side with none has no accuracy in the values', async (t) => {
  t.match(accuracyGate(input(900, 1000, 90, 100)).reason, /100 more labelled rows needed \(100 of 200\)$/)
  const { values } = accuracyGate(input(0, 0, 0, 0))
  t.notOk('canary_accuracy' in values)
  t.notOk('default_accuracy' in values)
})

t.test('more correct answers than labels, or a reference above 1, decide nothing', async (t) => {
  t.equal(accuracyGate(input(201, 200)).reason, 'no data decides nothing: the canary has more correct answers than labelled rows')
  t.equal(accuracyGate(input(100, 200, 11, 10)).reason, 'no data decides nothing: the default version has more correct answers than labelled rows')
  t.equal(accuracyGate(input(100, 200, 9400, 10_000, 1.2)).reason, 'no data decides nothing: the reference accuracy 1.2 is above 1')
})

t.test("the plan's min_labels and floor for a confident breach replace the defaults", async (t) => {
  t.equal(accuracyGate(input(90, 100), { minLabels: 100 }).verdict, 'inconclusive', 'decided, and across the margin')
  t.match(accuracyGate(input(90, 100), { minLabels: 100 }).reason, /across the margin/)
  t.equal(accuracyGate(input(20, 100), { criticalFrom: 101 }).verdict, 'inconclusive')
})
