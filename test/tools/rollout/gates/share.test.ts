// A share against a limit by its Wilson interval, the check under the error, latency and shadow
// gates: its figures are Wilson's, it waits for rows, and its bounds are strict.
import t from 'tap'
import { wilson, Z_999 } from '../../../../lib/tools/rollout/gates/intervals.js'
import { type ShareTest, shareCheck, shareValues } from '../../../../lib/tools/rollout/gates/share.js'

const TEST: ShareTest = { count: 30, total: 1000, limit: 0.02, minRows: 300, criticalFrom: 75, what: 'errors', limitText: 'the limit 2 %', unit: 'requests' }

t.test("its figures are the share, Wilson's 95 % interval and the low bound of the 99.9 % one", async (t) => {
  const { check, figures } = shareCheck(TEST)
  t.same(figures, { share: 0.03, low: wilson(30, 1000)?.low, high: wilson(30, 1000)?.high, confidentLow: wilson(30, 1000, Z_999)?.low })
  t.equal(check.verdict, 'fail')
  t.equal(check.critical, false, 'the 99.9 % interval reaches 2 %')
  t.match(check.text, /^errors: 3\.00 % over 1000 requests \(95 % interval 2\.11 % to 4\.25 %\): wholly past the limit 2 %$/)
})

t.test('under its floor for a confident breach it computes nothing and says how many rows more', async (t) => {
  const { check, figures } = shareCheck({ ...TEST, count: 74, total: 74 })
  t.equal(figures, undefined)
  t.same(check, { verdict: 'inconclusive', critical: false, text: 'errors: 226 more requests needed (74 of 300)' })
  t.equal(shareCheck({ ...TEST, count: 0, total: 0, criticalFrom: 0 }).figures, undefined, 'no rows at all, whatever the floor')
})

t.test('a share on its limit is undecidable; close to it, the rows to decide are estimated', async (t) => {
  t.match(shareCheck({ ...TEST, count: 20 }).check.text, /undecidable at the current figures/)
  // 2.5 % against 2 %: 1.96² · 0.02 · 0.98 / 0.005² = 3012 rows in all.
  t.match(shareCheck({ ...TEST, count: 25 }).check.text, /about 2012 more requests to decide/)
})

t.test("a gate's values name the figures after a prefix, and are empty without them", async (t) => {
  t.same(shareValues('canary', { share: 0.1, low: 0.05, high: 0.2, confidentLow: 0.03 }), {
    canary_share: 0.1,
    canary_low: 0.05,
    canary_high: 0.2,
    canary_confident_low: 0.03,
  })
  t.same(shareValues('shadow', undefined), {})
})
