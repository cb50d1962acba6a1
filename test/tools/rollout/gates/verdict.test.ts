// The verdict's shape and the rule of evidence every gate shares: each branch of `judge`, the
// figures no count can be, and how a gate of several checks combines them.
import t from 'tap'
import {
  badFigure,
  type Check,
  combine,
  DEFAULT_ROLES,
  type Evidence,
  figure,
  GATES,
  hasRows,
  judge,
  noData,
  percent,
  ROLES,
  rows,
  tooFew,
  undecided,
  VERDICTS,
} from '../../../../lib/tools/rollout/gates/verdict.js'

const EVIDENCE: Evidence = {
  rows: 500,
  minRows: 300,
  criticalFrom: 75,
  unit: 'requests',
  subject: 'share 3 %',
  limit: 'the limit 2 %',
  breach: false,
  clear: false,
  confident: false,
  rowsToDecide: 1200,
}

t.test('three verdicts, three roles, and a role for every gate: a shadow disagreement holds, prediction drift informs', async (t) => {
  t.same(VERDICTS, ['pass', 'fail', 'inconclusive'])
  t.same(ROLES, ['fail', 'hold', 'info'])
  t.same(Object.keys(DEFAULT_ROLES), [...GATES])
  t.equal(DEFAULT_ROLES.shadow_disagreement, 'hold')
  t.equal(DEFAULT_ROLES.prediction_drift, 'info')
  t.same(
    GATES.filter((gate) => DEFAULT_ROLES[gate] === 'fail'),
    ['server_errors', 'client_errors', 'latency_p95', 'latency_p99', 'quality', 'shadow_failures'],
  )
  t.ok(Object.isFrozen(DEFAULT_ROLES))
})

t.test('a figure no count or sum can be is named: NaN, +Inf, -Inf, negative; the first one found', async (t) => {
  t.equal(badFigure({ a: 1, b: 0, c: 2.5 }), undefined)
  t.equal(badFigure({}), undefined)
  t.equal(badFigure({ a: 1, b: Number.NaN }), 'b is NaN')
  t.equal(badFigure({ a: Number.POSITIVE_INFINITY }), 'a is +Inf')
  t.equal(badFigure({ a: Number.NEGATIVE_INFINITY }), 'a is -Inf')
  t.equal(badFigure({ a: -0.5, b: Number.NaN }), 'a is negative (-0.5)')
})

t.test('no data is inconclusive, says so and why, and keeps the figures it was given', async (t) => {
  t.same(noData('server_errors', 'x is NaN', { x: Number.NaN }), {
    gate: 'server_errors',
    verdict: 'inconclusive',
    reason: 'no data decides nothing: x is NaN',
    values: { x: Number.NaN },
  })
})

t.test('checks combine: any fail fails (critical if one is), all passes pass, anything else is inconclusive', async (t) => {
  const pass: Check = { verdict: 'pass', critical: false, text: 'a' }
  const fail: Check = { verdict: 'fail', critical: false, text: 'b' }
  const critical: Check = { verdict: 'fail', critical: true, text: 'c' }
  const open = undecided('d')
  t.same(combine('quality', [pass, pass], { x: 1 }), { gate: 'quality', verdict: 'pass', reason: 'a; a', values: { x: 1 } })
  t.same(combine('quality', [pass, open], {}), { gate: 'quality', verdict: 'inconclusive', reason: 'a; d', values: {} })
  t.same(combine('quality', [open, fail], {}), { gate: 'quality', verdict: 'fail', critical: false, reason: 'd; b', values: {} })
  t.same(combine('quality', [fail, critical, pass], {}), { gate: 'quality', verdict: 'fail', critical: true, reason: 'b; c; a', values: {} })
  t.notOk('critical' in combine('quality', [pass], {}), 'critical only on a fail')
})

t.test('figures as a person reads them', async (t) => {
  t.equal(percent(0.0123), '1.23 %')
  t.equal(percent(0), '0.00 %')
  t.equal(figure(0.123456), '0.1235')
  t.equal(figure(-0.05), '-0.05')
  t.equal(figure(1234567), '1235000')
  t.equal(rows(299.6), '300')
})

t.test('rows: some, and at least the floor for a confident breach', async (t) => {
  t.ok(hasRows(75, 75))
  t.notOk(hasRows(74.9, 75))
  t.notOk(hasRows(0, 0), 'none is never enough')
  t.ok(hasRows(0.5, 0))
})

t.test('too few rows says how many more, of how many, in whole rows, at least one', async (t) => {
  t.same(tooFew('share', 120, 300, 'requests'), { verdict: 'inconclusive', critical: false, text: 'share: 180 more requests needed (120 of 300)' })
  t.equal(tooFew('share', 299.5, 300, 'requests').text, 'share: 1 more requests needed (300 of 300)')
})

t.test('from the minimum: a breach fails (critical only when confident), a clear interval passes', async (t) => {
  t.same(judge({ ...EVIDENCE, breach: true }), { verdict: 'fail', critical: false, text: 'share 3 %: wholly past the limit 2 %' })
  t.same(judge({ ...EVIDENCE, breach: true, confident: true }), {
    verdict: 'fail',
    critical: true,
    text: 'share 3 %: wholly past the limit 2 %, a confident breach',
  })
  t.same(judge({ ...EVIDENCE, clear: true }), { verdict: 'pass', critical: false, text: 'share 3 %: wholly within the limit 2 %' })
  t.same(judge({ ...EVIDENCE, rows: 300, clear: true }).verdict, 'pass', 'at the minimum itself')
})

t.test('from the minimum, an interval across the limit is inconclusive, with the rows that would decide', async (t) => {
  t.same(judge(EVIDENCE), {
    verdict: 'inconclusive',
    critical: false,
    text: 'share 3 %: across the limit 2 %, about 700 more requests to decide at the current figures',
  })
  t.equal(judge({ ...EVIDENCE, rowsToDecide: 400 }).text, 'share 3 %: across the limit 2 %, about 1 more requests to decide at the current figures')
  t.equal(
    judge({ ...EVIDENCE, rowsToDecide: Number.POSITIVE_INFINITY }).text,
    'share 3 %: across the limit 2 %, undecidable at the current figures, which sit on it',
  )
})

t.test('below the minimum only a confident breach fails, always critical; a plain breach or a clear interval waits', async (t) => {
  const below = { ...EVIDENCE, rows: 120 }
  t.same(judge({ ...below, breach: true, confident: true }), {
    verdict: 'fail',
    critical: true,
    text: 'share 3 %: its 99.9 % interval is past the limit 2 %, a confident breach',
  })
  t.same(judge({ ...below, breach: true }), { verdict: 'inconclusive', critical: false, text: 'share 3 %: 180 more requests needed (120 of 300)' })
  t.equal(judge({ ...below, clear: true }).verdict, 'inconclusive')
  t.equal(judge({ ...EVIDENCE, rows: 299.9, clear: true }).verdict, 'inconclusive', 'just under the minimum')
})
