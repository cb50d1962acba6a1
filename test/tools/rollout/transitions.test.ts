// What a pass and the operator's commands do to a rollout's state: intents recorded and completed,
// the step's convergence, verdicts kept and failures counted by the plan's rules, stalls, pauses.
import t, { type Test } from 'tap'
import { predictionDriftGate } from '../../../lib/tools/rollout/gates/drift.js'
import { GATES, type GateName, type GateResult, type GateValues, type Verdict } from '../../../lib/tools/rollout/gates/verdict.js'
import { DEFAULT_PLAN, type Plan, parsePlan } from '../../../lib/tools/rollout/plan.js'
import { formatState, parseState, type RolloutState, ZERO_COUNTERS } from '../../../lib/tools/rollout/state.js'
import {
  completeIntent,
  failedGates,
  isFinished,
  isJudging,
  markStalled,
  pause,
  recordVerdicts,
  resume,
  stallAt,
  startState,
  withConvergence,
  withIntent,
} from '../../../lib/tools/rollout/transitions.js'

const T0 = Date.parse('2025-03-01T12:00:00.000Z')
const MINUTE = 60_000
const SHADOW = { default_version: '1', versions: ['1', '2'], shadow: { version: '2', percent: 100 } }
const CANARY = { default_version: '1', versions: ['1', '2'], canary: { version: '2', percent: 1 } }
const PROMOTED = { default_version: '2', versions: ['1', '2'] }
const ROLLED_BACK = { default_version: '1', versions: ['1', '2'], canary: { version: '2', percent: 0 } }

const start = (plan: Plan = DEFAULT_PLAN): RolloutState => startState({ model: 'iris', version: '2', plan, manifest: SHADOW, now: T0 })

/** A rollout on step `step` of the default plan, converged at `at`, nothing pending. */
const onStep = (step = 1, at = T0 + MINUTE, plan: Plan = DEFAULT_PLAN): RolloutState => {
  let state = completeIntent(start(plan), T0)
  for (let i = 0; i < step; i++) state = completeIntent(withIntent(state, 'set_split', CANARY, T0, 'passed'), T0)
  return withConvergence(state, true, at)
}

/** A gate's result as a gate returns it; `critical` only on a fail, as combine() sets it. */
const verdict = (gate: GateName, result: Verdict, values: GateValues = {}, critical?: boolean): GateResult => ({
  gate,
  verdict: result,
  ...(critical === undefined ? {} : { critical }),
  reason: `${gate} ${result}`,
  values,
})

/** The state must read back from its file as it is: every transition's result is a file the next pass accepts. */
const roundTrips = (t: Test, state: RolloutState): void => {
  t.strictSame(parseState(formatState(state)), state, 'parse(format(state)) is the state')
  t.ok(Object.isFrozen(state), 'frozen')
}

t.test('a rollout starts running on step 0, not converged, with the intent to write the first split', async (t) => {
  const state = start()
  t.strictSame(state, {
    format_version: 1,
    model: 'iris',
    version: '2',
    state: 'running',
    reason: null,
    step: 0,
    step_started_at: null,
    waiting_since: T0,
    started_at: T0,
    intent: { action: 'set_split', step: 0, manifest: SHADOW, at: T0, reason: 'start' },
    failures: {},
    counters: ZERO_COUNTERS,
    verdicts: [],
    plan: DEFAULT_PLAN,
  })
  roundTrips(t, state)
  t.notOk(isJudging(state), 'no pass judges before the split is written')
  const counters = { ...ZERO_COUNTERS, rollbacks_total: 3, passes_total: 90 }
  t.strictSame(startState({ model: 'iris', version: '3', plan: DEFAULT_PLAN, manifest: SHADOW, now: T0, counters }).counters, counters, 'counters carried over')
})

t.test('what the file could not hold back is refused at start: a bad name, a manifest svc would not serve, a fractional time', async (t) => {
  t.throws(() => startState({ model: 'Iris', version: '2', plan: DEFAULT_PLAN, manifest: SHADOW, now: T0 }), { name: 'StateError', field: 'model' })
  t.throws(() => startState({ model: 'iris', version: '2', plan: DEFAULT_PLAN, manifest: { versions: [] }, now: T0 }), {
    code: 'INVALID_MEMBER',
    field: 'intent.manifest',
  })
  t.throws(() => startState({ model: 'iris', version: '2', plan: DEFAULT_PLAN, manifest: SHADOW, now: T0 + 0.5 }), {
    code: 'INVALID_TRANSITION',
    message: `now: must be integer milliseconds since the epoch, as Date.now() gives them, is ${T0 + 0.5}`,
  })
  t.throws(() => startState({ model: 'iris', version: '2', plan: DEFAULT_PLAN, manifest: SHADOW, now: -1 }), { code: 'INVALID_TRANSITION', field: 'now' })
})

