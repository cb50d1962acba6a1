// Student's t distribution, for the Welch test of the quality gate (intervals.ts): its CDF from the
// regularized incomplete beta function, and its quantile by bisection on the tail. Nothing here is on
// a request path: a rollout pass calls it a handful of times, so clarity wins over speed.
//
// The t CDF: with x = ν / (ν + t²), P(T ≤ t) = ½ I_x(ν/2, ½) for t ≤ 0, and 1 − ½ I_x(ν/2, ½) for
// t > 0 (Abramowitz and Stegun 26.5.27, 26.7.1). I_x(a, b) comes from its continued fraction
// (Numerical Recipes, 3rd ed., §6.4) on the side where it converges fast: x below (a + 1) / (a + b
// + 2), else through I_x(a, b) = 1 − I_{1−x}(b, a). ln Γ is Lanczos's approximation (g = 7, nine
// coefficients), about 1e-15 relative from ½ up. Checked against scipy 1.10 (betainc, t.cdf, t.ppf)
// in test/fixtures/rollout/scipy.json, and against closed forms. The CDF is good to about 1e-15
// relative for small ν; past t² ≈ 3 the fraction's first step cancels to about 1/ν, so the error
// grows with ν: 3e-12 at ν = 10⁵ and 3e-9 at 10⁸ (against mpmath), which no gate can tell.

const LANCZOS_G = 7
const LANCZOS_0 = 0.99999999999980993
const LANCZOS = [
  676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
  1.5056327351493116e-7,
] as const
const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI)
/** Where a continued fraction stops: its next step changes the value by less than this, relatively. */
const EPSILON = 1e-15
/** Lentz's stand-in for a zero denominator (Numerical Recipes §5.2): small, yet its reciprocal finite. */
const TINY = 1e-300
/**
 * More steps than any fraction here takes: the beta fraction of the t CDF takes at most 83, near the
 * switch of sides (t ≈ 1.76), measured over t from 0.01 to 50 and ν from 1 to 10⁸. A bound on a
 * runaway, not on a real evaluation.
 */
const MAX_STEPS = 10_000

/** ln of Lanczos's series A_g(x), the factor of Γ(x) = √(2π) L^(x − ½) e^−L A_g(x), L = x + g − ½. */
const logSeries = (x: number): number => Math.log(LANCZOS.reduce((sum, c, i) => sum + c / (x + i), LANCZOS_0))

/** ln Γ(x) for x ≥ ½, the only arguments here (ν/2 with ν ≥ 1, and ½). */
export const logGamma = (x: number): number => {
  const base = x + LANCZOS_G - 0.5
  return LOG_SQRT_2PI + (x - 0.5) * Math.log(base) - base + logSeries(x)
}

/**
 * ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b), for a, b ≥ ½, with the large powers of Lanczos's
 * form cancelled by hand: taken as three ln Γ, ν = 10⁸ would lose 8 digits to the cancellation of
 * terms near 10⁹ (measured against scipy: 1e-7 relative on the t CDF, this way 1e-14).
 */
export const logBeta = (a: number, b: number): number => {
  if (a < b) return logBeta(b, a)
  const lb = b + LANCZOS_G - 0.5
  return (
    LOG_SQRT_2PI -
    (LANCZOS_G - 0.5) +
    (b - 0.5) * Math.log(lb) -
    b * Math.log(a + lb) -
    (a - 0.5) * Math.log1p(b / (a + LANCZOS_G - 0.5)) +
    logSeries(a) +
    logSeries(b) -
    logSeries(a + b)
  )
}

const nonZero = (value: number): number => (Math.abs(value) < TINY ? TINY : value)

/**
 * b₀ + a₁ / (b₁ + a₂ / (b₂ + …)), `term(m)` giving [a_m, b_m], by the modified Lentz method. A zero
 * b₀ (every fraction here starts with one) and any zero denominator on the way are taken as TINY.
 */
