// The t distribution and its parts against scipy 1.10 (test/fixtures/rollout/scipy.json, which
// intervals.test.ts reads too) and against closed forms. Where scipy and this code differ by more
// than rounding, mpmath at 50 digits sides with this code: scipy 1.10's t.ppf is off by up to
// 2e-9 relative (t.ppf(0.6, 20)), its betainc(500, 0.5, 0.999) by 5e-13; hence the tolerances
// against the fixture, and the closed forms to hold the quantile to 1e-14.
//
// The fixture is written by this script, run with Debian's python3 (scipy 1.10), then formatted:
//   /usr/bin/python3 gen.py > test/fixtures/rollout/scipy.json && npx biome format --config-path=.ci --write test/fixtures/rollout
//
//   import json, math, scipy
//   from scipy import special, stats
//   z = lambda c: float(stats.norm.ppf((1 + c) / 2))
//   def wilson(k, n, c):
//       ci = stats.binomtest(k, n).proportion_ci(confidence_level=c, method='wilson')
//       return [float(ci.low), float(ci.high)]
//   def newcombe(x1, n1, x2, n2, c):  # Newcombe 1998, method 10, from scipy's Wilson intervals
//       (l1, u1), (l2, u2), p1, p2 = wilson(x1, n1, c), wilson(x2, n2, c), x1 / n1, x2 / n2
//       return [p1 - p2 - math.hypot(p1 - l1, u2 - p2), p1 - p2 + math.hypot(u1 - p1, p2 - l2)]
//   def welch(m1, v1, n1, m2, v2, n2, c):
//       t, p = stats.ttest_ind_from_stats(m1, math.sqrt(v1), n1, m2, math.sqrt(v2), n2, equal_var=False)
//       a, b = v1 / n1, v2 / n2
//       df = (a + b) ** 2 / (a * a / (n1 - 1) + b * b / (n2 - 1))
//       half = stats.t.ppf((1 + c) / 2, df) * math.sqrt(a + b)
//       return {'t': float(t), 'p': float(p), 'df': df, 'low': m1 - m2 - half, 'high': m1 - m2 + half}
//   print(json.dumps({
//       'scipy': scipy.__version__,
//       'betainc': [[a, b, x, float(special.betainc(a, b, x))] for a, b, x in [
//           (0.5, 0.5, 0.1), (0.5, 0.5, 0.9), (2, 3, 0.5), (1.5, 0.5, 0.3), (5, 0.5, 0.95), (50, 0.5, 0.99), (0.5, 50, 0.01),
//           (500, 0.5, 0.999), (20.25, 0.5, 0.6), (0.5, 7.5, 0.2), (3.5, 2.5, 0.9999)]],
//       'tcdf': [[t, df, float(stats.t.cdf(t, df))] for t, df in [
//           (-2, 1), (1.5, 1), (-40, 1), (0.1, 2), (-3, 3.7), (2.5, 7), (1, 12.5), (-1.96, 30), (4, 30), (-6, 100), (2, 1e3), (-2, 1e5), (8, 60)]],
//       'tppf': [[p, df, float(stats.t.ppf(p, df))] for p, df in [
//           (0.975, 1), (0.9995, 1), (0.975, 2), (0.025, 3), (0.975, 5.5), (0.9995, 9), (0.6, 20), (0.975, 120), (0.9995, 1e3), (0.001, 47.3)]],
//       'wilson': [[k, n, c, z(c), *wilson(k, n, c)] for k, n, c in [
//           (0, 10, 0.95), (10, 10, 0.95), (1, 1, 0.95), (5, 10, 0.95), (3, 300, 0.95), (56, 70, 0.95), (48, 80, 0.95), (7, 300, 0.999), (0, 381, 0.95)]],
//       'newcombe': [[x1, n1, x2, n2, c, z(c), *newcombe(x1, n1, x2, n2, c)] for x1, n1, x2, n2, c in [
//           (56, 70, 48, 80, 0.95), (9, 10, 3, 10, 0.95), (6, 7, 2, 7, 0.95), (5, 56, 0, 29, 0.95), (0, 10, 0, 20, 0.95), (10, 10, 0, 20, 0.95),
//           (180, 200, 195, 200, 0.95), (150, 200, 1900, 2000, 0.999)]],
//       'welch': [[m1, v1, n1, m2, v2, n2, c, welch(m1, v1, n1, m2, v2, n2, c)] for m1, v1, n1, m2, v2, n2, c in [
//           (1.2, 0.5, 200, 1.0, 0.4, 300, 0.95), (0.8, 0.25, 5, 0.5, 2.0, 40, 0.95), (3.0, 1.0, 2, 2.0, 1.0, 2, 0.95), (1.0, 0.0, 50, 1.1, 0.3, 50, 0.999),
//           (10.0, 4.0, 1000, 10.0, 9.0, 20, 0.95)]],
//   }, indent=1))
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import {
  continuedFraction,
  logBeta,
  logGamma,
  regularizedBeta,
  solveIncreasing,
  studentTCdf,
  studentTQuantile,
  studentTTwoSided,
} from '../../../../lib/tools/rollout/gates/distributions.js'

