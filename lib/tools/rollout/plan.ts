// A rollout's plan (issue 50): the splits a candidate version takes, how long each bakes, and the
// gates that judge it. `svc rollout start --plan FILE` reads one with `parsePlan`: a file names only
// what it changes, every member it leaves out keeps DEFAULT_PLAN's value, and so does every member
// of a gate it names. The whole plan is then copied into rollout.json (state.ts), so a rollout under
// way keeps the plan it started with whatever the defaults become.
//
// Members; durations as Prometheus writes them (duration.ts), milliseconds in memory:
//   steps              the splits, in order: {"kind": "shadow" | "canary", "percent": P}. At most one
//                      shadow step, the first, P in (0, 100]; then canary steps, P rising strictly
//                      within (0, 100): at 100 % the default answers nothing to compare with. At least
//                      one canary step; promotion follows the last. Default: shadow 100, canary 1, 5,
//                      20 and 50.
//   interval           5m    how often a pass is meant to run (the timer's period); a gate counts at
//                            most one failure per interval, however many passes run
//   warmup             2m    after the fleet converges on a step, time no gate judges
//   min_bake           10m   least time on a step, from its convergence, before it advances (> warmup)
//   failure_limit      3     failures of one fail-role gate on one step that roll back
//   stall_after        2h    time on a step without advancing before the rollout stalls (> min_bake)
//   min_labels         200   labelled rows per version the quality gate needs to let the last step go
//   rollback_on_stall  false  roll back a stalled rollout: opt-in, never while Prometheus is unreachable
//   gates              each gate's role and thresholds, below
//
// A gate's `role`: `fail` (a failure counts toward failure_limit), `hold` (a failure holds the step
// and never rolls back) or `info` (recorded, decides nothing); `critical`, for a fail-role gate
// only: one failure rolls back. Thresholds, each judged at 95 % confidence, are the shipped alerts'
// margins (ops/prometheus/rules/rollout.yml, quality.yml, drift.yml), D the default version's figure:
//   server_errors, client_errors  fail above D + max(relative_margin × D, min_margin): 1 and 0.01
//   latency_p95, latency_p99      the share of requests above T = D + max(relative_margin × D,
//                                 min_margin), D the default's quantile: 0.5 and 1ms; against 5 %
//                                 (p95) or 1 % (p99), from min_requests canary requests: 400, 2000
//   quality                       accuracy: canary − default (and realized − reference) below
//                                 −accuracy_margin, 0.05; a regressor: RMSE above rmse_ratio × the
//                                 default's (and the reference's), MAE above mae_ratio × the
//                                 default's: 1.25 each. min_labels above holds it
//   shadow                        from min_rows compared rows, 500: disagreement above
//                                 max_disagreement holds, errors and timeouts above
//                                 max_failure_share fail: 0.05 each
//   drift                         role info; classifiers' class shares, canary against default, from
//                                 min_rows rows (500), PSI above max_psi (0.25, drift.yml's severe)
import { errorMessage, FieldError } from '../../core/errors.js'
import { deepFreeze } from '../../core/freeze.js'
import { type JsonObject, parseJson } from '../../core/json.js'
import { DURATION_FORM, formatDuration, parseDuration } from './duration.js'
import { type FieldCode, type Fields, fieldsOf, pathOf, type Refuse } from './fields.js'

export const GATE_NAMES = ['server_errors', 'client_errors', 'latency_p95', 'latency_p99', 'quality', 'shadow', 'drift'] as const
export type GateName = (typeof GATE_NAMES)[number]

export const GATE_ROLES = ['fail', 'hold', 'info'] as const
export type GateRole = (typeof GATE_ROLES)[number]

export const STEP_KINDS = ['shadow', 'canary'] as const
export type StepKind = (typeof STEP_KINDS)[number]

/** One split: the candidate as a shadow of, or a canary answering, `percent` of the requests naming no version. */
export type Step = Readonly<{ kind: StepKind; percent: number }>

type GateBase = Readonly<{ role: GateRole; critical: boolean }>
/** server_errors, client_errors: shares of the version's requests. */
export type RatioGate = GateBase & Readonly<{ relative_margin: number; min_margin: number }>
/** latency_p95, latency_p99: `min_margin` in milliseconds. */
export type LatencyGate = GateBase & Readonly<{ relative_margin: number; min_margin: number; min_requests: number }>
export type QualityGate = GateBase & Readonly<{ accuracy_margin: number; rmse_ratio: number; mae_ratio: number }>
export type ShadowGate = GateBase & Readonly<{ min_rows: number; max_disagreement: number; max_failure_share: number }>
export type DriftGate = GateBase & Readonly<{ min_rows: number; max_psi: number }>

