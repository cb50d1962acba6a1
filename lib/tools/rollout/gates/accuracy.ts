// The quality gate for a classifier: realized accuracy from labels, the canary against the default
// version by Newcombe's interval on the difference, and against the reference accuracy the canary
// was validated at (svc_model_reference_quality) by Wilson's, when there is one. The margin is
// 0.05, absolute, either way: SvcCanaryQualityLow and SvcModelAccuracyLow
// (ops/prometheus/rules/quality.yml), which judge from 200 labelled rows, `min_labels`' default.
// Labels come late, so below `min_labels` only a confident breach fails (verdict.ts), from a
// quarter of them; the comparison counts the fewer side's rows, the reference the canary's.
import { newcombeBounds, wilsonBounds, wilsonRowsToExclude, Z_95, Z_999 } from './intervals.js'
import { badFigure, type Check, combine, figure, type GateResult, type GateValues, hasRows, judge, noData, percent, rows, tooFew } from './verdict.js'

/** One version's labelled rows over the window, and how many of them it answered right. */
export type Labelled = Readonly<{ correct: number; labelled: number }>

export type AccuracyInput = Readonly<{
  canary: Labelled
  default: Labelled
  /** The canary version's reference accuracy, in [0, 1], when its artifact has one. */
  reference?: number
}>

export type QualityGateOptions = Readonly<{
  /** Labelled rows (each side's, for a comparison) from which a pass or a plain fail counts. */
  minLabels: number
  /** Labelled rows from which a confident breach fails. */
  criticalFrom: number
}>

export const QUALITY_GATE_DEFAULTS: QualityGateOptions = Object.freeze({ minLabels: 200, criticalFrom: 50 })

/** How much less accurate than the default, or than its reference, the canary may be. */
export const ACCURACY_MARGIN = 0.05

const UNIT = 'labelled rows'

const comparison = (canary: Labelled, other: Labelled, o: QualityGateOptions): { check: Check; values: GateValues } => {
  const count = Math.min(canary.labelled, other.labelled)
  const what = "canary accuracy against the default version's"
  if (!hasRows(count, o.criticalFrom)) return { check: tooFew(`${what}, on the side with fewer labels`, count, o.minLabels, UNIT), values: {} }
  const pc = canary.correct / canary.labelled
  const pd = other.correct / other.labelled
  const d = pc - pd
  const ci = newcombeBounds(canary.correct, canary.labelled, other.correct, other.labelled, Z_95)
  const confident = newcombeBounds(canary.correct, canary.labelled, other.correct, other.labelled, Z_999)
  // Newcombe's half-width shrinks about as 1/√n: the rows at which the bound facing the margin would cross it.
  const half = d > -ACCURACY_MARGIN ? d - ci.low : ci.high - d
  const check = judge({
    rows: count,
    minRows: o.minLabels,
    criticalFrom: o.criticalFrom,
    unit: UNIT,
    subject:
      `${what}: ${percent(pc)} against ${percent(pd)} over ${rows(canary.labelled)} and ${rows(other.labelled)} ${UNIT}, ` +
      `difference ${figure(d)} (95 % interval ${figure(ci.low)} to ${figure(ci.high)})`,
    limit: `the margin -${ACCURACY_MARGIN}`,
    breach: ci.high < -ACCURACY_MARGIN,
    clear: ci.low > -ACCURACY_MARGIN,
    confident: confident.high < -ACCURACY_MARGIN,
    rowsToDecide: count * (half / (d + ACCURACY_MARGIN)) ** 2,
  })
  return { check, values: { difference: d, difference_low: ci.low, difference_high: ci.high, difference_confident_high: confident.high } }
}

const againstReference = (canary: Labelled, reference: number, o: QualityGateOptions): { check: Check; values: GateValues } => {
  const floor = reference - ACCURACY_MARGIN
  const what = 'canary accuracy against its reference'
  if (!hasRows(canary.labelled, o.criticalFrom)) return { check: tooFew(what, canary.labelled, o.minLabels, UNIT), values: {} }
  const pc = canary.correct / canary.labelled
  const ci = wilsonBounds(canary.correct, canary.labelled, Z_95)
  const confident = wilsonBounds(canary.correct, canary.labelled, Z_999)
  const check = judge({
    rows: canary.labelled,
    minRows: o.minLabels,
    criticalFrom: o.criticalFrom,
    unit: UNIT,
    subject: `${what}: ${percent(pc)} over ${rows(canary.labelled)} ${UNIT} (95 % interval ${percent(ci.low)} to ${percent(ci.high)})`,
    limit: `the floor ${percent(floor)} (the reference ${percent(reference)} less ${ACCURACY_MARGIN})`,
    breach: ci.high < floor,
    clear: ci.low > floor,
    confident: confident.high < floor,
    rowsToDecide: wilsonRowsToExclude(pc, floor),
  })
  return { check, values: { reference_floor: floor, canary_low: ci.low, canary_high: ci.high, canary_confident_high: confident.high } }
}

/** A classifier canary's realized accuracy against the default version's, and against its reference when given. */
export const accuracyGate = (input: AccuracyInput, options: Partial<QualityGateOptions> = {}): GateResult => {
  const o = { ...QUALITY_GATE_DEFAULTS, ...options }
  const { canary, default: other, reference } = input
  const values: GateValues = {
    canary_correct: canary.correct,
    canary_labelled: canary.labelled,
    default_correct: other.correct,
    default_labelled: other.labelled,
    ...(reference === undefined ? {} : { reference }),
  }
  const bad = badFigure(values)
  if (bad !== undefined) return noData('quality', bad, values)
  if (canary.correct > canary.labelled) return noData('quality', 'the canary has more correct answers than labelled rows', values)
  if (other.correct > other.labelled) return noData('quality', 'the default version has more correct answers than labelled rows', values)
  if (reference !== undefined && reference > 1) return noData('quality', `the reference accuracy ${reference} is above 1`, values)
  const checks = [comparison(canary, other, o), ...(reference === undefined ? [] : [againstReference(canary, reference, o)])]
  const shares = {
    ...(canary.labelled > 0 ? { canary_accuracy: canary.correct / canary.labelled } : {}),
    ...(other.labelled > 0 ? { default_accuracy: other.correct / other.labelled } : {}),
  }
  return combine(
    'quality',
    checks.map(({ check }) => check),
    Object.assign({ min_labels: o.minLabels }, values, shares, ...checks.map((check) => check.values)),
  )
}
