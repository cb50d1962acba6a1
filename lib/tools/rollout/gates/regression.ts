// The quality gate for a regressor, from the error sums every version exports (Σ|e|, Σe² and the
// labelled rows, e = answer − truth, ops/prometheus/rules/quality.yml):
//   MAE   canary against default by Welch's test, each side's Var|e| = MSE − MAE² (times n/(n − 1),
//         the sample variance Welch's test takes); it fails when the canary's MAE is above the
//         default's by more than a quarter of the default's, the margin RMSE has, with 95 %
//         confidence (99.9 % for a confident breach).
//   RMSE  canary against 1.25 × the default's (SvcCanaryQualityLow), and against 1.25 × the
//         canary's reference RMSE when there is one (SvcModelRmseHigh). Point estimates, as the
//         alerts': an interval for RMSE needs Σe⁴, which nothing exports. So they decide from
//         `min_labels` only and never confidently.
// Labels come late: below `min_labels` only a confident MAE breach fails (verdict.ts).
import { type QualityGateOptions, QUALITY_GATE_DEFAULTS } from './accuracy.js'
import { type Sample, welch } from './intervals.js'
import { badFigure, type Check, combine, figure, type GateResult, type GateValues, hasRows, judge, noData, rows, tooFew, undecided } from './verdict.js'

/** One version's error sums over the window: Σ|e|, Σe² and its labelled rows. */
export type ErrorSums = Readonly<{ absolute: number; squared: number; rows: number }>

export type RegressionInput = Readonly<{
  canary: ErrorSums
  default: ErrorSums
  /** The canary version's reference RMSE, when its artifact has one. */
  referenceRmse?: number
}>

/** The canary's MAE and RMSE may be this many times the default's (or the reference RMSE). */
export const ERROR_RATIO = 1.25

const UNIT = 'labelled rows'

/** Welch's sample of |e|: MSE ≥ MAE² for any errors (Jensen), so a deficit is rounding, taken as 0. */
const absoluteErrors = ({ absolute, squared, rows: n }: ErrorSums): Sample => {
  const mean = absolute / n
  return { mean, variance: (Math.max(0, squared / n - mean * mean) * n) / (n - 1), n }
}

const maeCheck = (canary: ErrorSums, other: ErrorSums, o: QualityGateOptions): { check: Check; values: GateValues } => {
  const count = Math.min(canary.rows, other.rows)
  const what = "canary MAE against the default version's"
  if (!hasRows(count, o.criticalFrom)) return { check: tooFew(`${what}, on the side with fewer labels`, count, o.minLabels, UNIT), values: {} }
  const a = absoluteErrors(canary)
  const b = absoluteErrors(other)
  const test = welch(a, b, 0.95)
  const confident = welch(a, b, 0.999)
  if (test === undefined || confident === undefined)
    return { check: undecided(`${what}: Welch's test needs 2 ${UNIT} or more on each side and errors that vary`), values: {} }
  const margin = (ERROR_RATIO - 1) * b.mean
  const check = judge({
    rows: count,
    minRows: o.minLabels,
    criticalFrom: o.criticalFrom,
    unit: UNIT,
    subject:
      `${what}: ${figure(a.mean)} against ${figure(b.mean)} over ${rows(canary.rows)} and ${rows(other.rows)} ${UNIT}, ` +
      `difference ${figure(test.difference)} (95 % interval ${figure(test.low)} to ${figure(test.high)}, Welch's t on ${figure(test.df)} degrees of freedom)`,
    limit: `the margin ${figure(margin)} (${ERROR_RATIO} times the default's MAE, less it)`,
    breach: test.low > margin,
    clear: test.high < margin,
    confident: confident.low > margin,
    // The interval's half-width shrinks as 1/√n: the rows at which it would stop reaching the margin.
    rowsToDecide: count * ((test.high - test.difference) / (test.difference - margin)) ** 2,
  })
  return {
    check,
    values: {
      mae_difference: test.difference,
      mae_low: test.low,
      mae_high: test.high,
      mae_confident_low: confident.low,
      mae_margin: margin,
      welch_df: test.df,
      welch_t: test.t,
      welch_p: test.p,
    },
  }
}

/** A point estimate against a limit, from `min_labels` rows. */
const rmseCheck = (what: string, rmse: number, limit: number, limitText: string, count: number, o: QualityGateOptions): Check => {
  if (count < o.minLabels || !(count > 0)) return tooFew(what, count, o.minLabels, UNIT)
  const subject = `${what}: ${figure(rmse)} over ${rows(count)} ${UNIT}`
  return rmse > limit
    ? { verdict: 'fail', critical: false, text: `${subject}, past ${limitText}` }
    : { verdict: 'pass', critical: false, text: `${subject}, within ${limitText}` }
}

/** A regressor canary's MAE and RMSE from labels against the default version's, and its RMSE against its reference when given. */
export const regressionGate = (input: RegressionInput, options: Partial<QualityGateOptions> = {}): GateResult => {
  const o = { ...QUALITY_GATE_DEFAULTS, ...options }
  const { canary, default: other, referenceRmse } = input
  const values: GateValues = {
    canary_absolute_error_sum: canary.absolute,
    canary_squared_error_sum: canary.squared,
    canary_labelled: canary.rows,
    default_absolute_error_sum: other.absolute,
    default_squared_error_sum: other.squared,
    default_labelled: other.rows,
    ...(referenceRmse === undefined ? {} : { reference_rmse: referenceRmse }),
  }
  const bad = badFigure(values)
  if (bad !== undefined) return noData('quality', bad, values)
  for (const [side, sums] of [
    ['the canary', canary],
    ['the default version', other],
  ] as const) {
    // Σe² ≥ (Σ|e|)² / n for any errors (Cauchy–Schwarz); a relative 1e-9 is left to rounding.
    if (sums.squared * sums.rows < sums.absolute * sums.absolute * (1 - 1e-9))
      return noData('quality', `the error sums of ${side} are impossible: Σe² = ${sums.squared} is below (Σ|e|)² / n`, values)
  }
  const mae = maeCheck(canary, other, o)
  const rmseC = Math.sqrt(canary.squared / canary.rows)
  const rmseD = Math.sqrt(other.squared / other.rows)
  const checks = [
    mae.check,
    rmseCheck(
      "canary RMSE against the default version's",
      rmseC,
      ERROR_RATIO * rmseD,
      `${ERROR_RATIO} times the default's ${figure(rmseD)}`,
      Math.min(canary.rows, other.rows),
      o,
    ),
    ...(referenceRmse === undefined
      ? []
      : [
          rmseCheck(
            'canary RMSE against its reference',
            rmseC,
            ERROR_RATIO * referenceRmse,
            `${ERROR_RATIO} times the reference ${figure(referenceRmse)}`,
            canary.rows,
            o,
          ),
        ]),
  ]
  const figures = {
    ...(canary.rows > 0 ? { canary_mae: canary.absolute / canary.rows, canary_rmse: rmseC } : {}),
    ...(other.rows > 0 ? { default_mae: other.absolute / other.rows, default_rmse: rmseD, rmse_limit: ERROR_RATIO * rmseD } : {}),
    ...(referenceRmse === undefined ? {} : { reference_rmse_limit: ERROR_RATIO * referenceRmse }),
  }
  return combine('quality', checks, { min_labels: o.minLabels, ...values, ...figures, ...mae.values })
}