t.test('completing a split puts the rollout on its step: not converged, no failures, the stall clock restarted', async (t) => {
  const first = completeIntent(start(), T0 + 5)
  t.match(first, { state: 'running', step: 0, intent: null, step_started_at: null, waiting_since: T0 + 5, failures: {} })
  roundTrips(t, first)
  t.ok(isJudging(first))
  const failed = recordVerdicts(withConvergence(first, true, T0 + MINUTE), [verdict('shadow_failures', 'fail', {}, false)], T0 + 3 * MINUTE)
  t.strictSame(failed.failures, { shadow_failures: { count: 1, last_at: T0 + 3 * MINUTE, critical: false } })
  const pending = withIntent(failed, 'set_split', CANARY, T0 + 20 * MINUTE, 'every gate passed on step 0')
  t.strictSame(pending.intent, { action: 'set_split', step: 1, manifest: CANARY, at: T0 + 20 * MINUTE, reason: 'every gate passed on step 0' })
  t.match(pending, { step: 0, step_started_at: T0 + MINUTE, failures: { shadow_failures: { count: 1 } } }, 'nothing moves before the manifest is written')
  roundTrips(t, pending)
  t.notOk(isJudging(pending), 'a pending intent is completed before anything is judged')
  const next = completeIntent(pending, T0 + 21 * MINUTE)
  t.match(next, { step: 1, intent: null, step_started_at: null, waiting_since: T0 + 21 * MINUTE, failures: {}, state: 'running', reason: null })
  t.equal(next.verdicts.length, 1, 'the verdicts stay, with their step')
})

t.test('a split completed while stalled runs again; one completed while paused stays paused', async (t) => {
  const stalled = markStalled(onStep(1), T0 + 121 * MINUTE, 'latency_p99: too few requests')
  const advanced = completeIntent(withIntent(stalled, 'set_split', CANARY, T0 + 122 * MINUTE, 'passed'), T0 + 123 * MINUTE)
  t.match(advanced, { state: 'running', reason: null, step: 2 })
  const pausedMidway = pause(withIntent(onStep(1), 'set_split', CANARY, T0 + 20 * MINUTE, 'passed'), 'change freeze')
  t.match(completeIntent(pausedMidway, T0 + 21 * MINUTE), { state: 'paused', reason: 'change freeze', step: 2 })
})

t.test('a promotion, a rollback and an abort finish the rollout, with their reason and counters', async (t) => {
  const state = onStep(4)
  const promoted = completeIntent(withIntent(state, 'promote', PROMOTED, T0 + 30 * MINUTE, 'every gate passed on the last step'), T0 + 31 * MINUTE)
  t.match(promoted, {
    state: 'promoted',
    reason: 'every gate passed on the last step',
    step: 4,
    intent: null,
    counters: { promotions_total: 1, rollbacks_total: 0 },
  })
  roundTrips(t, promoted)
  const rolledBack = completeIntent(withIntent(onStep(2), 'rollback', ROLLED_BACK, T0, 'server_errors failed 3 times'), T0)
  t.match(rolledBack, { state: 'rolled_back', reason: 'server_errors failed 3 times', step: 2, counters: { rollbacks_total: 1, promotions_total: 0 } })
  const aborted = completeIntent(withIntent(onStep(2), 'abort', ROLLED_BACK, T0, 'aborted by alice'), T0)
  t.match(aborted, { state: 'aborted', reason: 'aborted by alice', counters: { rollbacks_total: 0, promotions_total: 0 } })
  for (const finished of [promoted, rolledBack, aborted]) {
    t.ok(isFinished(finished), finished.state)
    t.notOk(isJudging(finished), finished.state)
  }
  t.notOk(isFinished(state))
})

