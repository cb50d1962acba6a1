// The changes `svc rollout` makes to a rollout's state (state.ts), as pure functions: each takes a
// state and the controller's clock (`now`, integer milliseconds as Date.now() gives them) and
// returns the next state, frozen, which the caller writes back with a compare-and-swap. A change
// the state cannot take throws StateError `INVALID_TRANSITION`: a caller's mistake, or another
// controller that moved first, never the fleet's data. Every result is read back through the file's
// own checks (`seal`), so nothing a transition returns is a file the next pass would refuse.
//
// A pass, in order:
//   1. `completeIntent` when an intent is pending, once its manifest is written (again, unchanged,
//      when a crash came after the write);
//   2. nothing more unless `isJudging`;
//   3. `withConvergence`: the step starts when every instance reports its percent, and starts again
//      if one stops, so no window spans a split fleet;
//   4. `recordVerdicts`, the gates' results (gates/) from the step's start plus the warmup;
//   5. `failedGates` not empty: `withIntent('rollback')`; every gate through (a pass, or any verdict
//      of an info-role gate; a fail of a hold-role gate holds) and min_bake over:
//      `withIntent('set_split')`, or `'promote'` from the last step; past `stallAt`: `markStalled`.
// The operator's commands: `pause`, `resume`, `withIntent('abort' | 'promote' | 'rollback')`.
import type { JsonObject } from '../../core/json.js'
import { GATES, type GateName, type GateResult } from './gates/verdict.js'
import type { Plan } from './plan.js'
import {
  type Counters,
  FINISHED_STATES,
  type GateFailures,
  type IntentAction,
  MAX_VERDICTS,
  type RolloutState,
  StateError,
  stateFromJson,
  stateToJson,
  ZERO_COUNTERS,
} from './state.js'

const refuse = (field: string, reason: string): StateError => new StateError('INVALID_TRANSITION', field, reason)

/** The state as the file will hold it, checked and frozen: what parseState would give back. */
const seal = (state: RolloutState): RolloutState => stateFromJson(stateToJson(state))