type Fixture = Readonly<{ scipy: string; betainc: number[][]; tcdf: number[][]; tppf: number[][] }>
const FIXTURE: Fixture = JSON.parse(readFileSync(new URL('../../../fixtures/rollout/scipy.json', import.meta.url), 'utf8'))

/** |actual − expected| within `relative` of expected. */
const near = (t: Test, actual: number, expected: number, relative: number, message: string): void => {
  t.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${message}: ${actual} against ${expected}`)
}

t.test('the fixture is what the script in this header writes, from scipy 1.10', async (t) => {
  t.match(FIXTURE.scipy, /^1\.10\./)
  t.equal(FIXTURE.betainc.length, 11)
  t.equal(FIXTURE.tcdf.length, 13)
  t.equal(FIXTURE.tppf.length, 10)
})

t.test('ln Γ against exact values: Γ(½) = √π, Γ(1) = Γ(2) = 1, Γ(5) = 24, Γ(10.5), Γ(10⁸)', async (t) => {
  near(t, logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-15, 'ln Γ(½)')
  t.ok(Math.abs(logGamma(1)) < 1e-15, `ln Γ(1) = ${logGamma(1)}`)
  t.ok(Math.abs(logGamma(2)) < 1e-15, `ln Γ(2) = ${logGamma(2)}`)
  near(t, logGamma(5), Math.log(24), 1e-15, 'ln Γ(5)')
  // Γ(10.5) = 19!! / 2^10 · √π = 654729075 / 1024 · √π
  near(t, logGamma(10.5), Math.log(654729075 / 1024) + 0.5 * Math.log(Math.PI), 1e-15, 'ln Γ(10.5)')
  // mpmath 1.3: loggamma(10**8)
  near(t, logGamma(1e8), 1742068066.103835, 1e-15, 'ln Γ(10⁸)')
})

t.test('ln B against exact values, either way round, and at sizes where three ln Γ would cancel', async (t) => {
  t.ok(Math.abs(logBeta(1, 1)) < 1e-14, `B(1, 1) = 1: ln ${logBeta(1, 1)}`)
  near(t, logBeta(0.5, 0.5), Math.log(Math.PI), 1e-15, 'B(½, ½) = π')
  near(t, logBeta(2, 3), Math.log(1 / 12), 1e-15, 'B(2, 3) = 1/12')
  t.equal(logBeta(3, 2), logBeta(2, 3), 'symmetric')
  // mpmath 1.3 at 40 digits: log(beta(5e7, 0.5)); as lgamma(a) + lgamma(b) − lgamma(a + b) in doubles it is off in the 8th digit.
  near(t, logBeta(5e7, 0.5), -8.29140183627151, 1e-14, 'ln B(5·10⁷, ½)')
})

t.test('a continued fraction: the golden ratio, 1/φ from a zero b₀, and one that never settles still returns', async (t) => {
  const phi = (1 + Math.sqrt(5)) / 2
  near(
    t,
    continuedFraction(1, () => [1, 1]),
    phi,
    1e-15,
    '1 + 1/(1 + 1/(1 + …))',
  )
  near(
    t,
    continuedFraction(0, () => [1, 1]),
    1 / phi,
    1e-15,
    '0 + 1/(1 + 1/(1 + …)), b₀ = 0 taken as tiny',
  )
  // √2 = 1 + 1/(2 + 1/(2 + …))
  near(
    t,
    continuedFraction(1, () => [1, 2]),
    Math.SQRT2,
    1e-15,
    '√2',
  )
  // 1 − 1/(1 − 1/(1 − …)) cycles through 0, ∞, 1 and never converges: it stops after its step limit.
  t.type(
    continuedFraction(1, () => [-1, 1]),
    'number',
  )
})

t.test('I_x(a, b) against scipy.special.betainc, on both sides of the switch, and at its ends', async (t) => {
  for (const [a, b, x, expected] of FIXTURE.betainc as [number, number, number, number][]) {
    near(t, regularizedBeta(x, a, b), expected, 1e-12, `I_${x}(${a}, ${b})`)
  }
  t.equal(regularizedBeta(0, 2, 3), 0)
  t.equal(regularizedBeta(-0.5, 2, 3), 0)
  t.equal(regularizedBeta(1, 2, 3), 1)
  t.equal(regularizedBeta(1.5, 2, 3), 1)
  // I_x(1, 1) = x, and I_x(a, 1) = x^a.
  near(t, regularizedBeta(0.3, 1, 1), 0.3, 1e-14, 'I_x(1, 1) = x')
  near(t, regularizedBeta(0.8, 3.5, 1), 0.8 ** 3.5, 1e-14, 'I_x(a, 1) = x^a')
  t.equal(regularizedBeta(1 - 1e-20, 2, 3, 1e-20), 1 - regularizedBeta(1e-20, 3, 2), '1 − x given exactly where x rounds to 1')
})

t.test('the t CDF against scipy.stats.t.cdf and the closed forms of 1 and 2 degrees of freedom', async (t) => {
  for (const [x, df, expected] of FIXTURE.tcdf as [number, number, number][]) near(t, studentTCdf(x, df), expected, 1e-11, `P(T(${df}) ≤ ${x})`)
  // Written so that nothing cancels: F₁(x) = atan(1/|x|)/π below 0, F₂(x) = 1/(s (s + |x|)) there, s = √(2 + x²).
  for (const x of [-30, -2, -0.5, 0.3, 1, 7.5]) {
    const s = Math.sqrt(2 + x * x)
    const lower = { cauchy: Math.atan(1 / Math.abs(x)) / Math.PI, two: 1 / (s * (s + Math.abs(x))) }
    near(t, studentTCdf(x, 1), x < 0 ? lower.cauchy : 1 - lower.cauchy, 1e-14, `Cauchy at ${x}`)
    near(t, studentTCdf(x, 2), x < 0 ? lower.two : 1 - lower.two, 1e-14, `ν = 2 at ${x}`)
  }
  t.equal(studentTCdf(0, 7), 0.5)
  t.equal(studentTCdf(Number.POSITIVE_INFINITY, 7), 1)
  t.equal(studentTCdf(Number.NEGATIVE_INFINITY, 7), 0)
  t.equal(studentTTwoSided(Number.NEGATIVE_INFINITY, 3), 0)
  near(t, studentTTwoSided(-2, 30), 2 * studentTCdf(-2, 30), 1e-15, 'two-sided p is twice a tail')
  near(t, studentTTwoSided(12.7062047361747, 1), 0.05, 1e-13, 'two-sided p of t(1)’s 97.5 % point')
})

t.test('the t quantile against scipy.stats.t.ppf, and to 1e-14 against the closed forms of 1 and 2 degrees of freedom', async (t) => {
  for (const [p, df, expected] of FIXTURE.tppf as [number, number, number][]) near(t, studentTQuantile(p, df), expected, 1e-8, `t(${df}) at ${p}`)
  t.equal(studentTQuantile(0.5, 1), 0)
  t.equal(studentTQuantile(0.5, 40), 0)
  // The Cauchy quantile tan(π (p − ½)) as −cot(π p) and cot(π (1 − p)): no tangent near its pole.
  for (const p of [0.001, 0.025, 0.3, 0.6, 0.975, 0.9995]) {
    near(t, studentTQuantile(p, 1), p < 0.5 ? -1 / Math.tan(Math.PI * p) : 1 / Math.tan(Math.PI * (1 - p)), 1e-14, `Cauchy at ${p}`)
    near(t, studentTQuantile(p, 2), (2 * p - 1) / Math.sqrt(2 * p * (1 - p)), 1e-14, `ν = 2 at ${p}`)
  }
  // The 95 % and 99.9 % points the gates use, as tables print them.
  t.equal(studentTQuantile(0.975, 30).toFixed(3), '2.042')
  t.equal(studentTQuantile(0.9995, 30).toFixed(3), '3.646')
})

t.test('a root of an increasing function to the last bit, inside and beyond the first bracket', async (t) => {
  t.equal(
    solveIncreasing((x) => x * x, 2),
    Math.SQRT2,
  )
  t.equal(
    solveIncreasing((x) => x * x, 0.25),
    0.5,
  )
  t.equal(
    solveIncreasing((x) => x * x, 0),
    0,
    'already reached at 0',
  )
  near(
    t,
    solveIncreasing((x) => Math.log1p(x), 10),
    Math.expm1(10),
    1e-15,
    'e¹⁰ − 1',
  )
})