t.test('the operator may promote, roll back or abort a paused rollout, and promote from any step', async (t) => {
  const paused = pause(onStep(1), 'look at it')
  t.equal(completeIntent(withIntent(paused, 'promote', PROMOTED, T0, 'promoted by hand (--force)'), T0).state, 'promoted')
  t.equal(completeIntent(withIntent(paused, 'abort', ROLLED_BACK, T0, 'aborted by hand'), T0).state, 'aborted')
  t.equal(completeIntent(withIntent(paused, 'rollback', ROLLED_BACK, T0, 'rolled back by hand'), T0).state, 'rolled_back')
})

t.test('an intent is refused while another is pending, once finished, and a split while paused or past the last step', async (t) => {
  const pending = withIntent(onStep(1), 'rollback', ROLLED_BACK, T0, 'failed')
  t.throws(() => withIntent(pending, 'abort', ROLLED_BACK, T0, 'abort'), {
    code: 'INVALID_TRANSITION',
    message: 'intent: a rollback recorded at 2025-03-01T12:00:00.000Z is pending: complete it first',
  })
  const finished = completeIntent(pending, T0)
  t.throws(() => withIntent(finished, 'promote', PROMOTED, T0, 'promote'), {
    code: 'INVALID_TRANSITION',
    message: 'state: is rolled_back: a finished rollout takes no promote',
  })
  t.throws(() => withIntent(pause(onStep(1), 'wait'), 'set_split', CANARY, T0, 'passed'), {
    code: 'INVALID_TRANSITION',
    message: 'state: is paused: resume the rollout before it advances',
  })
  t.throws(() => withIntent(onStep(4), 'set_split', CANARY, T0, 'passed'), {
    code: 'INVALID_TRANSITION',
    message: "step: is the plan's last (4): it moves on by promotion",
  })
  t.throws(() => withIntent(onStep(1), 'set_split', { default_version: '1', canary: { version: '2', percent: 5 } }, T0, 'passed'), {
    code: 'INVALID_MEMBER',
    message: 'intent.manifest: holds a rollout svc refuses: canary.version: "2" is not listed in versions',
  })
  t.throws(() => completeIntent(onStep(1), T0), { code: 'INVALID_TRANSITION', message: 'intent: is null: no transition is pending' })
  t.throws(() => completeIntent(pending, Number.NaN), { code: 'INVALID_TRANSITION', field: 'now' })
})

t.test('a step starts when the fleet converges on it, keeps its start while it stays, and starts again if it splits', async (t) => {
  const state = completeIntent(withIntent(onStep(1), 'set_split', CANARY, T0, 'passed'), T0)
  t.equal(withConvergence(state, false, T0 + MINUTE).step_started_at, null, 'not converged: not started')
  const started = withConvergence(state, true, T0 + 2 * MINUTE)
  t.equal(started.step_started_at, T0 + 2 * MINUTE)
  t.equal(withConvergence(started, true, T0 + 7 * MINUTE).step_started_at, T0 + 2 * MINUTE, 'converged still: the same start')
  t.equal(withConvergence(started, false, T0 + 8 * MINUTE).step_started_at, null, 'an instance off the split: the step has not started')
  roundTrips(t, started)
  t.throws(() => withConvergence(pause(started, 'wait'), true, T0), {
    code: 'INVALID_TRANSITION',
    message: 'state: is paused: only a running or stalled rollout takes convergence',
  })
  t.throws(() => withConvergence(withIntent(started, 'rollback', ROLLED_BACK, T0, 'x'), true, T0), {
    code: 'INVALID_TRANSITION',
    message: 'intent: a rollback is pending: complete it before convergence',
  })
})