export type Gates = Readonly<{
  server_errors: RatioGate
  client_errors: RatioGate
  latency_p95: LatencyGate
  latency_p99: LatencyGate
  quality: QualityGate
  shadow: ShadowGate
  drift: DriftGate
}>

/** A whole plan, every member present, frozen; durations in milliseconds. */
export type Plan = Readonly<{
  steps: readonly Step[]
  interval: number
  warmup: number
  min_bake: number
  failure_limit: number
  stall_after: number
  min_labels: number
  rollback_on_stall: boolean
  gates: Gates
}>

export type PlanErrorCode = 'INVALID_JSON' | FieldCode

/** A plan refused: `field` names the member (`gates.latency_p95.rol`, `steps[2].percent`). */
export class PlanError extends FieldError<PlanErrorCode> {
  override name = 'PlanError'
}

const MINUTE = 60_000

export const DEFAULT_PLAN: Plan = deepFreeze({
  steps: [
    { kind: 'shadow', percent: 100 },
    { kind: 'canary', percent: 1 },
    { kind: 'canary', percent: 5 },
    { kind: 'canary', percent: 20 },
    { kind: 'canary', percent: 50 },
  ],
  interval: 5 * MINUTE,
  warmup: 2 * MINUTE,
  min_bake: 10 * MINUTE,
  failure_limit: 3,
  stall_after: 120 * MINUTE,
  min_labels: 200,
  rollback_on_stall: false,
  gates: {
    server_errors: { role: 'fail', critical: false, relative_margin: 1, min_margin: 0.01 },
    client_errors: { role: 'fail', critical: false, relative_margin: 1, min_margin: 0.01 },
    latency_p95: { role: 'fail', critical: false, relative_margin: 0.5, min_margin: 1, min_requests: 400 },
    latency_p99: { role: 'fail', critical: false, relative_margin: 0.5, min_margin: 1, min_requests: 2000 },
    quality: { role: 'fail', critical: false, accuracy_margin: 0.05, rmse_ratio: 1.25, mae_ratio: 1.25 },
    shadow: { role: 'fail', critical: false, min_rows: 500, max_disagreement: 0.05, max_failure_share: 0.05 },
    drift: { role: 'info', critical: false, min_rows: 500, max_psi: 0.25 },
  },
})

const PLAN_MEMBERS: readonly string[] = Object.keys(DEFAULT_PLAN)
const STEP_MEMBERS: readonly string[] = ['kind', 'percent']

const refusePlan: Refuse = (code, field, reason) => new PlanError(code, field, reason)

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

/** What a threshold may be, and how its refusal says so. */
const NUMBERS = {
  share: [(value: unknown): value is number => isNumber(value) && value > 0 && value < 1, 'a number above 0 and below 1'],
  factor: [(value: unknown): value is number => isNumber(value) && value >= 0, 'a number from 0 up'],
  ratio: [(value: unknown): value is number => isNumber(value) && value > 1, 'a number above 1'],
  positive: [(value: unknown): value is number => isNumber(value) && value > 0, 'a number above 0'],
  count: [(value: unknown): value is number => Number.isSafeInteger(value) && Number(value) > 0, 'a positive integer'],
} as const

/** The member `key` of `raw` as a number of `kind`, `fallback` when absent. */
const number = (f: Fields, raw: JsonObject, at: string, key: string, kind: keyof typeof NUMBERS, fallback: number): number => {
  if (raw[key] === undefined) return fallback
  const [isValid, expected] = NUMBERS[kind]
  return f.valid(raw[key], pathOf(at, key), isValid, expected)
}

const isText = (value: unknown): value is string => typeof value === 'string'

/** The member `key` of `raw` as a duration in ms (above 0 unless `isZeroAllowed`), `fallback` when absent. */
const duration = (f: Fields, raw: JsonObject, at: string, key: string, fallback: number, isZeroAllowed = false): number => {
  if (raw[key] === undefined) return fallback
  const field = pathOf(at, key)
  const ms = parseDuration(f.valid(raw[key], field, isText, DURATION_FORM))
  if (ms === undefined) throw f.invalid(field, `must be ${DURATION_FORM}, is ${JSON.stringify(raw[key])}`)
  if (ms === 0 && !isZeroAllowed) throw f.invalid(field, 'must be longer than 0s')
  return ms
}

