// A rollout's state, `<model>/rollout.json` beside the manifest (issue 50): what `svc rollout step`
// reads, decides on and writes back with a compare-and-swap, so the controllers on several hosts
// share it and only one of them moves it. Instances never read it; the manifest stays as strict as
// it is. `parseState` is the only way in and `formatState` the only way out; the changes a pass
// makes are the pure functions of transitions.ts. Times are milliseconds in memory, ISO 8601 text
// (`Date#toISOString`) in the file.
//
// Format 1, members in this order:
//   format_version   1
//   model, version   the model, and the candidate version rolled out
//   state            running | paused | stalled (a pass still judges) | promoted | rolled_back |
//                    aborted (the last three finished)
//   reason           why the state is what it is (the gates that rolled back, what stalled), or null
//   step             the index in plan.steps of the split the manifest holds (or the intent writes)
//   step_started_at  when the fleet converged on the step: the bake and the gates' window start
//                    there; null while the fleet has not
//   waiting_since    when the step's split was written, or the rollout resumed: the stall clock,
//                    which runs through non-convergence too
//   started_at       when `svc rollout start` ran
//   intent           null, or the manifest a pass is about to write and what it does once written:
//                    {action: set_split | promote | rollback | abort, step, manifest, at, reason}.
//                    Recorded before the manifest is written, so the next pass finishes a transition
//                    a crash left half done; `step` is the step the rollout is on once it is
//   failures         per fail-role gate, on this step: {count, last_at, critical}, at most one
//                    failure counted per interval; `critical` once any of its fail verdicts was a
//                    confident breach, counted or not, which a gate the plan makes critical rolls
//                    back on
//   counters         what the alerts and textfile metrics read: passes_total (passes that judged),
//                    failures_total, stalls_total, rollbacks_total, promotions_total, and
//                    verdicts_total per verdict; carried from one rollout of a model to the next
//   verdicts         the last 50, oldest first: {at, step, gate, role, verdict, critical, reason,
//                    values}. `verdict`, `critical`, `reason` and `values` are the gate's result as
//                    it gave it (GateResult, gates/verdict.ts); `role` is the plan's for the gate,
//                    checked against it. `values` are the figures and row counts behind the verdict
//                    by name, numbers as the gates give them, NaN and ±Inf written as Prometheus
//                    writes them ("NaN", "+Inf", "-Inf")
//   plan             the whole plan (plan.ts), copied at start
//
// Verdicts are the gates' three, pass | fail | inconclusive, never an outcome: what a fail did to the
// rollout is its role's, which the record carries beside it. A fail of a fail-role gate is a failure
// of the step (counted in `failures`), of a hold-role gate a hold (the step waits; `hold` is that
// outcome, and no verdict), of an info-role gate nothing. So a verdict reads the same in the file, in
// `status` and in the gate's own tests, and `verdicts_total` counts what the gates found, not what
// the plan made of it.
import { errorMessage, FieldError } from '../../core/errors.js'
import { deepFreeze } from '../../core/freeze.js'
import { isObject, type JsonObject, parseJson } from '../../core/json.js'
import { parseManifest } from '../../models/store/manifest.js'
import { type FieldCode, fieldsOf, pathOf, type Refuse } from './fields.js'
import { GATES, type GateName, type GateResult, type GateValues, type Role, VERDICTS, type Verdict } from './gates/verdict.js'
import { type Plan, planFromJson, planToJson } from './plan.js'

export const STATE_FORMAT_VERSION = 1
export const MAX_VERDICTS = 50

export const STATE_NAMES = ['running', 'paused', 'stalled', 'promoted', 'rolled_back', 'aborted'] as const
export type StateName = (typeof STATE_NAMES)[number]
/** The states no pass moves on from. */
export const FINISHED_STATES: readonly StateName[] = ['promoted', 'rolled_back', 'aborted']

export const INTENT_ACTIONS = ['set_split', 'promote', 'rollback', 'abort'] as const
export type IntentAction = (typeof INTENT_ACTIONS)[number]

export type Intent = Readonly<{ action: IntentAction; step: number; manifest: JsonObject; at: number; reason: string }>
export type GateFailures = Readonly<{ count: number; last_at: number; critical: boolean }>
/** A gate's result as kept (header): the gate's own, with when, on which step, and the gate's role; `critical` false but on a fail. */
export type VerdictRecord = Readonly<Omit<GateResult, 'critical'> & { at: number; step: number; role: Role; critical: boolean }>
export type Counters = Readonly<{
  passes_total: number
  failures_total: number
  stalls_total: number
  rollbacks_total: number
  promotions_total: number
  verdicts_total: Readonly<Record<Verdict, number>>
}>