t.test('verdicts are kept as the gate gave them, with their time, step and the gate’s role, and counted by result', async (t) => {
  const state = recordVerdicts(
    onStep(1),
    [verdict('server_errors', 'pass', { canary_requests: 4000, upper: 0.004 }), verdict('latency_p99', 'inconclusive', { default_p99: Number.NaN })],
    T0 + 5 * MINUTE,
  )
  t.strictSame(state.verdicts, [
    {
      at: T0 + 5 * MINUTE,
      step: 1,
      gate: 'server_errors',
      role: 'fail',
      verdict: 'pass',
      critical: false,
      reason: 'server_errors pass',
      values: { canary_requests: 4000, upper: 0.004 },
    },
    {
      at: T0 + 5 * MINUTE,
      step: 1,
      gate: 'latency_p99',
      role: 'fail',
      verdict: 'inconclusive',
      critical: false,
      reason: 'latency_p99 inconclusive',
      values: { default_p99: Number.NaN },
    },
  ])
  t.strictSame(state.counters, { ...ZERO_COUNTERS, passes_total: 1, verdicts_total: { pass: 1, fail: 0, inconclusive: 1 } })
  roundTrips(t, state)
  // A hold: the fail of a hold-role gate, kept as a fail with its role; no failure of the step.
  const again = recordVerdicts(state, [verdict('shadow_disagreement', 'fail', {}, true), verdict('prediction_drift', 'fail', {}, false)], T0 + 10 * MINUTE)
  t.match(again.verdicts.slice(-2), [
    { gate: 'shadow_disagreement', role: 'hold', verdict: 'fail', critical: true },
    { gate: 'prediction_drift', role: 'info', verdict: 'fail', critical: false },
  ])
  t.strictSame(again.failures, {})
  t.strictSame(again.counters.verdicts_total, { pass: 1, fail: 2, inconclusive: 1 })
  t.equal(again.counters.passes_total, 2)
  t.strictSame(recordVerdicts(state, [], T0 + 10 * MINUTE).counters.passes_total, 2, 'a pass that judged no gate is still a pass')
})

t.test('the last 50 verdicts are kept, oldest first, the older ones dropped', async (t) => {
  let state = onStep(1)
  for (let pass = 0; pass < 9; pass++) {
    state = recordVerdicts(
      state,
      GATES.map((gate) => verdict(gate, 'pass', { pass })),
      T0 + pass * MINUTE,
    )
  }
  t.equal(state.verdicts.length, 50, '72 recorded, 50 kept')
  // 22 dropped: the 8 of each of the first two passes and 6 of the third, so its last two lead.
  t.strictSame(state.verdicts[0], {
    at: T0 + 2 * MINUTE,
    step: 1,
    gate: 'shadow_failures',
    role: 'fail',
    verdict: 'pass',
    critical: false,
    reason: 'shadow_failures pass',
    values: { pass: 2 },
  })
  t.strictSame(state.verdicts.at(-1)?.values, { pass: 8 })
  t.equal(state.counters.verdicts_total.pass, 72, 'the counters count every one')
  roundTrips(t, state)
})

t.test('a gate’s own result is recorded and read back as it was: values named after class labels, NaN', async (t) => {
  const result = predictionDriftGate({ canary: { 'Iris setosa': 300, Versicolor: 700 }, default: { 'Iris setosa': 500, Versicolor: 500 } })
  t.equal(result.verdict, 'fail', 'the drift is real')
  const state = recordVerdicts(onStep(1), [result, predictionDriftGate({ canary: { a: Number.NaN }, default: {} })], T0 + 5 * MINUTE)
  t.match(state.verdicts, [
    { gate: 'prediction_drift', role: 'info', verdict: 'fail', critical: result.critical, reason: result.reason, values: result.values },
    { verdict: 'inconclusive', critical: false, values: { canary_count_a: Number.NaN } },
  ])
  t.match(state.verdicts[0]?.values, { 'canary_share_Iris setosa': 0.3, default_share_Versicolor: 0.5 })
  roundTrips(t, state)
})

t.test('a gate counts at most one failure per interval; a pass between never resets the count', async (t) => {
  const fail = (state: RolloutState, at: number) => recordVerdicts(state, [verdict('server_errors', 'fail', {}, false)], at)
  let state = fail(onStep(1), T0 + 3 * MINUTE)
  t.strictSame(state.failures, { server_errors: { count: 1, last_at: T0 + 3 * MINUTE, critical: false } })
  state = fail(state, T0 + 3 * MINUTE)
  state = fail(state, T0 + 8 * MINUTE - 1)
  t.strictSame(state.failures, { server_errors: { count: 1, last_at: T0 + 3 * MINUTE, critical: false } }, 'within 5m of the last: not counted again')
  state = recordVerdicts(state, [verdict('server_errors', 'pass')], T0 + 8 * MINUTE)
  t.strictSame(state.failures, { server_errors: { count: 1, last_at: T0 + 3 * MINUTE, critical: false } }, 'a pass resets nothing')
  state = fail(state, T0 + 8 * MINUTE)
  t.strictSame(state.failures, { server_errors: { count: 2, last_at: T0 + 8 * MINUTE, critical: false } }, 'one interval after the last counted: counted')
  t.equal(state.counters.failures_total, 2)
  t.equal(state.counters.verdicts_total.fail, 4, 'every fail verdict is still a verdict')
  const twice = recordVerdicts(onStep(1), [verdict('quality', 'fail'), verdict('quality', 'fail'), verdict('client_errors', 'fail')], T0 + 3 * MINUTE)
  t.strictSame(
    twice.failures,
    { client_errors: { count: 1, last_at: T0 + 3 * MINUTE, critical: false }, quality: { count: 1, last_at: T0 + 3 * MINUTE, critical: false } },
    'one pass, one failure per gate',
  )
  roundTrips(t, twice)
})

