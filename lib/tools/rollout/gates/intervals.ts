// The three intervals the rollout gates stand on, each from counts and sums Prometheus already
// summed, so a gate's verdict carries its own uncertainty rather than a point estimate's:
//   wilson    a proportion (errors, latency above a bucket edge, shadow rows, accuracy against a
//             reference): the score interval, Wilson 1927. Unlike the Wald interval it stays inside
//             [0, 1] and does not collapse to a point at 0 or n successes, the usual case for a
//             canary's errors.
//   newcombe  a difference of two proportions (accuracy, canary minus default): the hybrid score
//             interval, Newcombe 1998 (Statistics in Medicine 17, 873–890) method 10, built from
//             the two Wilson intervals; his Table II's examples are in the tests.
//   welch     a difference of two means with unequal variances (MAE, canary minus default): Welch's
//             t with the Welch–Satterthwaite degrees of freedom, as scipy's ttest_ind_from_stats
//             with equal_var=False.
// Every function returns undefined where its figures cannot make an interval (no rows, a count out
// of range, a NaN): a gate reads that as "no data", never as a verdict.
import { studentTQuantile, studentTTwoSided } from './distributions.js'

export type Interval = Readonly<{ low: number; high: number }>

/** z of a two-sided 95 % interval, as the issue and most tables round it. */
export const Z_95 = 1.96
/** z of a two-sided 99.9 % interval: what a gate calls a confident breach (verdict.ts). */
export const Z_999 = 3.29

const isCount = (x: number): boolean => Number.isFinite(x) && x >= 0

/** Wilson's interval for figures already checked (0 ≤ successes ≤ n, n > 0, z > 0, all finite). */
export const wilsonBounds = (successes: number, n: number, z: number): Interval => {
  const p = successes / n
  const z2n = (z * z) / n
  const centre = (p + z2n / 2) / (1 + z2n)
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n))
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) }
}

/**
 * Wilson's score interval for a proportion of `successes` in `n` (counts from increase() may be
 * fractional); undefined unless n > 0, 0 ≤ successes ≤ n and z > 0, all finite.
 */
export const wilson = (successes: number, n: number, z = Z_95): Interval | undefined =>
  isCount(successes) && isCount(n) && n > 0 && successes <= n && Number.isFinite(z) && z > 0 ? wilsonBounds(successes, n, z) : undefined

/**
 * The rows at which the Wilson interval around the proportion `p` would exclude `limit`: Wilson's
 * interval is the set of π with (p − π)² ≤ z² π (1 − π) / n, so `limit` leaves it once
 * n > z² limit (1 − limit) / (p − limit)². Infinity when p is the limit. What "how many rows more"
 * says, at the current proportion.
 */
export const wilsonRowsToExclude = (p: number, limit: number, z = Z_95): number => (z * z * limit * (1 - limit)) / ((p - limit) * (p - limit))

/** Newcombe's interval for figures already checked, as `wilsonBounds`. */
export const newcombeBounds = (x1: number, n1: number, x2: number, n2: number, z: number): Interval => {
  const one = wilsonBounds(x1, n1, z)
  const two = wilsonBounds(x2, n2, z)
  const p1 = x1 / n1
  const p2 = x2 / n2
  const d = p1 - p2
  return { low: d - Math.hypot(p1 - one.low, two.high - p2), high: d + Math.hypot(one.high - p1, p2 - two.low) }
}

/**
 * Newcombe's hybrid score interval for p₁ − p₂, x₁ of n₁ against x₂ of n₂ (method 10): with (l, u)
 * each proportion's Wilson interval, from d − √((p₁ − l₁)² + (u₂ − p₂)²) to d + √((u₁ − p₁)² + (p₂ − l₂)²).
 * Undefined where either Wilson interval is.
 */
export const newcombe = (x1: number, n1: number, x2: number, n2: number, z = Z_95): Interval | undefined =>
  wilson(x1, n1, z) === undefined || wilson(x2, n2, z) === undefined ? undefined : newcombeBounds(x1, n1, x2, n2, z)

/** One side of a Welch test: its mean, its sample variance (n − 1 in the denominator) and its rows. */
export type Sample = Readonly<{ mean: number; variance: number; n: number }>

export type WelchTest = Readonly<{
  /** a.mean − b.mean. */
  difference: number
  standardError: number
  /** Welch–Satterthwaite degrees of freedom. */
  df: number
  t: number
  /** Two-sided p of the difference against 0. */
  p: number
  /** The interval for the difference at the confidence asked. */
  low: number
  high: number
}>

const isSample = ({ mean, variance, n }: Sample): boolean => Number.isFinite(mean) && isCount(variance) && Number.isFinite(n) && n >= 2

/**
 * Welch's test of a.mean − b.mean with its two-sided interval at `confidence`; undefined unless both
 * sides have 2 rows or more and finite figures, and some variance (with none, the t statistic is ∞/0).
 */
export const welch = (a: Sample, b: Sample, confidence = 0.95): WelchTest | undefined => {
  if (!(isSample(a) && isSample(b) && confidence > 0 && confidence < 1)) return undefined
  const va = a.variance / a.n
  const vb = b.variance / b.n
  const standardError = Math.sqrt(va + vb)
  if (!(standardError > 0)) return undefined
  const df = ((va + vb) * (va + vb)) / ((va * va) / (a.n - 1) + (vb * vb) / (b.n - 1))
  const difference = a.mean - b.mean
  const t = difference / standardError
  const half = studentTQuantile((1 + confidence) / 2, df) * standardError
  return { difference, standardError, df, t, p: studentTTwoSided(t, df), low: difference - half, high: difference + half }
}