export type RolloutState = Readonly<{
  format_version: typeof STATE_FORMAT_VERSION
  model: string
  version: string
  state: StateName
  reason: string | null
  step: number
  step_started_at: number | null
  waiting_since: number
  started_at: number
  intent: Intent | null
  failures: Readonly<Partial<Record<GateName, GateFailures>>>
  counters: Counters
  verdicts: readonly VerdictRecord[]
  plan: Plan
}>

export type StateErrorCode = 'INVALID_JSON' | 'UNSUPPORTED_FORMAT' | 'INVALID_TRANSITION' | FieldCode

/** A state file refused, or a transition it cannot take: `field` names the member (`verdicts[3].gate`, `intent`). */
export class StateError extends FieldError<StateErrorCode> {
  override name = 'StateError'
}

export const ZERO_COUNTERS: Counters = deepFreeze({
  passes_total: 0,
  failures_total: 0,
  stalls_total: 0,
  rollbacks_total: 0,
  promotions_total: 0,
  verdicts_total: { pass: 0, fail: 0, inconclusive: 0 },
})

const MEMBERS: readonly string[] = [
  'format_version',
  'model',
  'version',
  'state',
  'reason',
  'step',
  'step_started_at',
  'waiting_since',
  'started_at',
  'intent',
  'failures',
  'counters',
  'verdicts',
  'plan',
]
const INTENT_MEMBERS: readonly string[] = ['action', 'step', 'manifest', 'at', 'reason']
const VERDICT_MEMBERS: readonly string[] = ['at', 'step', 'gate', 'role', 'verdict', 'critical', 'reason', 'values']

// As parseArtifact accepts them (lib/models/artifact.ts), so the state names nothing no artifact can be.
const MODEL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
// Exactly what Date#toISOString writes, so a time reads back as the number it was.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const fields = fieldsOf((code, field, reason) => new StateError(code, field, reason))

const isText = (value: unknown): value is string => typeof value === 'string'
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean'
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && Number(value) >= 0
const isTime = (value: unknown): value is string => typeof value === 'string' && ISO_TIME.test(value) && new Date(value).toISOString() === value
const isOneOf =
  <T extends string>(names: readonly T[]) =>
  (value: unknown): value is T =>
    names.some((name) => name === value)
const isModelName = (value: unknown): value is string => typeof value === 'string' && MODEL_NAME.test(value)
const isVersion = (value: unknown): value is string => typeof value === 'string' && VERSION.test(value)

const TIME = 'an ISO 8601 time as Date#toISOString writes it (2025-01-31T12:00:00.000Z)'
const timeOf = (value: unknown, field: string): number => Date.parse(fields.valid(value, field, isTime, TIME))
const nullable = <T>(value: unknown, read: (value: unknown) => T): T | null => (value === null ? null : read(value))

/** The manifest an intent writes, checked as instances will read it: a manifest refused, or a rollout in it refused, is never written. */
const checkIntentManifest = (value: unknown, field: string): JsonObject => {
  const manifest = fields.valid(value, field, isObject, 'a manifest (a JSON object)')
  let rolloutError: string | undefined
  try {
    rolloutError = parseManifest(Buffer.from(JSON.stringify(manifest))).rolloutError
  } catch (error: unknown) {
    throw fields.invalid(field, `is not a manifest svc serves: ${errorMessage(error)}`)
  }
  if (rolloutError !== undefined) throw fields.invalid(field, `holds a rollout svc refuses: ${rolloutError}`)
  return manifest
}

/** The numbers JSON cannot hold, as Prometheus writes them. */
const NON_FINITE = { NaN: Number.NaN, '+Inf': Number.POSITIVE_INFINITY, '-Inf': Number.NEGATIVE_INFINITY } as const
type NonFinite = keyof typeof NON_FINITE
const isValue = (value: unknown): value is number | NonFinite => typeof value === 'number' || (typeof value === 'string' && Object.hasOwn(NON_FINITE, value))

/**
 * A verdict's values by name; throws StateError naming the member. Any name is kept: the drift gate
 * names values after class labels, which an artifact lets be any non-empty text. fromEntries makes
 * each an own member, `__proto__` too, where an assignment would set the prototype.
 */
const checkValues = (value: unknown, field: string): GateValues => {
  const raw = fields.valid(value, field, isObject, 'values by name (a JSON object)')
  return Object.fromEntries(
    Object.entries(raw).map(([name, entry]) => {
      const read = fields.valid(entry, pathOf(field, name), isValue, 'a number, "NaN", "+Inf" or "-Inf"')
      return [name, typeof read === 'string' ? NON_FINITE[read] : read]
    }),
  )
}

const stepOf = (value: unknown, field: string, plan: Plan): number =>
  fields.valid(
    value,
    field,
    (step: unknown): step is number => isCount(step) && Number(step) < plan.steps.length,
    `a step index of the plan, 0 to ${plan.steps.length - 1}`,
  )