t.test('only a fail verdict of a fail-role gate is a failure: a hold-role or info-role gate’s fail, and an inconclusive, never are', async (t) => {
  const plan = parsePlan('{"gates":{"latency_p99":{"role":"hold"}}}')
  const state = recordVerdicts(
    onStep(1, T0 + MINUTE, plan),
    [verdict('latency_p99', 'fail'), verdict('prediction_drift', 'fail'), verdict('shadow_disagreement', 'fail'), verdict('quality', 'inconclusive')],
    T0 + 5 * MINUTE,
  )
  t.strictSame(state.failures, {})
  t.equal(state.counters.failures_total, 0)
})

t.test('failures count per step: a new step starts with none', async (t) => {
  const failed = recordVerdicts(onStep(1), [verdict('server_errors', 'fail')], T0 + 5 * MINUTE)
  const next = withConvergence(completeIntent(withIntent(failed, 'set_split', CANARY, T0 + 6 * MINUTE, 'x'), T0 + 6 * MINUTE), true, T0 + 7 * MINUTE)
  t.strictSame(next.failures, {})
  t.equal(next.counters.failures_total, 1, 'the counter keeps counting')
  t.strictSame(recordVerdicts(next, [verdict('server_errors', 'fail')], T0 + 8 * MINUTE).failures, {
    server_errors: { count: 1, last_at: T0 + 8 * MINUTE, critical: false },
  })
})

t.test('a gate fails the step at failure_limit failures, one the plan makes critical at its first confident breach', async (t) => {
  const fail = (state: RolloutState, at: number, ...gates: GateName[]) =>
    recordVerdicts(
      state,
      gates.map((gate) => verdict(gate, 'fail')),
      at,
    )
  let state = onStep(1)
  state = fail(state, T0 + 5 * MINUTE, 'server_errors', 'quality')
  state = fail(state, T0 + 10 * MINUTE, 'server_errors', 'quality')
  t.same(failedGates(state), [], 'two of three')
  state = fail(state, T0 + 15 * MINUTE, 'server_errors')
  t.same(failedGates(state), ['server_errors'])
  state = fail(state, T0 + 20 * MINUTE, 'quality')
  t.same(failedGates(state), ['server_errors', 'quality'], 'in the gates’ order')
  const critical = parsePlan('{"gates":{"client_errors":{"critical":true}},"failure_limit":5}')
  const breach = (state: RolloutState, at: number, ...gates: GateName[]) =>
    recordVerdicts(
      state,
      gates.map((gate) => verdict(gate, 'fail', {}, true)),
      at,
    )
  const plain = fail(onStep(1, T0 + MINUTE, critical), T0 + 5 * MINUTE, 'client_errors')
  t.same(failedGates(plain), [], 'a plain failure of a critical gate counts toward failure_limit')
  t.same(failedGates(breach(onStep(1, T0 + MINUTE, critical), T0 + 5 * MINUTE, 'client_errors', 'server_errors')), ['client_errors'], 'a confident breach')
  const uncounted = breach(plain, T0 + 6 * MINUTE, 'client_errors')
  t.match(uncounted.failures, { client_errors: { count: 1, last_at: T0 + 5 * MINUTE, critical: true } }, 'within the interval: marked, not counted')
  t.same(failedGates(uncounted), ['client_errors'])
  t.match(fail(uncounted, T0 + 11 * MINUTE, 'client_errors').failures, { client_errors: { count: 2, critical: true } }, 'a later plain failure keeps the mark')
  t.same(failedGates(breach(onStep(1), T0 + 5 * MINUTE, 'client_errors')), [], 'a confident breach of a gate the plan leaves plain is one failure')
  const held = parsePlan('{"gates":{"server_errors":{"role":"hold"}},"failure_limit":1}')
  t.same(failedGates(fail(onStep(1, T0 + MINUTE, held), T0 + 5 * MINUTE, 'server_errors')), [], 'a hold gate never fails the step')
})

