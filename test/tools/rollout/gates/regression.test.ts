// The regressor quality gate: Welch's test on MAE (Var|e| = MSE − MAE² from the sums, as sample
// variance) against a margin of a quarter of the default's MAE, and RMSE against 1.25 × the
// default's and the reference's, as SvcCanaryQualityLow and SvcModelRmseHigh
// (ops/prometheus/rules/quality.yml).
import t from 'tap'
import { ERROR_RATIO, type ErrorSums, type RegressionInput, regressionGate } from '../../../../lib/tools/rollout/gates/regression.js'
import { type Sample, welch } from '../../../../lib/tools/rollout/gates/intervals.js'

const DEFAULT: ErrorSums = { absolute: 2000, squared: 6000, rows: 3000 }
const input = (absolute: number, squared: number, rows: number, referenceRmse?: number, other: ErrorSums = DEFAULT): RegressionInput => ({
  canary: { absolute, squared, rows },
  default: other,
  ...(referenceRmse === undefined ? {} : { referenceRmse }),
})
/** Welch's sample of |e| from the sums, worked here by hand. */
const sample = ({ absolute, squared, rows }: ErrorSums): Sample => ({
  mean: absolute / rows,
  variance: ((squared / rows - (absolute / rows) ** 2) * rows) / (rows - 1),
  n: rows,
})

t.test('a canary as good as the default passes on MAE and on both RMSE comparisons', async (t) => {
  t.equal(ERROR_RATIO, 1.25)
  const result = regressionGate(input(260, 800, 400, 1.5))
  t.same([result.gate, result.verdict], ['quality', 'pass'])
  t.match(
    result.reason,
    /^canary MAE against the default version's: 0\.65 against 0\.6667 over 400 and 3000 labelled rows, difference -0\.01667 \(95 % interval .* Welch's t on [\d.]+ degrees of freedom\): wholly within the margin 0\.1667 \(1\.25 times the default's MAE, less it\); canary RMSE against the default version's: 1\.414 over 400 labelled rows, within 1\.25 times the default's 1\.414; canary RMSE against its reference: 1\.414 over 400 labelled rows, within 1\.25 times the reference 1\.5$/,
  )
})

t.test("the MAE figures are Welch's on |e| with the sample variance MSE − MAE², times n/(n − 1)", async (t) => {
  const { values } = regressionGate(input(400, 1000, 400))
  const test = welch(sample({ absolute: 400, squared: 1000, rows: 400 }), sample(DEFAULT))
  const confident = welch(sample({ absolute: 400, squared: 1000, rows: 400 }), sample(DEFAULT), 0.999)
  t.same(values, {
    min_labels: 200,
    canary_absolute_error_sum: 400,
    canary_squared_error_sum: 1000,
    canary_labelled: 400,
    default_absolute_error_sum: 2000,
    default_squared_error_sum: 6000,
    default_labelled: 3000,
    canary_mae: 1,
    canary_rmse: Math.sqrt(2.5),
    default_mae: 2000 / 3000,
    default_rmse: Math.sqrt(2),
    rmse_limit: 1.25 * Math.sqrt(2),
    mae_difference: test?.difference,
    mae_low: test?.low,
    mae_high: test?.high,
    mae_confident_low: confident?.low,
    mae_margin: 0.25 * (2000 / 3000),
    welch_df: test?.df,
    welch_t: test?.t,
    welch_p: test?.p,
  })
})

