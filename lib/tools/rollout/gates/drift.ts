// The prediction drift gate, classifiers only: the canary's answers, as shares of each class,
// against the default version's over the same window. Regressors have no such gate: their
// prediction bins differ by build, so two versions' bins do not line up.
//
// Its measure is PSI, with lib/drift/psi.ts's formula and floor and drift.yml's thresholds (0.1
// moderate, 0.25 severe) and guard (500 rows, here on each side), so the gate and the drift alerts
// speak the same numbers. PSI alone grows with sampling noise as classes multiply ((1/n + 1/m) ·
// χ²(B − 1), psi.ts), so a PSI at or above 0.1 fails only when the chi-square test of homogeneity
// of the two versions' class counts also rejects at 5 %; where it cannot, the gate is
// inconclusive, with the rows that would decide at the current shares (the statistic grows in
// proportion to the rows). Below 0.1 it passes: noise only ever adds to PSI. A confident breach is
// severe drift with p below 0.001. Its default role is `info` (verdict.ts).
import { chiSquareSurvival } from '../../../drift/false-alarm.js'
import { PROPORTION_FLOOR } from '../../../drift/psi.js'
import { solveIncreasing } from './distributions.js'
import { badFigure, type Check, combine, figure, type GateResult, type GateValues, noData, rows, tooFew, undecided } from './verdict.js'

/** Predictions per class label over the window. */
export type ClassCounts = Readonly<Record<string, number>>

export type DriftInput = Readonly<{ canary: ClassCounts; default: ClassCounts }>

export type DriftGateOptions = Readonly<{
  /** Predictions on each side from which the gate decides. */
  minRows: number
  moderate: number
  severe: number
  /** The chi-square test's level. */
  alpha: number
}>

export const DRIFT_GATE_DEFAULTS: DriftGateOptions = Object.freeze({ minRows: 500, moderate: 0.1, severe: 0.25, alpha: 0.05 })

/** p below which a severe PSI is a confident breach. */
const CONFIDENT_P = 0.001

/** Each class either side predicted, with both sides' counts, and each side's rows. */
type Table = Readonly<{ cells: readonly Readonly<{ label: string; canary: number; other: number }>[]; canaryRows: number; otherRows: number }>

const table = (input: DriftInput): Table => {
  const labels = [...new Set([...Object.keys(input.canary), ...Object.keys(input.default)])].sort()
  const cells = labels.map((label) => ({ label, canary: input.canary[label] ?? 0, other: input.default[label] ?? 0 }))
  return { cells, canaryRows: cells.reduce((n, cell) => n + cell.canary, 0), otherRows: cells.reduce((n, cell) => n + cell.other, 0) }
}

/** PSI of the canary's shares against the default's, both floored as lib/drift/psi.ts floors them. */
const psiOf = ({ cells, canaryRows, otherRows }: Table): number =>
  cells.reduce((total, cell) => {
    const c = Math.max(cell.canary / canaryRows, PROPORTION_FLOOR)
    const d = Math.max(cell.other / otherRows, PROPORTION_FLOOR)
    return total + (c - d) * (Math.log(c) - Math.log(d))
  }, 0)

/** Pearson's chi-square for the 2 × K table over the classes either side predicted, and its degrees of freedom. */
const chiSquareOf = ({ cells, canaryRows, otherRows }: Table): Readonly<{ statistic: number; df: number }> => {
  const n = canaryRows + otherRows
  const predicted = cells.filter((cell) => cell.canary + cell.other > 0)
  const statistic = predicted.reduce((total, { canary, other }) => {
    const expectedCanary = (canaryRows * (canary + other)) / n
    const expectedOther = (otherRows * (canary + other)) / n
    return total + (canary - expectedCanary) ** 2 / expectedCanary + (other - expectedOther) ** 2 / expectedOther
  }, 0)
  return { statistic, df: predicted.length - 1 }
}

/** The canary's class shares against the default's: PSI, with the chi-square test behind a breach. */
export const predictionDriftGate = (input: DriftInput, options: Partial<DriftGateOptions> = {}): GateResult => {
  const o = { ...DRIFT_GATE_DEFAULTS, ...options }
  const named: GateValues = Object.fromEntries([
    ...Object.entries(input.canary).map(([label, count]) => [`canary_count_${label}`, count]),
    ...Object.entries(input.default).map(([label, count]) => [`default_count_${label}`, count]),
  ])
  const bad = badFigure(named)
  if (bad !== undefined) return noData('prediction_drift', bad, named)
  const t = table(input)
  const count = Math.min(t.canaryRows, t.otherRows)
  const values = { canary_rows: t.canaryRows, default_rows: t.otherRows, min_rows: o.minRows, moderate: o.moderate, severe: o.severe, alpha: o.alpha }
  if (!(count > 0) || count < o.minRows)
    return combine('prediction_drift', [tooFew('class shares, on the side with fewer predictions', count, o.minRows, 'predictions')], values)
  const psi = psiOf(t)
  const { statistic, df } = chiSquareOf(t)
  const p = df === 0 ? 1 : chiSquareSurvival(statistic, df)
  const shares = Object.fromEntries(
    t.cells.flatMap(({ label, canary, other }) => [
      [`canary_share_${label}`, canary / t.canaryRows],
      [`default_share_${label}`, other / t.otherRows],
    ]),
  )
  const subject =
    `PSI ${figure(psi)} of the canary's class shares against the default's, over ${rows(t.canaryRows)} and ${rows(t.otherRows)} predictions ` +
    `(chi-square ${figure(statistic)} on ${df} degrees of freedom, p = ${figure(p)})`
  const threshold = psi >= o.severe ? `severe threshold ${o.severe}` : `moderate threshold ${o.moderate}`
  let check: Check
  if (psi < o.moderate) check = { verdict: 'pass', critical: false, text: `${subject}: below the moderate threshold ${o.moderate}` }
  else if (p < o.alpha)
    check = {
      verdict: 'fail',
      critical: psi >= o.severe && p < CONFIDENT_P,
      text: `${subject}: at or past the ${threshold}, and past sampling noise (p below ${o.alpha})`,
    }
  else {
    // The statistic grows in proportion to the rows at the same shares: the factor that would bring it to the test's critical value.
    const factor = solveIncreasing((x) => 1 - chiSquareSurvival(x, df), 1 - o.alpha) / statistic
    const more = rows(Math.max(1, Math.ceil(count * (factor - 1))))
    check = undecided(
      `${subject}: at or past the ${threshold}, but within sampling noise (p not below ${o.alpha}); ` +
        `about ${more} more predictions on each side to decide at the current shares`,
    )
  }
  return combine('prediction_drift', [check], { ...values, psi, chi_square: statistic, degrees_of_freedom: df, p_value: p, ...shares })
}
