// The shadow gates against 5 %, from the guards of SvcShadowDisagreementHigh (500 rows compared)
// and SvcShadowFailing (300 copies), ops/prometheus/rules/rollout.yml. Bounds worked by hand:
// Wilson's interval excludes 5 % once (p − 0.05)² > 1.96² · 0.05 · 0.95 / n.
import t from 'tap'
import { SHADOW_DISAGREEMENT_DEFAULTS, SHADOW_FAILURE_DEFAULTS, shadowDisagreementGate, shadowFailureGate } from '../../../../lib/tools/rollout/gates/shadow.js'
import { wilson } from '../../../../lib/tools/rollout/gates/intervals.js'

t.test('5 % either way, from 500 compared rows and from 300 copies', async (t) => {
  t.same(SHADOW_DISAGREEMENT_DEFAULTS, { minRows: 500, limit: 0.05 })
  t.same(SHADOW_FAILURE_DEFAULTS, { minRows: 300, limit: 0.05 })
})

t.test('disagreement on 600 rows: 41 fail, 40 and 20 are inconclusive, 19 pass', async (t) => {
  const fail = shadowDisagreementGate({ disagreements: 41, compared: 600 })
  t.same([fail.gate, fail.verdict], ['shadow_disagreement', 'fail'])
  t.match(fail.reason, /^shadow disagreement share: 6\.83 % over 600 compared rows \(95 % interval .*\): wholly past the limit 5\.00 %/)
  t.equal(shadowDisagreementGate({ disagreements: 40, compared: 600 }).verdict, 'inconclusive')
  t.match(shadowDisagreementGate({ disagreements: 40, compared: 600 }).reason, /about 57 more compared rows to decide/)
  t.equal(shadowDisagreementGate({ disagreements: 20, compared: 600 }).verdict, 'inconclusive')
  t.equal(shadowDisagreementGate({ disagreements: 19, compared: 600 }).verdict, 'pass')
  t.same(shadowDisagreementGate({ disagreements: 19, compared: 600 }).values, {
    disagreements: 19,
    compared: 600,
    limit: 0.05,
    min_rows: 500,
    shadow_share: 19 / 600,
    shadow_low: wilson(19, 600)?.low,
    shadow_high: wilson(19, 600)?.high,
    shadow_confident_low: wilson(19, 600, 3.29)?.low,
  })
})

t.test('failures on 400 copies: 29 fail, 28 and 12 are inconclusive, 11 pass', async (t) => {
  const fail = shadowFailureGate({ failures: 29, copies: 400 })
  t.same([fail.gate, fail.verdict], ['shadow_failures', 'fail'])
  t.match(fail.reason, /^shadow error and timeout share: 7\.25 % over 400 copies/)
  t.equal(shadowFailureGate({ failures: 28, copies: 400 }).verdict, 'inconclusive')
  t.equal(shadowFailureGate({ failures: 12, copies: 400 }).verdict, 'inconclusive')
  t.equal(shadowFailureGate({ failures: 11, copies: 400 }).verdict, 'pass')
  t.match(shadowFailureGate({ failures: 11, copies: 400 }).values, { failures: 11, copies: 400, min_rows: 300 })
})

t.test('a shadow answers nobody: below its minimum nothing decides, not even every row wrong', async (t) => {
  t.equal(shadowDisagreementGate({ disagreements: 499, compared: 499 }).reason, 'shadow disagreement share: 1 more compared rows needed (499 of 500)')
  t.equal(shadowFailureGate({ failures: 299, copies: 299 }).reason, 'shadow error and timeout share: 1 more copies needed (299 of 300)')
  t.equal(shadowFailureGate({ failures: 299, copies: 299 }, { minRows: 200 }).verdict, 'fail', "the plan's minimum")
})

t.test('more counted than rows decides nothing', async (t) => {
  t.equal(shadowDisagreementGate({ disagreements: 7, compared: 5 }).reason, 'no data decides nothing: more disagreements than compared rows (7 of 5)')
  t.equal(shadowFailureGate({ failures: 7, copies: 5 }).reason, 'no data decides nothing: more failures than copies (7 of 5)')
})

t.test("the plan's limit replaces 5 %", async (t) => {
  t.equal(shadowDisagreementGate({ disagreements: 41, compared: 600 }, { limit: 0.1 }).verdict, 'pass')
})
