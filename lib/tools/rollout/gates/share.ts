// A share of rows against a limit, by its Wilson interval: the check under the error, latency and
// shadow gates, and under the quality gate's comparison with a reference accuracy (as the share of
// wrong answers, since Wilson's interval is symmetric in p and 1 − p). Past the limit is the bad
// side. Counts are checked by the gate before (verdict.ts badFigure).
import { wilsonBounds, wilsonRowsToExclude, Z_95, Z_999 } from './intervals.js'
import { type Check, type GateValues, hasRows, judge, percent, rows, tooFew } from './verdict.js'

export type ShareTest = Readonly<{
  /** Rows on the bad side (errors, requests above the edge) of `total`. */
  count: number
  total: number
  limit: number
  minRows: number
  criticalFrom: number
  /** What the share is, for the reason: "canary server-error share". */
  what: string
  /** The limit in words, with how it was made: "the limit 2.00 % (…)". */
  limitText: string
  /** What the rows are, plural: "requests". */
  unit: string
}>

/** The share, its 95 % interval and the low bound of its 99.9 % one. */
export type ShareFigures = Readonly<{ share: number; low: number; high: number; confidentLow: number }>

/** The check, and its figures when there were rows to compute them. */
export type ShareCheck = Readonly<{ check: Check; figures?: ShareFigures }>

/** `figures` as a gate's values, each name after `prefix`: canary_share, canary_low, canary_high, canary_confident_low. */
export const shareValues = (prefix: string, figures: ShareFigures | undefined): GateValues =>
  figures === undefined
    ? {}
    : {
        [`${prefix}_share`]: figures.share,
        [`${prefix}_low`]: figures.low,
        [`${prefix}_high`]: figures.high,
        [`${prefix}_confident_low`]: figures.confidentLow,
      }

export const shareCheck = (s: ShareTest): ShareCheck => {
  if (!hasRows(s.total, s.criticalFrom)) return { check: tooFew(s.what, s.total, s.minRows, s.unit) }
  const share = s.count / s.total
  // hasRows and the gate's own checks (0 ≤ count ≤ total, all finite) leave Wilson nothing to refuse.
  const ci = wilsonBounds(s.count, s.total, Z_95)
  const confident = wilsonBounds(s.count, s.total, Z_999)
  const check = judge({
    rows: s.total,
    minRows: s.minRows,
    criticalFrom: s.criticalFrom,
    unit: s.unit,
    subject: `${s.what}: ${percent(share)} over ${rows(s.total)} ${s.unit} (95 % interval ${percent(ci.low)} to ${percent(ci.high)})`,
    limit: s.limitText,
    breach: ci.low > s.limit,
    clear: ci.high < s.limit,
    confident: confident.low > s.limit,
    rowsToDecide: wilsonRowsToExclude(share, s.limit),
  })
  return { check, figures: { share, low: ci.low, high: ci.high, confidentLow: confident.low } }
}
