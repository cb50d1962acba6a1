// How often drift monitoring reports drift that is not there, and so how many bins a reference can
// afford for the rows it was built from. lib/drift/psi.ts's header gives the estimate: with n
// reference rows, m live rows and B bins, both samples from one distribution,
// PSI ≈ (1/n + 1/m) · χ²(B − 1), so one feature reaches a threshold τ by sampling alone with
// probability P(χ²(B − 1) > τ / (1/n + 1/m)).
//
// P(χ²(k) > x) is Q(k/2, x/2), the regularised upper incomplete gamma function, which for whole k
// has a closed form (Abramowitz and Stegun §26.4), with y = x/2:
//   k even:  Q = Σ e^−y · y^p / Γ(p + 1)             over p = 0, 1, …, k/2 − 1
//   k odd:   Q = erfc(√y) + Σ e^−y · y^p / Γ(p + 1)  over p = ½, 3/2, …, k/2 − 1
// Every term is positive, so nothing cancels, and each is taken from its logarithm, so no term
// underflows while it still counts (e^−y alone is 0 from y = 746). erfc(√y) is Q(½, y): from the
// power series of P(½, y) below y = 1.5, from the continued fraction of Q above it (Numerical
// Recipes §6.2), both to about 1e-15 relative against mpmath.

const LOG_SQRT_PI = 0.5 * Math.log(Math.PI)
/** Where a series or a continued fraction stops: its next step changes the result by less than this, relatively. */
const EPSILON = 1e-15

/** P(½, y) = erf(√y) by its power series, for 0 < y < 1.5: e^−y y^½ / Γ(½) · Σ y^n / (½ (3/2) … (½ + n)). */
const lowerHalf = (y: number): number => {
  let term = 2 // 1 / a, a = ½
  let sum = term
  for (let n = 1; term > sum * EPSILON; n++) {
    term *= y / (0.5 + n)
    sum += term
  }
  return sum * Math.exp(-y + 0.5 * Math.log(y) - LOG_SQRT_PI)
}

/** Q(½, y) = erfc(√y) by its continued fraction, for y ≥ 1.5, evaluated by Lentz's method. */
const upperHalf = (y: number): number => {
  let b = y + 0.5 // y + 1 − a
  let c = Number.POSITIVE_INFINITY
  let d = 1 / b
  let h = d
  let delta = 0
  for (let i = 1; Math.abs(delta - 1) > EPSILON; i++) {
    const an = -i * (i - 0.5)
    b += 2
    d = 1 / (an * d + b)
    c = b + an / c
    delta = d * c
    h *= delta
  }
  return h * Math.exp(-y + 0.5 * Math.log(y) - LOG_SQRT_PI)
}

/** erfc(√y) for y > 0. */
export const erfcOfRoot = (y: number): number => (y < 1.5 ? 1 - lowerHalf(y) : upperHalf(y))

/** P(χ²(k) > x), for k a whole number of degrees of freedom, 1 or more. */
export const chiSquareSurvival = (x: number, k: number): number => {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`degrees of freedom: expected a whole number from 1, got ${k}`)
  if (Number.isNaN(x)) throw new RangeError('x: expected a number, got NaN')
  if (x <= 0) return 1
  if (x === Number.POSITIVE_INFINITY) return 0
  const y = x / 2
  const logY = Math.log(y)
  const isOdd = k % 2 === 1
  let sum = isOdd ? erfcOfRoot(y) : 0
  // ln of e^−y · y^p / Γ(p + 1), from p = 0 (Γ(1) = 1) or p = ½ (Γ(3/2) = √π / 2), then p + 1 each step.
  let logTerm = isOdd ? -y + 0.5 * logY - (LOG_SQRT_PI - Math.LN2) : -y
  for (let p = isOdd ? 0.5 : 0; p <= k / 2 - 1; p++) {
    sum += Math.exp(logTerm)
    logTerm += logY - Math.log(p + 1)
  }
  // Rounding could carry a sum of terms that add up to 1 a hair past it.
  return Math.min(sum, 1)
}

export type FalseAlarmInputs = Readonly<{
  /** n: the rows the reference was built from. */
  referenceRows: number
  /** m: the live rows a check scores, at least SVC_DRIFT_MIN_SAMPLES. */
  liveRows: number
  /** τ: the PSI that counts as drift, SVC_DRIFT_MODERATE. */
  threshold: number
}>

/** The chance that one feature with `bins` bins (2 or more) reaches the threshold with no drift at all. */
export const falseAlarmChance = ({ referenceRows, liveRows, threshold }: FalseAlarmInputs, bins: number): number =>
  chiSquareSurvival(threshold / (1 / referenceRows + 1 / liveRows), bins - 1)

/**
 * The most bins, from 2 to `maxBins`, whose false-alarm chance is below `limit`; undefined when even
 * 2 bins reach it. The chance grows with the bins (χ²(k) is stochastically increasing in k).
 */
export const mostBinsBelow = (inputs: FalseAlarmInputs, limit: number, maxBins: number): number | undefined => {
  let bins = 1
  while (bins < maxBins && falseAlarmChance(inputs, bins + 1) < limit) bins++
  return bins < 2 ? undefined : bins
}

/**
 * The fewest reference rows that bring the false-alarm chance of `bins` bins below `limit`;
 * undefined when no number does, because the live rows alone already reach it. The chance falls as
 * the rows grow, so a bisection finds it.
 */
export const fewestRowsBelow = ({ liveRows, threshold }: Omit<FalseAlarmInputs, 'referenceRows'>, bins: number, limit: number): number | undefined => {
  const chance = (referenceRows: number): number => falseAlarmChance({ referenceRows, liveRows, threshold }, bins)
  if (chance(Number.POSITIVE_INFINITY) >= limit) return undefined
  let high = 1
  while (chance(high) >= limit) high *= 2
  let low = high / 2 // chance(low) ≥ limit, or low < 1
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2)
    if (chance(middle) < limit) high = middle
    else low = middle
  }
  return high
}
