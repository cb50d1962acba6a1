// The error gates against SvcCanaryErrorRatioHigh's margin (ops/prometheus/rules/rollout.yml):
// D + max(D, 1 point), judged from its 300-request guard, with the Wilson bounds worked by hand
// (Wilson's interval excludes a limit L once (p − L)² > z² L (1 − L) / n).
import t from 'tap'
import { clientErrorsGate, ERROR_GATE_DEFAULTS, type ErrorCounts, serverErrorsGate } from '../../../../lib/tools/rollout/gates/errors.js'
import { wilson, Z_999 } from '../../../../lib/tools/rollout/gates/intervals.js'

const counts = (errors: number, requests: number, defaultErrors = 0, defaultRequests = 10_000): ErrorCounts => ({
  canary: { errors, requests },
  default: { errors: defaultErrors, requests: defaultRequests },
})

t.test("the limit is the default's share plus the larger of it and 1 point", async (t) => {
  t.same(ERROR_GATE_DEFAULTS, { minRequests: 300, criticalFrom: 75, floor: 0.01 })
  for (const [defaultErrors, limit] of [
    [0, 0.01],
    [50, 0.015],
    [100, 0.02],
    [200, 0.04],
  ] as const) {
    const { values } = serverErrorsGate(counts(0, 1000, defaultErrors))
    t.equal(values['default_share'], defaultErrors / 10_000)
    t.equal(values['limit'], limit, `D = ${defaultErrors / 10_000}`)
  }
})

t.test('at D = 0, no errors in 381 requests pass and in 380 do not: the Wilson upper bound of 0 in n is under 1 % from 381', async (t) => {
  t.equal(serverErrorsGate(counts(0, 381)).verdict, 'pass')
  const short = serverErrorsGate(counts(0, 380))
  t.equal(short.verdict, 'inconclusive')
  t.match(short.reason, /canary server-error share: 0\.00 % over 380 requests .*: across the limit 1\.00 % .*, about 1 more requests to decide/)
})

t.test('at D = 0 and 300 requests, 7 errors fail and 6 do not; 9 are a confident breach and 8 are not', async (t) => {
  t.equal(serverErrorsGate(counts(6, 300)).verdict, 'inconclusive')
  const seven = serverErrorsGate(counts(7, 300))
  t.same([seven.verdict, seven.critical], ['fail', false])
  t.match(seven.reason, /wholly past the limit 1\.00 % \(the default's 0\.00 % plus the larger of it and 1\.00 %\)$/)
  t.same([serverErrorsGate(counts(8, 300)).critical, serverErrorsGate(counts(9, 300)).critical], [false, true])
  t.match(serverErrorsGate(counts(9, 300)).reason, /, a confident breach$/)
})

t.test('the figures behind the verdict: both sides, the limit, the minimum, the canary interval', async (t) => {
  const { values } = serverErrorsGate(counts(30, 1000, 50))
  t.same(values, {
    canary_errors: 30,
    canary_requests: 1000,
    default_errors: 50,
    default_requests: 10_000,
    default_share: 0.005,
    limit: 0.015,
    min_requests: 300,
    canary_share: 0.03,
    canary_low: wilson(30, 1000)?.low,
    canary_high: wilson(30, 1000)?.high,
    canary_confident_low: wilson(30, 1000, Z_999)?.low,
  })
})

t.test('below 300 requests only a confident breach fails, and below 75 nothing does', async (t) => {
  const broken = serverErrorsGate(counts(60, 80))
  t.same([broken.verdict, broken.critical], ['fail', true])
  t.match(broken.reason, /over 80 requests .*: its 99\.9 % interval is past the limit/)
  // 3 of 100 is past 1 % at 95 % but not at 99.9 %: it waits.
  const plain = serverErrorsGate(counts(3, 100))
  t.equal(plain.verdict, 'inconclusive')
  t.match(plain.reason, /: 200 more requests needed \(100 of 300\)$/)
  t.equal(serverErrorsGate(counts(0, 200)).verdict, 'inconclusive', 'a pass waits too')
  const trickle = serverErrorsGate(counts(74, 74))
  t.equal(trickle.verdict, 'inconclusive')
  t.match(trickle.reason, /226 more requests needed \(74 of 300\)/)
  t.notOk('canary_share' in trickle.values, 'no interval computed')
})

t.test('client errors are judged alike, under their own name', async (t) => {
  const result = clientErrorsGate(counts(30, 1000, 50))
  t.same([result.gate, result.verdict], ['client_errors', 'fail'])
  t.match(result.reason, /^canary client-error share: 3\.00 %/)
  t.equal(clientErrorsGate(counts(0, 1000)).verdict, 'pass')
})

t.test('a default version with no requests, or a side with more errors than requests, decides nothing', async (t) => {
  t.same(
    serverErrorsGate(counts(0, 1000, 0, 0)).reason,
    'no data decides nothing: the default version answered no requests, so there is no server-error share to compare with',
  )
  t.same(serverErrorsGate(counts(11, 10)).reason, 'no data decides nothing: the canary has more errors than requests')
  t.same(clientErrorsGate(counts(1, 10, 11, 10)).reason, 'no data decides nothing: the default version has more errors than requests')
})

t.test("the plan's thresholds replace the defaults one by one", async (t) => {
  t.equal(serverErrorsGate(counts(7, 300), { floor: 0.02 }).verdict, 'inconclusive', '7 of 300 is within 2 points')
  t.equal(serverErrorsGate(counts(0, 381), { minRequests: 500 }).verdict, 'inconclusive')
  t.equal(serverErrorsGate(counts(60, 80), { criticalFrom: 100 }).verdict, 'inconclusive')
  t.equal(serverErrorsGate(counts(60, 80), { minRequests: 80 }).critical, true)
})
