// What a rollout gate answers, and the rule of evidence every gate shares. A gate compares the
// canary with the default version from counts and sums already queried (no I/O here), and returns
// its verdict with the figures behind it, so `svc rollout status` and `explain` can show why.
//
// Verdicts. `pass`, `fail` or `inconclusive`, and nothing else: what a failure does is the plan's
// role for the gate (`fail` counts toward the step's failure limit, `hold` keeps the step, `info`
// only reports), so a shadow's disagreement, which the issue says "holds", is a `fail` of the
// `shadow_disagreement` gate, whose default role is `hold` (DEFAULT_ROLES). rollout.json keeps a
// verdict as the gate gave it, with the role beside it (state.ts): `hold` is what a fail of a
// hold-role gate does to the rollout, an outcome, never a verdict. The plan's gates are these
// GATES, each with its role and its gate function's options, defaulting to the gates' (plan.ts).
//
// No data decides nothing. A NaN, ±∞ or negative figure, an empty input, or too few rows gives
// `inconclusive` with the reason, never `pass` and never `fail`: Flagger rolls back canaries that
// merely had no traffic (flagger#1035) and lets a 0/0 pass; Kayenta passes sparse data (kayenta#426).
//
// Evidence. From a gate's minimum of rows, a 95 % interval wholly past its limit fails, one wholly
// within it passes, and one across it is inconclusive, with an estimate of the rows that would
// decide. A 99.9 % interval wholly past the limit is a confident breach, `critical`: a gate the plan
// makes critical rolls back on one, where failures are otherwise counted toward `failure_limit` (3
// by default), so it asks for more evidence than one counted failure. Below the minimum only a
// confident breach fails, and only from `criticalFrom` rows (gates that allow none set it to the
// minimum): labels come late, and a canary that fails most requests must not hide behind a slow
// trickle of traffic.

export const VERDICTS = ['pass', 'fail', 'inconclusive'] as const
export type Verdict = (typeof VERDICTS)[number]

export const GATES = [
  'server_errors',
  'client_errors',
  'latency_p95',
  'latency_p99',
  'quality',
  'shadow_disagreement',
  'shadow_failures',
  'prediction_drift',
] as const
export type GateName = (typeof GATES)[number]

export const ROLES = ['fail', 'hold', 'info'] as const
export type Role = (typeof ROLES)[number]

/** Each gate's role unless the plan says otherwise (issue 50, item 3). */
export const DEFAULT_ROLES: Readonly<Record<GateName, Role>> = Object.freeze({
  server_errors: 'fail',
  client_errors: 'fail',
  latency_p95: 'fail',
  latency_p99: 'fail',
  quality: 'fail',
  shadow_disagreement: 'hold',
  shadow_failures: 'fail',
  prediction_drift: 'info',
})

/** The figures behind a verdict: canary's and default's, bounds, limits, row counts; snake_case names. */
export type GateValues = Readonly<Record<string, number>>

export type GateResult = Readonly<{
  gate: GateName
  verdict: Verdict
  /** On a fail only: whether it is a confident breach (99.9 %). */
  critical?: boolean
  /** In words a person reads: which figure, which bound, how many rows more are needed. */
  reason: string
  values: GateValues
}>

/** One comparison within a gate; a gate of several (quality) combines them. */
export type Check = Readonly<{ verdict: Verdict; critical: boolean; text: string }>

export const undecided = (text: string): Check => ({ verdict: 'inconclusive', critical: false, text })

/** The first of `figures` that no count or sum can be (NaN, ±∞, negative), worded; undefined when all are. */
export const badFigure = (figures: GateValues): string | undefined => {
  for (const [name, value] of Object.entries(figures)) {
    if (Number.isNaN(value)) return `${name} is NaN`
    if (!Number.isFinite(value)) return `${name} is ${value > 0 ? '+' : '-'}Inf`
    if (value < 0) return `${name} is negative (${value})`
  }
  return undefined
}

/** A gate that had nothing to judge: inconclusive, with why. */
export const noData = (gate: GateName, why: string, values: GateValues): GateResult => ({
  gate,
  verdict: 'inconclusive',
  reason: `no data decides nothing: ${why}`,
  values,
})

/** A gate's verdict from its checks: any fail fails (critical when one is), every pass passes, else inconclusive. */
export const combine = (gate: GateName, checks: readonly Check[], values: GateValues): GateResult => {
  const reason = checks.map((check) => check.text).join('; ')
  const failed = checks.filter((check) => check.verdict === 'fail')
  if (failed.length > 0) return { gate, verdict: 'fail', critical: failed.some((check) => check.critical), reason, values }
  return { gate, verdict: checks.every((check) => check.verdict === 'pass') ? 'pass' : 'inconclusive', reason, values }
}

/** A share as a person reads it: 0.0123 → "1.23 %". */
export const percent = (share: number): string => `${(100 * share).toFixed(2)} %`

/** A figure to four significant digits, without trailing zeros: 0.12345 → "0.1235". */
export const figure = (value: number): string => String(Number(value.toPrecision(4)))

/** A row count as a person reads it: increase() makes fractional counts, a person counts whole rows. */
export const rows = (count: number): string => String(Math.round(count))

export type Evidence = Readonly<{
  /** The rows the check stands on (the fewer side's, for a comparison). */
  rows: number
  minRows: number
  criticalFrom: number
  /** What the rows are, plural: "requests", "labelled rows". */
  unit: string
  /** The figure and its 95 % interval, in words. */
  subject: string
  /** The limit, in words: "the limit 2.00 % (…)". */
  limit: string
  /** The 95 % interval is wholly past the limit, or wholly within it. */
  breach: boolean
  clear: boolean
  /** The 99.9 % interval is wholly past the limit. */
  confident: boolean
  /** Rows the check would need in all to decide at the current figures; Infinity when none would. */
  rowsToDecide: number
}>

/** Too few rows to judge: how many more, of how many. */
export const tooFew = (what: string, count: number, minRows: number, unit: string): Check =>
  undecided(`${what}: ${rows(Math.max(1, Math.ceil(minRows - count)))} more ${unit} needed (${rows(count)} of ${rows(minRows)})`)

/** Whether a check has rows enough to compute anything: some, and at least `criticalFrom`. */
export const hasRows = (count: number, criticalFrom: number): boolean => count > 0 && count >= criticalFrom

/** The rule of evidence (header), for a check that has rows (`hasRows`). */
export const judge = (e: Evidence): Check => {
  if (e.rows < e.minRows) {
    if (e.confident) return { verdict: 'fail', critical: true, text: `${e.subject}: its 99.9 % interval is past ${e.limit}, a confident breach` }
    return tooFew(e.subject, e.rows, e.minRows, e.unit)
  }
  if (e.breach) return { verdict: 'fail', critical: e.confident, text: `${e.subject}: wholly past ${e.limit}${e.confident ? ', a confident breach' : ''}` }
  if (e.clear) return { verdict: 'pass', critical: false, text: `${e.subject}: wholly within ${e.limit}` }
  const more = e.rowsToDecide - e.rows
  const estimate =
    more === Number.POSITIVE_INFINITY
      ? 'undecidable at the current figures, which sit on it'
      : `about ${rows(Math.max(1, Math.ceil(more)))} more ${e.unit} to decide at the current figures`
  return undecided(`${e.subject}: across ${e.limit}, ${estimate}`)
}