const checkNow = (now: number): number => {
  // A fraction would be lost in the file's ISO text, and the state read back would differ.
  if (!Number.isSafeInteger(now) || now < 0) throw refuse('now', `must be integer milliseconds since the epoch, as Date.now() gives them, is ${now}`)
  return now
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** promoted, rolled_back or aborted: nothing moves it on. */
export const isFinished = (state: RolloutState): boolean => FINISHED_STATES.includes(state.state)

/** Whether a pass judges the gates: running or stalled, with no intent pending. */
export const isJudging = (state: RolloutState): boolean => (state.state === 'running' || state.state === 'stalled') && state.intent === null

/** When the step stalls unless it moves on first: the stall clock's start plus `stall_after`. */
export const stallAt = (state: RolloutState): number => state.waiting_since + state.plan.stall_after

export type Start = Readonly<{
  model: string
  version: string
  plan: Plan
  /** The manifest that puts the fleet on the plan's first step. */
  manifest: JsonObject
  now: number
  /** The model's counters from its last rollout, so the alerts' series keep counting up. */
  counters?: Counters
}>

/** A new rollout: running, on step 0, with the intent to write that step's split. */
export const startState = ({ model, version, plan, manifest, now, counters = ZERO_COUNTERS }: Start): RolloutState =>
  seal({
    format_version: 1,
    model,
    version,
    state: 'running',
    reason: null,
    step: 0,
    step_started_at: null,
    waiting_since: checkNow(now),
    started_at: now,
    intent: { action: 'set_split', step: 0, manifest, at: now, reason: 'start' },
    failures: {},
    counters,
    verdicts: [],
    plan,
  })

/**
 * Records the manifest about to be written and what it does once written: `set_split` moves to the
 * next step, `promote`, `rollback` and `abort` finish the rollout. Refused while another intent is
 * pending, once finished, and for a `set_split` while paused or from the last step.
 */
export const withIntent = (state: RolloutState, action: IntentAction, manifest: JsonObject, now: number, reason: string): RolloutState => {
  if (state.intent !== null) throw refuse('intent', `a ${state.intent.action} recorded at ${iso(state.intent.at)} is pending: complete it first`)
  if (isFinished(state)) throw refuse('state', `is ${state.state}: a finished rollout takes no ${action}`)
  if (action === 'set_split') {
    if (state.state === 'paused') throw refuse('state', 'is paused: resume the rollout before it advances')
    if (state.step + 1 === state.plan.steps.length) throw refuse('step', `is the plan's last (${state.step}): it moves on by promotion`)
  }
  const step = action === 'set_split' ? state.step + 1 : state.step
  return seal({ ...state, intent: { action, step, manifest, at: checkNow(now), reason } })
}

const counted = (counters: Counters, name: 'rollbacks_total' | 'promotions_total'): Counters => ({ ...counters, [name]: counters[name] + 1 })

/**
 * The pending intent done, once its manifest is written: a `set_split` puts the rollout on its step,
 * not yet converged, with no failures and the stall clock restarted (a stalled rollout runs again);
 * the others finish it, with the intent's reason.
 */
export const completeIntent = (state: RolloutState, now: number): RolloutState => {
  const { intent } = state
  if (intent === null) throw refuse('intent', 'is null: no transition is pending')
  checkNow(now)
  const done = { ...state, intent: null }
  switch (intent.action) {
    case 'set_split': {
      const isPaused = state.state === 'paused'
      return seal({
        ...done,
        state: isPaused ? 'paused' : 'running',
        reason: isPaused ? state.reason : null,
        step: intent.step,
        step_started_at: null,
        waiting_since: now,
        failures: {},
      })
    }
    case 'promote':
      return seal({ ...done, state: 'promoted', reason: intent.reason, counters: counted(state.counters, 'promotions_total') })
    case 'rollback':
      return seal({ ...done, state: 'rolled_back', reason: intent.reason, counters: counted(state.counters, 'rollbacks_total') })
    case 'abort':
      return seal({ ...done, state: 'aborted', reason: intent.reason })
  }
}

const checkJudging = (state: RolloutState, what: string): void => {
  if (state.intent !== null) throw refuse('intent', `a ${state.intent.action} is pending: complete it before ${what}`)
  if (!isJudging(state)) throw refuse('state', `is ${state.state}: only a running or stalled rollout takes ${what}`)
}

/** The step started at `now` when the fleet has just converged on it; not started while it has not. */
export const withConvergence = (state: RolloutState, isConverged: boolean, now: number): RolloutState => {
  checkJudging(state, 'convergence')
  checkNow(now)
  return seal({ ...state, step_started_at: isConverged ? (state.step_started_at ?? now) : null })
}

/**
 * A pass's gate results, at `now` on the current (converged) step: kept with the gate's role, the
 * oldest dropped past the last 50, and counted. A `fail` of a fail-role gate is a failure of the
 * step, counted at most once per `interval` per gate (two controllers, or a timer run by hand, judge
 * the same data twice); a pass never resets a count: only a new step does. A confident breach marks
 * the gate's failures `critical` even when the interval leaves it uncounted: it is a fact about the
 * data, not a second count.
 */
export const recordVerdicts = (state: RolloutState, results: readonly GateResult[], now: number): RolloutState => {
  checkJudging(state, 'verdicts')
  if (state.step_started_at === null) throw refuse('step_started_at', 'is null: a pass judges only a step the fleet has converged on')
  checkNow(now)
  const failures: Partial<Record<GateName, GateFailures>> = { ...state.failures }
  const byVerdict = { ...state.counters.verdicts_total }
  let failuresTotal = state.counters.failures_total
  for (const { gate, verdict, critical = false } of results) {
    byVerdict[verdict] += 1
    if (verdict !== 'fail' || state.plan.gates[gate].role !== 'fail') continue
    const last = failures[gate]
    const isCounted = last === undefined || now - last.last_at >= state.plan.interval
    failures[gate] = {
      count: (last?.count ?? 0) + (isCounted ? 1 : 0),
      last_at: isCounted ? now : last.last_at,
      critical: critical || (last?.critical ?? false),
    }
    if (isCounted) failuresTotal += 1
  }
  const added = results.map(({ gate, verdict, critical = false, reason, values }) => ({
    at: now,
    step: state.step,
    gate,
    role: state.plan.gates[gate].role,
    verdict,
    critical,
    reason,
    values,
  }))
  return seal({
    ...state,
    failures,
    counters: { ...state.counters, passes_total: state.counters.passes_total + 1, failures_total: failuresTotal, verdicts_total: byVerdict },
    verdicts: [...state.verdicts, ...added].slice(-MAX_VERDICTS),
  })
}

/** The fail-role gates whose failures on this step roll it back: `failure_limit` of them, or for a gate the plan makes critical one confident breach. */
export const failedGates = (state: RolloutState): GateName[] =>
  GATES.filter((gate) => {
    // Only a fail-role gate has failures (state.ts).
    const failures = state.failures[gate]
    if (failures === undefined) return false
    return failures.count >= state.plan.failure_limit || (state.plan.gates[gate].critical && failures.critical)
  })

/**
 * Stalled at `now` (past `stallAt`), with why: the split is kept and a pass still judges. Counted
 * once per stall; a rollout already stalled only takes the new reason.
 */
export const markStalled = (state: RolloutState, now: number, reason: string): RolloutState => {
  checkJudging(state, 'a stall')
  if (checkNow(now) < stallAt(state)) throw refuse('waiting_since', `the step stalls at ${iso(stallAt(state))}, not before`)
  const stalls = state.counters.stalls_total + (state.state === 'stalled' ? 0 : 1)
  return seal({ ...state, state: 'stalled', reason, counters: { ...state.counters, stalls_total: stalls } })
}

/** Paused by the operator: a pass judges nothing and the split is kept. Pausing a paused rollout changes nothing. */
export const pause = (state: RolloutState, reason: string): RolloutState => {
  if (isFinished(state)) throw refuse('state', `is ${state.state}: a finished rollout cannot be paused`)
  return state.state === 'paused' ? state : seal({ ...state, state: 'paused', reason })
}

/** Running again, a paused or stalled rollout with its stall clock restarted at `now`. Resuming a running one changes nothing. */
export const resume = (state: RolloutState, now: number): RolloutState => {
  if (isFinished(state)) throw refuse('state', `is ${state.state}: a finished rollout cannot be resumed`)
  if (state.state === 'running') return state
  return seal({ ...state, state: 'running', reason: null, waiting_since: checkNow(now) })
}
