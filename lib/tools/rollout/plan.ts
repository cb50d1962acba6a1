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
//   min_labels         200   labelled rows per version the quality gate needs to let the last step go:
//                            the gate's minLabels, which is where memory holds it (gates.quality)
//   rollback_on_stall  false  roll back a stalled rollout: opt-in, never while Prometheus is unreachable
//   gates              each gate's role and options, below
//
// A gate's `role` (ROLES in gates/verdict.ts, each gate's default in DEFAULT_ROLES there): `fail` (a
// failure counts toward failure_limit), `hold` (a failure holds the step and never rolls back) or
// `info` (recorded, decides nothing); `critical`, for a fail-role gate only: one confident breach
// (the gate's 99.9 % interval wholly past its limit) rolls back.
//
// The gates are gates/verdict.ts's GATES, and every other member of a gate is an option its gate
// function takes (gates/*.ts), snake_case here and camelCase in memory, so a pass hands
// `plan.gates[name]` to the gate as it is. Their defaults are the gates' own `*_DEFAULTS`, never
// copied here; `formatPlan(DEFAULT_PLAN)` prints them. The margins themselves (D + max(D, floor)
// for errors, D + max(D/2, floor) for latency, 0.05 of accuracy, 1.25 times MAE and RMSE) are the
// shipped alerts' (ops/prometheus/rules/rollout.yml, quality.yml), fixed in the gates, so a plan
// cannot judge by other numbers than the alerts page on.
//   server_errors, client_errors   min_requests, critical_from, floor (the least margin, a share)
//   latency_p95, latency_p99       min_requests, limit (the share of requests above the edge),
//                                  floor (the least margin, a duration here, seconds in memory)
//   quality                        critical_from; its minLabels is min_labels above
//   shadow_disagreement            min_rows, limit; role hold
//   shadow_failures                min_rows, limit
//   prediction_drift               min_rows, moderate, severe (at least moderate), alpha; role info
// critical_from, the rows from which a confident breach fails below the gate's minimum, is at most
// that minimum; left out, it is the default or the minimum, whichever is lower, so a plan that
// lowers a minimum need not lower it too.
import { errorMessage, FieldError } from '../../core/errors.js'
import { deepFreeze } from '../../core/freeze.js'
import { type JsonObject, parseJson } from '../../core/json.js'
import { DURATION_FORM, formatDuration, parseDuration } from './duration.js'
import { type FieldCode, type Fields, fieldsOf, pathOf, type Refuse } from './fields.js'
import { QUALITY_GATE_DEFAULTS, type QualityGateOptions } from './gates/accuracy.js'
import { DRIFT_GATE_DEFAULTS, type DriftGateOptions } from './gates/drift.js'
import { ERROR_GATE_DEFAULTS, type ErrorGateOptions } from './gates/errors.js'
import { LATENCY_GATE_DEFAULTS, type LatencyGateOptions } from './gates/latency.js'
import { SHADOW_DISAGREEMENT_DEFAULTS, SHADOW_FAILURE_DEFAULTS, type ShadowGateOptions } from './gates/shadow.js'
import { DEFAULT_ROLES, GATES, type GateName, ROLES, type Role } from './gates/verdict.js'

export const STEP_KINDS = ['shadow', 'canary'] as const
export type StepKind = (typeof STEP_KINDS)[number]

/** One split: the candidate as a shadow of, or a canary answering, `percent` of the requests naming no version. */
export type Step = Readonly<{ kind: StepKind; percent: number }>

/** What the plan adds to a gate's options: what a failure of the gate does to the rollout. */
export type GatePolicy = Readonly<{ role: Role; critical: boolean }>
/** A gate in the plan: its policy, and the options its gate function takes. */
export type PlanGate<Options> = GatePolicy & Options

/** The options each gate's function takes; a gate missing here fails to compile (`Gates`). */
type GateOptions = Readonly<{
  server_errors: ErrorGateOptions
  client_errors: ErrorGateOptions
  latency_p95: LatencyGateOptions
  latency_p99: LatencyGateOptions
  quality: QualityGateOptions
  shadow_disagreement: ShadowGateOptions
  shadow_failures: ShadowGateOptions
  prediction_drift: DriftGateOptions
}>