const intentOf = (value: unknown, plan: Plan): Intent => {
  const raw = fields.object(value, 'intent', INTENT_MEMBERS, 'an intent')
  return {
    action: fields.valid(raw['action'], 'intent.action', isOneOf(INTENT_ACTIONS), `one of ${INTENT_ACTIONS.join(', ')}`),
    step: stepOf(raw['step'], 'intent.step', plan),
    manifest: checkIntentManifest(raw['manifest'], 'intent.manifest'),
    at: timeOf(raw['at'], 'intent.at'),
    reason: fields.valid(raw['reason'], 'intent.reason', isText, 'a string'),
  }
}

const failuresOf = (value: unknown, plan: Plan): RolloutState['failures'] => {
  const raw = fields.object(value, 'failures', GATES, 'failures by gate')
  const failures: Partial<Record<GateName, GateFailures>> = {}
  for (const gate of GATES) {
    if (raw[gate] === undefined) continue
    const at = pathOf('failures', gate)
    const { role } = plan.gates[gate]
    if (role !== 'fail') throw fields.invalid(at, `must be left out: only a fail-role gate counts failures, and the plan's role for ${gate} is ${role}`)
    const entry = fields.object(raw[gate], at, ['count', 'last_at', 'critical'], 'a gate’s failures')
    const isPositive = (count: unknown): count is number => isCount(count) && Number(count) > 0
    failures[gate] = {
      count: fields.valid(entry['count'], pathOf(at, 'count'), isPositive, 'a positive integer'),
      last_at: timeOf(entry['last_at'], pathOf(at, 'last_at')),
      critical: fields.valid(entry['critical'], pathOf(at, 'critical'), isBoolean, 'true or false'),
    }
  }
  return failures
}

const countersOf = (value: unknown): Counters => {
  const names = Object.keys(ZERO_COUNTERS)
  const raw = fields.object(value, 'counters', names, 'counters')
  const count = (entry: JsonObject, at: string, name: string): number => fields.valid(entry[name], pathOf(at, name), isCount, 'a non-negative integer')
  const verdicts = fields.object(raw['verdicts_total'], 'counters.verdicts_total', VERDICTS, 'counts by verdict')
  return {
    passes_total: count(raw, 'counters', 'passes_total'),
    failures_total: count(raw, 'counters', 'failures_total'),
    stalls_total: count(raw, 'counters', 'stalls_total'),
    rollbacks_total: count(raw, 'counters', 'rollbacks_total'),
    promotions_total: count(raw, 'counters', 'promotions_total'),
    verdicts_total: {
      pass: count(verdicts, 'counters.verdicts_total', 'pass'),
      fail: count(verdicts, 'counters.verdicts_total', 'fail'),
      inconclusive: count(verdicts, 'counters.verdicts_total', 'inconclusive'),
    },
  }
}

const verdictsOf = (value: unknown, plan: Plan): readonly VerdictRecord[] => {
  const isList = (list: unknown): list is unknown[] => Array.isArray(list) && list.length <= MAX_VERDICTS
  return fields.valid(value, 'verdicts', isList, `an array of at most ${MAX_VERDICTS} verdicts`).map((entry, i) => {
    const at = pathOf('verdicts', i)
    const raw = fields.object(entry, at, VERDICT_MEMBERS, 'a verdict')
    const gate = fields.valid(raw['gate'], pathOf(at, 'gate'), isOneOf(GATES), `one of ${GATES.join(', ')}`)
    // The plan is the rollout's for its whole life, so its role is the one every verdict was judged under.
    const { role } = plan.gates[gate]
    const isRole = (given: unknown): given is Role => given === role
    const verdict = fields.valid(raw['verdict'], pathOf(at, 'verdict'), isOneOf(VERDICTS), `one of ${VERDICTS.join(', ')}`)
    const isCritical = (given: unknown): given is boolean => given === false || (given === true && verdict === 'fail')
    return {
      at: timeOf(raw['at'], pathOf(at, 'at')),
      step: stepOf(raw['step'], pathOf(at, 'step'), plan),
      gate,
      role: fields.valid(raw['role'], pathOf(at, 'role'), isRole, `${role}, the plan's role for ${gate}`),
      verdict,
      critical: fields.valid(raw['critical'], pathOf(at, 'critical'), isCritical, verdict === 'fail' ? 'true or false' : `false for a verdict of ${verdict}`),
      reason: fields.valid(raw['reason'], pathOf(at, 'reason'), isText, 'a string'),
      values: checkValues(raw['values'], pathOf(at, 'values')),
    }
  })
}

// The plan's own checks, its refusals named under `plan` as the state's.
const refusePlan: Refuse = (code, field, reason) => new StateError(code, field === '(document)' ? 'plan' : `plan.${field}`, reason)