t.test('an MAE a third above the default fails, not confidently; far above, confidently', async (t) => {
  // MAE 1 against 0.667: difference 0.333, 95 % low 0.205 past the margin 0.167, 99.9 % low 0.117 not.
  const above = regressionGate(input(400, 1000, 400))
  t.same([above.verdict, above.critical], ['fail', false])
  t.match(above.reason, /wholly past the margin 0\.1667 \(1\.25 times the default's MAE, less it\);/)
  const far = regressionGate(input(1000, 4000, 400))
  t.same([far.verdict, far.critical], ['fail', true])
  t.match(far.reason, /a confident breach; canary RMSE against the default version's: 3\.162 over 400 labelled rows, past 1\.25 times the default's 1\.414$/)
})

t.test('RMSE alone can fail: outliers that leave MAE alike', async (t) => {
  const result = regressionGate(input(1350, 7000, 2000))
  t.same([result.verdict, result.critical], ['fail', false])
  t.match(
    result.reason,
    /wholly within the margin .*; canary RMSE against the default version's: 1\.871 over 2000 labelled rows, past 1\.25 times the default's 1\.414$/,
  )
  t.match(
    regressionGate(input(260, 800, 400, 1.0)).reason,
    /canary RMSE against its reference: 1\.414 over 400 labelled rows, past 1\.25 times the reference 1$/,
  )
  t.equal(regressionGate(input(260, 800, 400, 1.0)).verdict, 'fail')
})

t.test('before 200 labelled rows a confident MAE breach fails, and RMSE, a point estimate, always waits', async (t) => {
  const early = regressionGate(input(250, 1000, 100, 1.5))
  t.same([early.verdict, early.critical], ['fail', true])
  t.match(
    early.reason,
    /its 99\.9 % interval is past the margin .*; canary RMSE against the default version's: 100 more labelled rows needed \(100 of 200\); canary RMSE against its reference: 100 more labelled rows needed \(100 of 200\)$/,
  )
  const alike = regressionGate(input(65, 200, 100))
  t.equal(alike.verdict, 'inconclusive')
  t.match(alike.reason, /^canary MAE against the default version's: .*: 100 more labelled rows needed \(100 of 200\);/)
  t.match(
    regressionGate(input(25, 100, 40)).reason,
    /^canary MAE against the default version's, on the side with fewer labels: 160 more labelled rows needed \(40 of 200\);/,
  )
})

t.test('an MAE interval across the margin says how many rows would decide', async (t) => {
  // MAE 0.85 against 0.667 with a margin of 0.167: across it.
  t.match(regressionGate(input(340, 800, 400)).reason, /across the margin 0\.1667 .*, about \d+ more labelled rows to decide at the current figures;/)
})

t.test("errors that never vary leave Welch's test nothing to stand on: inconclusive", async (t) => {
  // Every |e| 1: Σe² · n = (Σ|e|)², the least Cauchy–Schwarz allows, which is not refused.
  const flat = regressionGate(input(400, 400, 400, undefined, { absolute: 3000, squared: 3000, rows: 3000 }))
  t.equal(flat.verdict, 'inconclusive')
  t.match(flat.reason, /^canary MAE against the default version's: Welch's test needs 2 labelled rows or more on each side and errors that vary;/)
  t.notOk('welch_df' in flat.values)
  const one = regressionGate(input(1, 1, 1), { minLabels: 0, criticalFrom: 0 })
  t.match(one.reason, /^canary MAE against the default version's: Welch's test needs 2 labelled rows/)
})

t.test('no rows at all, even with no minimum, decide nothing and compute nothing', async (t) => {
  const none = regressionGate(input(0, 0, 0), { minLabels: 0, criticalFrom: 0 })
  t.equal(none.verdict, 'inconclusive')
  t.match(none.reason, /canary RMSE against the default version's: 1 more labelled rows needed \(0 of 0\)/)
  t.notOk('canary_mae' in none.values)
  t.ok('default_mae' in none.values)
  t.notOk('default_mae' in regressionGate(input(260, 800, 400, undefined, { absolute: 0, squared: 0, rows: 0 })).values)
})

t.test('error sums no errors can make decide nothing: Σe² under (Σ|e|)² / n', async (t) => {
  t.equal(regressionGate(input(400, 100, 400)).reason, 'no data decides nothing: the error sums of the canary are impossible: Σe² = 100 is below (Σ|e|)² / n')
  t.match(
    regressionGate(input(260, 800, 400, undefined, { absolute: 3000, squared: 2000, rows: 3000 })).reason,
    /the error sums of the default version are impossible/,
  )
})