const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean'
const isRole = (value: unknown): value is GateRole => GATE_ROLES.some((role) => role === value)
const isStepKind = (value: unknown): value is StepKind => STEP_KINDS.some((kind) => kind === value)

const gateBase = (f: Fields, raw: JsonObject, at: string, base: GateBase): GateBase => {
  const role = raw['role'] === undefined ? base.role : f.valid(raw['role'], pathOf(at, 'role'), isRole, `one of ${GATE_ROLES.join(', ')}`)
  const critical = raw['critical'] === undefined ? base.critical : f.valid(raw['critical'], pathOf(at, 'critical'), isBoolean, 'true or false')
  if (critical && role !== 'fail') throw f.invalid(pathOf(at, 'critical'), `only a gate whose role is fail can be critical; this one's is ${role}`)
  return { role, critical }
}

const ratioGate = (f: Fields, raw: JsonObject, at: string, base: RatioGate): RatioGate => ({
  ...gateBase(f, raw, at, base),
  relative_margin: number(f, raw, at, 'relative_margin', 'factor', base.relative_margin),
  min_margin: number(f, raw, at, 'min_margin', 'share', base.min_margin),
})

const latencyGate = (f: Fields, raw: JsonObject, at: string, base: LatencyGate): LatencyGate => ({
  ...gateBase(f, raw, at, base),
  relative_margin: number(f, raw, at, 'relative_margin', 'factor', base.relative_margin),
  min_margin: duration(f, raw, at, 'min_margin', base.min_margin),
  min_requests: number(f, raw, at, 'min_requests', 'count', base.min_requests),
})

const qualityGate = (f: Fields, raw: JsonObject, at: string, base: QualityGate): QualityGate => ({
  ...gateBase(f, raw, at, base),
  accuracy_margin: number(f, raw, at, 'accuracy_margin', 'share', base.accuracy_margin),
  rmse_ratio: number(f, raw, at, 'rmse_ratio', 'ratio', base.rmse_ratio),
  mae_ratio: number(f, raw, at, 'mae_ratio', 'ratio', base.mae_ratio),
})

const shadowGate = (f: Fields, raw: JsonObject, at: string, base: ShadowGate): ShadowGate => ({
  ...gateBase(f, raw, at, base),
  min_rows: number(f, raw, at, 'min_rows', 'count', base.min_rows),
  max_disagreement: number(f, raw, at, 'max_disagreement', 'share', base.max_disagreement),
  max_failure_share: number(f, raw, at, 'max_failure_share', 'share', base.max_failure_share),
})

const driftGate = (f: Fields, raw: JsonObject, at: string, base: DriftGate): DriftGate => ({
  ...gateBase(f, raw, at, base),
  min_rows: number(f, raw, at, 'min_rows', 'count', base.min_rows),
  max_psi: number(f, raw, at, 'max_psi', 'positive', base.max_psi),
})

/** The `gates` member over the defaults: a gate left out keeps them all, a gate named each member it leaves out. */
const gatesOf = (f: Fields, value: unknown): Gates => {
  if (value === undefined) return DEFAULT_PLAN.gates
  const raw = f.object(value, 'gates', GATE_NAMES, 'gates')
  const gate = <G extends GateName>(name: G, read: (f: Fields, raw: JsonObject, at: string, base: Gates[G]) => Gates[G]): Gates[G] => {
    const base = DEFAULT_PLAN.gates[name]
    if (raw[name] === undefined) return base
    const at = pathOf('gates', name)
    return read(f, f.object(raw[name], at, Object.keys(base), `the ${name} gate`), at, base)
  }
  return {
    server_errors: gate('server_errors', ratioGate),
    client_errors: gate('client_errors', ratioGate),
    latency_p95: gate('latency_p95', latencyGate),
    latency_p99: gate('latency_p99', latencyGate),
    quality: gate('quality', qualityGate),
    shadow: gate('shadow', shadowGate),
    drift: gate('drift', driftGate),
  }
}

const stepOf = (f: Fields, value: unknown, at: string): Step => {
  const raw = f.object(value, at, STEP_MEMBERS, 'a step')
  const kind = f.valid(raw['kind'], pathOf(at, 'kind'), isStepKind, `one of ${STEP_KINDS.join(', ')}`)
  // A canary at 100 % leaves the default no requests to be compared with; a shadow copies them all.
  const isPercent = (percent: unknown): percent is number => isNumber(percent) && percent > 0 && (kind === 'shadow' ? percent <= 100 : percent < 100)
  const range = kind === 'shadow' ? 'above 0, up to 100' : 'above 0 and below 100 (promotion follows the last step)'
  return { kind, percent: f.valid(raw['percent'], pathOf(at, 'percent'), isPercent, `a ${kind} percent ${range}`) }
}