export const continuedFraction = (b0: number, term: (m: number) => readonly [number, number]): number => {
  let f = nonZero(b0)
  let c = f
  let d = 0
  for (let m = 1; m <= MAX_STEPS; m++) {
    const [a, b] = term(m)
    d = 1 / nonZero(b + a * d)
    c = nonZero(b + a / c)
    const delta = c * d
    f *= delta
    if (Math.abs(delta - 1) < EPSILON) return f
  }
  return f
}

/**
 * I_x(a, b) by the fraction x^a y^b / (a B(a, b)) · 1 / (1 + d₁ / (1 + d₂ / (1 + …))), y = 1 − x, with
 * d_{2k+1} = −(a + k)(a + b + k) x / ((a + 2k)(a + 2k + 1)) and d_{2k} = k (b − k) x / ((a + 2k − 1)(a + 2k)).
 */
const betaFraction = (x: number, y: number, a: number, b: number): number => {
  // ln x and ln y from whichever of the two is small, exact as given: x = ν / (ν + t²) rounds to 1
  // long before t²/(ν + t²) loses a digit, and a·ln x with a = ν/2 would carry the rounding.
  const logX = x < 0.5 ? Math.log(x) : Math.log1p(-y)
  const logY = y < 0.5 ? Math.log(y) : Math.log1p(-x)
  const front = Math.exp(a * logX + b * logY - logBeta(a, b)) / a
  const d = (n: number): number => {
    const k = Math.floor(n / 2)
    return n % 2 === 1 ? (-(a + k) * (a + b + k) * x) / ((a + 2 * k) * (a + 2 * k + 1)) : (k * (b - k) * x) / ((a + 2 * k - 1) * (a + 2 * k))
  }
  return front * continuedFraction(0, (m) => [m === 1 ? 1 : d(m - 1), 1])
}

/**
 * The regularized incomplete beta function I_x(a, b), for a, b ≥ ½ and x in [0, 1]; `y`, 1 − x, may
 * be given exactly when x is near 1 (the t distribution's x = ν / (ν + t²) has y = t² / (ν + t²)).
 */
export const regularizedBeta = (x: number, a: number, b: number, y = 1 - x): number => {
  if (x <= 0) return 0
  if (y <= 0) return 1
  return x < (a + 1) / (a + b + 2) ? betaFraction(x, y, a, b) : 1 - betaFraction(y, x, b, a)
}

/** P(|T| ≥ |t|) for T of Student's t with ν ≥ 1 degrees of freedom: the two-sided p of a t statistic. */
export const studentTTwoSided = (t: number, df: number): number => {
  const t2 = t * t
  // t = ±∞: y = ∞/∞ is NaN, where the tail is 0.
  return t2 === Number.POSITIVE_INFINITY ? 0 : regularizedBeta(df / (df + t2), df / 2, 0.5, t2 / (df + t2))
}

/** P(T ≤ t) for T of Student's t with ν ≥ 1 degrees of freedom; t may be ±∞. */
export const studentTCdf = (t: number, df: number): number => {
  const tail = studentTTwoSided(t, df) / 2
  return t > 0 ? 1 - tail : tail
}

/**
 * The least x ≥ 0 at which an increasing `f` reaches `target` (0 when f(0) does), for target < f(∞):
 * bisection, from a bracket doubled until it holds the target, down to adjacent doubles, the higher
 * of which it returns. About 60 calls of `f`.
 */
export const solveIncreasing = (f: (x: number) => number, target: number): number => {
  if (f(0) >= target) return 0
  let low = 0
  let high = 1
  while (f(high) < target) {
    low = high
    high *= 2
  }
  for (;;) {
    const middle = (low + high) / 2
    if (middle <= low || middle >= high) return high
    if (f(middle) < target) low = middle
    else high = middle
  }
}

/**
 * The t with P(T ≤ t) = p, for p in (0, 1) and ν ≥ 1. Solved on the tail, min(p, 1 − p), not on the
 * CDF: 1 − tail near 1 would keep only the tail's first digits (t(2) at 0.001 off by 3e-14, measured).
 */
export const studentTQuantile = (p: number, df: number): number => {
  const t = solveIncreasing((x) => -studentTTwoSided(x, df), -2 * Math.min(p, 1 - p))
  return p < 0.5 ? -t : t
}
