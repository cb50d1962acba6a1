// The prediction drift gate: PSI of class shares with lib/drift/psi.ts's floor and drift.yml's
// thresholds, a breach confirmed by the chi-square test of homogeneity. Chi-square figures are
// scipy 1.10's chi2_contingency(table, correction=False).
import t, { type Test } from 'tap'
import { PROPORTION_FLOOR } from '../../../../lib/drift/psi.js'
import { DRIFT_GATE_DEFAULTS, predictionDriftGate } from '../../../../lib/tools/rollout/gates/drift.js'

const near = (t: Test, actual: number | undefined, expected: number, relative: number, message: string): void => {
  t.ok(actual !== undefined && Math.abs(actual - expected) <= relative * Math.abs(expected), `${message}: ${actual} against ${expected}`)
}

const DEFAULT = { a: 5000, b: 3000, c: 2000 }

t.test("drift.yml's numbers: 0.1 moderate, 0.25 severe, 500 rows; a breach past noise at 5 %", async (t) => {
  t.same(DRIFT_GATE_DEFAULTS, { minRows: 500, moderate: 0.1, severe: 0.25, alpha: 0.05 })
})

t.test('moderate drift past sampling noise fails, not confidently; PSI and chi-square as worked by hand and by scipy', async (t) => {
  const result = predictionDriftGate({ canary: { a: 300, b: 300, c: 400 }, default: DEFAULT })
  t.same([result.gate, result.verdict, result.critical], ['prediction_drift', 'fail', false])
  // (0.3 − 0.5) ln(0.3/0.5) + 0 + (0.4 − 0.2) ln(0.4/0.2)
  near(t, result.values['psi'], -0.2 * Math.log(0.6) + 0.2 * Math.log(2), 1e-15, 'PSI')
  near(t, result.values['chi_square'], 242.13836477987422, 1e-14, 'chi-square')
  near(t, result.values['p_value'], 2.6322198477293916e-53, 1e-12, 'p')
  t.match(result.values, { degrees_of_freedom: 2, canary_rows: 1000, default_rows: 10_000, canary_share_a: 0.3, default_share_c: 0.2, min_rows: 500 })
  t.equal(
    result.reason,
    "PSI 0.2408 of the canary's class shares against the default's, over 1000 and 10000 predictions (chi-square 242.1 on 2 degrees of freedom, p = 2.632e-53): at or past the moderate threshold 0.1, and past sampling noise (p below 0.05)",
  )
})

t.test('severe drift with p under 0.001 is a confident breach', async (t) => {
  const result = predictionDriftGate({ canary: { a: 200, b: 300, c: 500 }, default: DEFAULT })
  t.same([result.verdict, result.critical], ['fail', true])
  t.match(result.reason, /at or past the severe threshold 0\.25/)
})

t.test('under 0.1 passes, even where the test would call the difference real', async (t) => {
  const result = predictionDriftGate({ canary: { a: 2600, b: 1800, c: 1600 }, default: { a: 5000, b: 3000, c: 2000 } })
  t.equal(result.verdict, 'pass')
  t.ok((result.values['p_value'] ?? 1) < 0.05, `p = ${result.values['p_value']}`)
  t.match(result.reason, /: below the moderate threshold 0\.1$/)
  const small = predictionDriftGate({ canary: { a: 260, b: 180, c: 160 }, default: { a: 50, b: 30, c: 20 } }, { minRows: 50 })
  near(t, small.values['chi_square'], 2.3416965352449246, 1e-14, 'chi-square, small table')
  near(t, small.values['p_value'], 0.3101037786700614, 1e-12, 'p, small table')
})

t.test('PSI at 0.1 or more that the test cannot tell from noise is inconclusive, with the rows that would decide', async (t) => {
  // 8:2 against 5:5 on 10 rows each: PSI 0.416, chi-square 1.978 on 1 degree of freedom, p 0.160.
  const result = predictionDriftGate({ canary: { a: 8, b: 2 }, default: { a: 5, b: 5 } }, { minRows: 10 })
  t.equal(result.verdict, 'inconclusive')
  near(t, result.values['chi_square'], 1.978021978021978, 1e-14, 'chi-square')
  near(t, result.values['p_value'], 0.15959894244264472, 1e-12, 'p')
  // The statistic grows with the rows: 3.8415 / 1.978 = 1.94 times as many, 10 more.
  t.match(
    result.reason,
    /: at or past the severe threshold 0\.25, but within sampling noise \(p not below 0\.05\); about 10 more predictions on each side to decide/,
  )
})

t.test('a class one side never predicted counts at the floor of lib/drift/psi.ts', async (t) => {
  const result = predictionDriftGate({ canary: { a: 500, b: 500 }, default: { a: 500, c: 500 } })
  const floor = PROPORTION_FLOOR
  const expected = 2 * (0.5 - floor) * (Math.log(0.5) - Math.log(floor))
  near(t, result.values['psi'], expected, 1e-14, 'PSI')
  t.match(result.values, { canary_share_c: 0, default_share_b: 0, degrees_of_freedom: 2 })
  t.equal(result.verdict, 'fail')
})

t.test('one class on both sides: no degrees of freedom, no drift, a pass', async (t) => {
  const result = predictionDriftGate({ canary: { a: 600 }, default: { a: 900, b: 0 } })
  t.same([result.verdict, result.values['degrees_of_freedom'], result.values['p_value'], result.values['psi']], ['pass', 0, 1, 0])
})

t.test('under 500 predictions on either side nothing decides; a bad count names its class', async (t) => {
  const result = predictionDriftGate({ canary: { a: 499 }, default: DEFAULT })
  t.equal(result.verdict, 'inconclusive')
  t.equal(result.reason, 'class shares, on the side with fewer predictions: 1 more predictions needed (499 of 500)')
  t.same(result.values, { canary_rows: 499, default_rows: 10_000, min_rows: 500, moderate: 0.1, severe: 0.25, alpha: 0.05 })
  t.equal(predictionDriftGate({ canary: { a: 600, b: Number.NaN }, default: DEFAULT }).reason, 'no data decides nothing: canary_count_b is NaN')
})

t.test("the plan's thresholds replace drift.yml's", async (t) => {
  t.equal(predictionDriftGate({ canary: { a: 300, b: 300, c: 400 }, default: DEFAULT }, { moderate: 0.3 }).verdict, 'pass')
  t.equal(predictionDriftGate({ canary: { a: 300, b: 300, c: 400 }, default: DEFAULT }, { severe: 0.2 }).critical, true)
})