export type Gates = { readonly [G in GateName]: PlanGate<GateOptions[G]> }

/** A whole plan, every member present, frozen; durations in milliseconds. `min_labels` is `gates.quality.minLabels`. */
export type Plan = Readonly<{
  steps: readonly Step[]
  interval: number
  warmup: number
  min_bake: number
  failure_limit: number
  stall_after: number
  rollback_on_stall: boolean
  gates: Gates
}>

export type PlanErrorCode = 'INVALID_JSON' | FieldCode

/** A plan refused: `field` names the member (`gates.latency_p95.rol`, `steps[2].percent`). */
export class PlanError extends FieldError<PlanErrorCode> {
  override name = 'PlanError'
}

const MINUTE = 60_000

const policy = (gate: GateName): GatePolicy => ({ role: DEFAULT_ROLES[gate], critical: false })

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
  rollback_on_stall: false,
  gates: {
    server_errors: { ...policy('server_errors'), ...ERROR_GATE_DEFAULTS },
    client_errors: { ...policy('client_errors'), ...ERROR_GATE_DEFAULTS },
    latency_p95: { ...policy('latency_p95'), ...LATENCY_GATE_DEFAULTS.p95 },
    latency_p99: { ...policy('latency_p99'), ...LATENCY_GATE_DEFAULTS.p99 },
    quality: { ...policy('quality'), ...QUALITY_GATE_DEFAULTS },
    shadow_disagreement: { ...policy('shadow_disagreement'), ...SHADOW_DISAGREEMENT_DEFAULTS },
    shadow_failures: { ...policy('shadow_failures'), ...SHADOW_FAILURE_DEFAULTS },
    prediction_drift: { ...policy('prediction_drift'), ...DRIFT_GATE_DEFAULTS },
  },
})

const STEP_MEMBERS: readonly string[] = ['kind', 'percent']

const refusePlan: Refuse = (code, field, reason) => new PlanError(code, field, reason)

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