/** The `steps` member: a shadow first or not at all, then canary steps rising. */
const stepsOf = (f: Fields, value: unknown): readonly Step[] => {
  if (value === undefined) return DEFAULT_PLAN.steps
  if (!Array.isArray(value) || value.length === 0) throw f.invalid('steps', `must be a non-empty array of steps, is ${JSON.stringify(value)}`)
  const steps = value.map((entry, i) => stepOf(f, entry, pathOf('steps', i)))
  steps.forEach((step, i) => {
    const before = steps[i - 1]
    if (step.kind === 'shadow' && before !== undefined) throw f.invalid(pathOf(pathOf('steps', i), 'kind'), 'a shadow step can only be the first')
    if (before?.kind === 'canary' && step.percent <= before.percent) {
      throw f.invalid(pathOf(pathOf('steps', i), 'percent'), `must rise above the step before it (${before.percent}), is ${step.percent}`)
    }
  })
  if (!steps.some((step) => step.kind === 'canary')) throw f.invalid('steps', 'must hold a canary step after the shadow: promotion follows the last step')
  return steps
}

/**
 * A plan from its JSON value, over DEFAULT_PLAN; throws PlanError naming the member, or what
 * `refuse` makes: rollout.json's `plan` is read with the state's own error (state.ts).
 */
export const planFromJson = (value: unknown, refuse: Refuse = refusePlan): Plan => {
  const f = fieldsOf(refuse)
  const raw = f.object(value, '', PLAN_MEMBERS, 'a plan')
  const d = DEFAULT_PLAN
  const plan: Plan = {
    steps: stepsOf(f, raw['steps']),
    interval: duration(f, raw, '', 'interval', d.interval),
    warmup: duration(f, raw, '', 'warmup', d.warmup, true),
    min_bake: duration(f, raw, '', 'min_bake', d.min_bake),
    failure_limit: number(f, raw, '', 'failure_limit', 'count', d.failure_limit),
    stall_after: duration(f, raw, '', 'stall_after', d.stall_after),
    min_labels: number(f, raw, '', 'min_labels', 'count', d.min_labels),
    rollback_on_stall:
      raw['rollback_on_stall'] === undefined ? d.rollback_on_stall : f.valid(raw['rollback_on_stall'], 'rollback_on_stall', isBoolean, 'true or false'),
    gates: gatesOf(f, raw['gates']),
  }
  // Both said as what goes wrong: a window that never opens, a rollout that stalls on every step.
  if (plan.min_bake <= plan.warmup) {
    throw f.invalid('min_bake', `must be longer than warmup (${formatDuration(plan.warmup)}): the gates judge only after the warmup`)
  }
  if (plan.stall_after <= plan.min_bake) {
    throw f.invalid('stall_after', `must be longer than min_bake (${formatDuration(plan.min_bake)}), or every step would stall before it could advance`)
  }
  return deepFreeze(plan)
}

/** Parses a plan file (strict UTF-8 JSON); throws PlanError naming the member; returns it whole and frozen. */
export const parsePlan = (bytes: Uint8Array | string): Plan => {
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw new PlanError('INVALID_JSON', '(document)', `is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  return planFromJson(value)
}

const latencyToJson = (gate: LatencyGate) => ({ ...gate, min_margin: formatDuration(gate.min_margin) })

/** The plan as its JSON value, every member, durations as text: what rollout.json holds and `planFromJson` reads back. */
export const planToJson = (plan: Plan) => ({
  steps: plan.steps,
  interval: formatDuration(plan.interval),
  warmup: formatDuration(plan.warmup),
  min_bake: formatDuration(plan.min_bake),
  failure_limit: plan.failure_limit,
  stall_after: formatDuration(plan.stall_after),
  min_labels: plan.min_labels,
  rollback_on_stall: plan.rollback_on_stall,
  gates: { ...plan.gates, latency_p95: latencyToJson(plan.gates.latency_p95), latency_p99: latencyToJson(plan.gates.latency_p99) },
})

/** The whole plan as a file `parsePlan` reads back: two-space JSON and a final newline, for `status` and README. */
export const formatPlan = (plan: Plan): string => `${JSON.stringify(planToJson(plan), null, 2)}\n`