/** The relations between members that each member's own check cannot see. */
const checkConsistent = (state: RolloutState): void => {
  const { intent } = state
  if (intent === null) return
  if (FINISHED_STATES.includes(state.state)) throw fields.invalid('intent', `must be null once the rollout is ${state.state}`)
  const steps = intent.action === 'set_split' ? [state.step, state.step + 1] : [state.step]
  if (!steps.includes(intent.step)) throw fields.invalid('intent.step', `must be ${steps.join(' or ')} for a ${intent.action} from step ${state.step}`)
}

/** Reads a state from its JSON value; throws StateError naming the member. */
export const stateFromJson = (value: unknown): RolloutState => {
  const raw = fields.object(value, '', MEMBERS, 'a rollout state')
  if (raw['format_version'] !== STATE_FORMAT_VERSION) {
    throw new StateError('UNSUPPORTED_FORMAT', 'format_version', `must be ${STATE_FORMAT_VERSION}, is ${JSON.stringify(raw['format_version']) ?? 'missing'}`)
  }
  const plan = planFromJson(raw['plan'], refusePlan)
  const state: RolloutState = {
    format_version: STATE_FORMAT_VERSION,
    model: fields.valid(raw['model'], 'model', isModelName, `a model name matching ${String(MODEL_NAME)}`),
    version: fields.valid(raw['version'], 'version', isVersion, `a version matching ${String(VERSION)}`),
    state: fields.valid(raw['state'], 'state', isOneOf(STATE_NAMES), `one of ${STATE_NAMES.join(', ')}`),
    reason: nullable(raw['reason'], (reason) => fields.valid(reason, 'reason', isText, 'a string or null')),
    step: stepOf(raw['step'], 'step', plan),
    step_started_at: nullable(raw['step_started_at'], (at) => timeOf(at, 'step_started_at')),
    waiting_since: timeOf(raw['waiting_since'], 'waiting_since'),
    started_at: timeOf(raw['started_at'], 'started_at'),
    intent: nullable(raw['intent'], (intent) => intentOf(intent, plan)),
    failures: failuresOf(raw['failures'], plan),
    counters: countersOf(raw['counters']),
    verdicts: verdictsOf(raw['verdicts'], plan),
    plan,
  }
  checkConsistent(state)
  return deepFreeze(state)
}

/** Parses `rollout.json` (strict UTF-8 JSON); throws StateError naming the member; returns it frozen. */
export const parseState = (bytes: Uint8Array | string): RolloutState => {
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw new StateError('INVALID_JSON', '(document)', `is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  return stateFromJson(value)
}

const iso = (ms: number): string => new Date(ms).toISOString()
const valueToJson = (value: number): number | string => (Number.isFinite(value) ? value : Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf')

const intentToJson = (intent: Intent | null) =>
  intent === null ? null : { action: intent.action, step: intent.step, manifest: intent.manifest, at: iso(intent.at), reason: intent.reason }

const countersToJson = (counters: Counters) => ({
  passes_total: counters.passes_total,
  failures_total: counters.failures_total,
  stalls_total: counters.stalls_total,
  rollbacks_total: counters.rollbacks_total,
  promotions_total: counters.promotions_total,
  verdicts_total: Object.fromEntries(VERDICTS.map((verdict) => [verdict, counters.verdicts_total[verdict]])),
})

/** The state as its JSON value, members in the format's order, times as ISO text. */
export const stateToJson = (state: RolloutState) => ({
  format_version: state.format_version,
  model: state.model,
  version: state.version,
  state: state.state,
  reason: state.reason,
  step: state.step,
  step_started_at: state.step_started_at === null ? null : iso(state.step_started_at),
  waiting_since: iso(state.waiting_since),
  started_at: iso(state.started_at),
  intent: intentToJson(state.intent),
  failures: Object.fromEntries(
    GATES.flatMap((gate) => {
      const entry = state.failures[gate]
      return entry === undefined ? [] : [[gate, { count: entry.count, last_at: iso(entry.last_at), critical: entry.critical }]]
    }),
  ),
  counters: countersToJson(state.counters),
  verdicts: state.verdicts.map((verdict) => ({
    at: iso(verdict.at),
    step: verdict.step,
    gate: verdict.gate,
    role: verdict.role,
    verdict: verdict.verdict,
    critical: verdict.critical,
    reason: verdict.reason,
    values: Object.fromEntries(Object.entries(verdict.values).map(([name, value]) => [name, valueToJson(value)])),
  })),
  plan: planToJson(state.plan),
})

/** The bytes of `rollout.json`: two-space JSON and a final newline, members always in one order, so a diff shows what a pass changed. */
export const formatState = (state: RolloutState): string => `${JSON.stringify(stateToJson(state), null, 2)}\n`