/** What an option may be, and how its refusal says so. */
const NUMBERS = {
  share: [(value: unknown): value is number => isNumber(value) && value > 0 && value < 1, 'a number above 0 and below 1'],
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

/** `value` as a duration in ms, above 0 unless `isZeroAllowed`. */
const durationOf = (f: Fields, value: unknown, field: string, isZeroAllowed: boolean): number => {
  const ms = parseDuration(f.valid(value, field, isText, DURATION_FORM))
  if (ms === undefined) throw f.invalid(field, `must be ${DURATION_FORM}, is ${JSON.stringify(value)}`)
  if (ms === 0 && !isZeroAllowed) throw f.invalid(field, 'must be longer than 0s')
  return ms
}

/** The member `key` of `raw` as a duration in ms (above 0 unless `isZeroAllowed`), `fallback` when absent. */
const duration = (f: Fields, raw: JsonObject, at: string, key: string, fallback: number, isZeroAllowed = false): number =>
  raw[key] === undefined ? fallback : durationOf(f, raw[key], pathOf(at, key), isZeroAllowed)

/** The member `key` of `raw`, a duration above 0, in seconds (as the latency gates take it), `fallback` when absent. */
const seconds = (f: Fields, raw: JsonObject, at: string, key: string, fallback: number): number =>
  raw[key] === undefined ? fallback : durationOf(f, raw[key], pathOf(at, key), false) / 1000

const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean'
const isRole = (value: unknown): value is Role => ROLES.some((role) => role === value)
const isStepKind = (value: unknown): value is StepKind => STEP_KINDS.some((kind) => kind === value)

const policyOf = (f: Fields, raw: JsonObject, at: string, base: GatePolicy): GatePolicy => {
  const role = raw['role'] === undefined ? base.role : f.valid(raw['role'], pathOf(at, 'role'), isRole, `one of ${ROLES.join(', ')}`)
  const critical = raw['critical'] === undefined ? base.critical : f.valid(raw['critical'], pathOf(at, 'critical'), isBoolean, 'true or false')
  if (critical && role !== 'fail') throw f.invalid(pathOf(at, 'critical'), `only a gate whose role is fail can be critical; this one's is ${role}`)
  return { role, critical }
}

const policyToJson = (gate: GatePolicy) => ({ role: gate.role, critical: gate.critical })

/** `critical_from`, at most the gate's minimum (`minimumName`); left out, `fallback` or the minimum, whichever is lower. */
const criticalFrom = (f: Fields, raw: JsonObject, at: string, fallback: number, minimum: number, minimumName: string): number => {
  if (raw['critical_from'] === undefined) return Math.min(fallback, minimum)
  const value = number(f, raw, at, 'critical_from', 'count', fallback)
  if (value > minimum) {
    throw f.invalid(
      pathOf(at, 'critical_from'),
      `must be at most ${minimumName} (${minimum}), is ${value}: it is where a confident breach counts below the minimum`,
    )
  }
  return value
}

/** How a gate is read from the file over `base` (its members checked already) and written back. */
type Form<Options> = Readonly<{
  read: (f: Fields, raw: JsonObject, at: string, base: PlanGate<Options>) => PlanGate<Options>
  toJson: (gate: PlanGate<Options>) => Readonly<Record<string, string | number | boolean>>
}>

const ERROR_FORM: Form<ErrorGateOptions> = {
  read: (f, raw, at, base) => {
    const minRequests = number(f, raw, at, 'min_requests', 'count', base.minRequests)
    return {
      ...policyOf(f, raw, at, base),
      minRequests,
      criticalFrom: criticalFrom(f, raw, at, base.criticalFrom, minRequests, 'min_requests'),
      floor: number(f, raw, at, 'floor', 'share', base.floor),
    }
  },
  toJson: (gate) => ({ ...policyToJson(gate), min_requests: gate.minRequests, critical_from: gate.criticalFrom, floor: gate.floor }),
}

const LATENCY_FORM: Form<LatencyGateOptions> = {
  read: (f, raw, at, base) => ({
    ...policyOf(f, raw, at, base),
    minRequests: number(f, raw, at, 'min_requests', 'count', base.minRequests),
    limit: number(f, raw, at, 'limit', 'share', base.limit),
    floor: seconds(f, raw, at, 'floor', base.floor),
  }),
  // Whole milliseconds, the finest a duration holds: x / 1000 * 1000 may miss x by a rounding.
  toJson: (gate) => ({ ...policyToJson(gate), min_requests: gate.minRequests, limit: gate.limit, floor: formatDuration(Math.round(1000 * gate.floor)) }),
}

// Its minimum is the plan's min_labels, which `gatesOf` puts in `base`.
const QUALITY_FORM: Form<QualityGateOptions> = {
  read: (f, raw, at, base) => ({
    ...policyOf(f, raw, at, base),
    minLabels: base.minLabels,
    criticalFrom: criticalFrom(f, raw, at, base.criticalFrom, base.minLabels, 'min_labels'),
  }),
  toJson: (gate) => ({ ...policyToJson(gate), critical_from: gate.criticalFrom }),
}

const SHADOW_FORM: Form<ShadowGateOptions> = {
  read: (f, raw, at, base) => ({
    ...policyOf(f, raw, at, base),
    minRows: number(f, raw, at, 'min_rows', 'count', base.minRows),
    limit: number(f, raw, at, 'limit', 'share', base.limit),
  }),
  toJson: (gate) => ({ ...policyToJson(gate), min_rows: gate.minRows, limit: gate.limit }),
}

const DRIFT_FORM: Form<DriftGateOptions> = {
  read: (f, raw, at, base) => {
    const moderate = number(f, raw, at, 'moderate', 'positive', base.moderate)
    const severe = number(f, raw, at, 'severe', 'positive', base.severe)
    if (severe < moderate) throw f.invalid(pathOf(at, 'severe'), `must be at least moderate (${moderate}), is ${severe}`)
    return {
      ...policyOf(f, raw, at, base),
      minRows: number(f, raw, at, 'min_rows', 'count', base.minRows),
      moderate,
      severe,
      alpha: number(f, raw, at, 'alpha', 'share', base.alpha),
    }
  },
  toJson: (gate) => ({ ...policyToJson(gate), min_rows: gate.minRows, moderate: gate.moderate, severe: gate.severe, alpha: gate.alpha }),
}

const FORMS: { readonly [G in GateName]: Form<GateOptions[G]> } = {
  server_errors: ERROR_FORM,
  client_errors: ERROR_FORM,
  latency_p95: LATENCY_FORM,
  latency_p99: LATENCY_FORM,
  quality: QUALITY_FORM,
  shadow_disagreement: SHADOW_FORM,
  shadow_failures: SHADOW_FORM,
  prediction_drift: DRIFT_FORM,
}

const gateToJson = <G extends GateName>(plan: Plan, name: G) => {
  const form: Form<GateOptions[G]> = FORMS[name]
  return form.toJson(plan.gates[name])
}

/** The `gates` member over the defaults: a gate left out keeps them all, a gate named each member it leaves out. */
const gatesOf = (f: Fields, value: unknown, minLabels: number): Gates => {
  const raw = value === undefined ? {} : f.object(value, 'gates', GATES, 'gates')
  const gate = <G extends GateName>(name: G, base: PlanGate<GateOptions[G]>): PlanGate<GateOptions[G]> => {
    const form: Form<GateOptions[G]> = FORMS[name]
    const at = pathOf('gates', name)
    const given = raw[name] === undefined ? {} : f.object(raw[name], at, Object.keys(form.toJson(base)), `the ${name} gate`)
    return form.read(f, given, at, base)
  }
  const d = DEFAULT_PLAN.gates
  return {
    server_errors: gate('server_errors', d.server_errors),
    client_errors: gate('client_errors', d.client_errors),
    latency_p95: gate('latency_p95', d.latency_p95),
    latency_p99: gate('latency_p99', d.latency_p99),
    quality: gate('quality', { ...d.quality, minLabels }),
    shadow_disagreement: gate('shadow_disagreement', d.shadow_disagreement),
    shadow_failures: gate('shadow_failures', d.shadow_failures),
    prediction_drift: gate('prediction_drift', d.prediction_drift),
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
  const minLabels = number(f, raw, '', 'min_labels', 'count', d.gates.quality.minLabels)
  const plan: Plan = {
    steps: stepsOf(f, raw['steps']),
    interval: duration(f, raw, '', 'interval', d.interval),
    warmup: duration(f, raw, '', 'warmup', d.warmup, true),
    min_bake: duration(f, raw, '', 'min_bake', d.min_bake),
    failure_limit: number(f, raw, '', 'failure_limit', 'count', d.failure_limit),
    stall_after: duration(f, raw, '', 'stall_after', d.stall_after),
    rollback_on_stall:
      raw['rollback_on_stall'] === undefined ? d.rollback_on_stall : f.valid(raw['rollback_on_stall'], 'rollback_on_stall', isBoolean, 'true or false'),
    gates: gatesOf(f, raw['gates'], minLabels),
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

/** The plan as its JSON value, every member, durations as text: what rollout.json holds and `planFromJson` reads back. */
export const planToJson = (plan: Plan) => ({
  steps: plan.steps,
  interval: formatDuration(plan.interval),
  warmup: formatDuration(plan.warmup),
  min_bake: formatDuration(plan.min_bake),
  failure_limit: plan.failure_limit,
  stall_after: formatDuration(plan.stall_after),
  min_labels: plan.gates.quality.minLabels,
  rollback_on_stall: plan.rollback_on_stall,
  gates: Object.fromEntries(GATES.map((name) => [name, gateToJson(plan, name)])),
})

// The file's members, in its order.
const PLAN_MEMBERS: readonly string[] = Object.keys(planToJson(DEFAULT_PLAN))

/** The whole plan as a file `parsePlan` reads back: two-space JSON and a final newline, for `status` and README. */
export const formatPlan = (plan: Plan): string => `${JSON.stringify(planToJson(plan), null, 2)}\n`