t.test('verdicts are refused before convergence, with an intent pending, and while paused or finished', async (t) => {
  const notConverged = completeIntent(start(), T0)
  t.throws(() => recordVerdicts(notConverged, [], T0), {
    code: 'INVALID_TRANSITION',
    message: 'step_started_at: is null: a pass judges only a step the fleet has converged on',
  })
  t.throws(() => recordVerdicts(start(), [], T0), { code: 'INVALID_TRANSITION', field: 'intent' })
  t.throws(() => recordVerdicts(pause(onStep(1), 'x'), [], T0), {
    code: 'INVALID_TRANSITION',
    message: 'state: is paused: only a running or stalled rollout takes verdicts',
  })
  t.throws(() => recordVerdicts(onStep(1), [], T0 + 0.1), { code: 'INVALID_TRANSITION', field: 'now' })
})

t.test('a step stalls once past stall_after from its split: counted once, judged still, a new reason kept', async (t) => {
  const state = onStep(1)
  t.equal(stallAt(state), T0 + 120 * MINUTE)
  t.throws(() => markStalled(state, T0 + 120 * MINUTE - 1, 'too early'), {
    code: 'INVALID_TRANSITION',
    message: 'waiting_since: the step stalls at 2025-03-01T14:00:00.000Z, not before',
  })
  const stalled = markStalled(state, T0 + 120 * MINUTE, 'latency_p99: 1500 more requests needed')
  t.match(stalled, { state: 'stalled', reason: 'latency_p99: 1500 more requests needed', counters: { stalls_total: 1 } })
  roundTrips(t, stalled)
  t.ok(isJudging(stalled), 'a stalled rollout is still judged')
  const again = markStalled(stalled, T0 + 125 * MINUTE, 'Prometheus unreachable')
  t.match(again, { state: 'stalled', reason: 'Prometheus unreachable', counters: { stalls_total: 1 } }, 'the same stall')
  t.equal(recordVerdicts(stalled, [verdict('quality', 'pass')], T0 + 126 * MINUTE).state, 'stalled')
  t.throws(() => markStalled(pause(state, 'x'), T0 + 200 * MINUTE, 'x'), { code: 'INVALID_TRANSITION', field: 'state' })
})

t.test('the stall clock runs from the split, converged or not', async (t) => {
  const notConverged = completeIntent(start(), T0 + MINUTE)
  t.equal(stallAt(notConverged), T0 + 121 * MINUTE)
  t.equal(markStalled(notConverged, T0 + 121 * MINUTE, 'no convergence: host-2 reports 0').state, 'stalled')
})

t.test('pause keeps the split and stops judging; resume restarts the stall clock; neither moves a finished rollout', async (t) => {
  const stalled = markStalled(onStep(1), T0 + 130 * MINUTE, 'no labels')
  const paused = pause(stalled, 'paused by bob')
  t.match(paused, { state: 'paused', reason: 'paused by bob', step: 1, step_started_at: T0 + MINUTE })
  t.notOk(isJudging(paused))
  roundTrips(t, paused)
  t.equal(pause(paused, 'again'), paused, 'pausing a paused rollout changes nothing')
  const resumed = resume(paused, T0 + 200 * MINUTE)
  t.match(resumed, { state: 'running', reason: null, waiting_since: T0 + 200 * MINUTE, step_started_at: T0 + MINUTE, counters: { stalls_total: 1 } })
  t.equal(stallAt(resumed), T0 + 320 * MINUTE)
  roundTrips(t, resumed)
  t.match(resume(stalled, T0 + 140 * MINUTE), { state: 'running', waiting_since: T0 + 140 * MINUTE }, 'a stalled rollout resumes too')
  t.equal(resume(resumed, T0 + 300 * MINUTE), resumed, 'resuming a running rollout changes nothing')
  t.throws(() => resume(paused, T0 + 0.5), { code: 'INVALID_TRANSITION', field: 'now' })
  const promoted = completeIntent(withIntent(onStep(4), 'promote', PROMOTED, T0, 'passed'), T0)
  t.throws(() => pause(promoted, 'x'), { code: 'INVALID_TRANSITION', message: 'state: is promoted: a finished rollout cannot be paused' })
  t.throws(() => resume(promoted, T0), { code: 'INVALID_TRANSITION', message: 'state: is promoted: a finished rollout cannot be resumed' })
})
