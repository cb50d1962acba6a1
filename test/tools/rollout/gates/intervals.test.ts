// Wilson, Newcombe and Welch against scipy 1.10 (test/fixtures/rollout/scipy.json, written by the
// script in distributions.test.ts's header: binomtest(k, n).proportion_ci(method='wilson'), method 10
// composed from those, ttest_ind_from_stats(equal_var=False)), against Newcombe's own worked
// examples, and at the edges where each refuses to make an interval.
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { newcombe, welch, wilson, wilsonRowsToExclude, Z_95, Z_999 } from '../../../../lib/tools/rollout/gates/intervals.js'

type WelchExpected = Readonly<{ t: number; p: number; df: number; low: number; high: number }>
type Fixture = Readonly<{ wilson: number[][]; newcombe: number[][]; welch: [number, number, number, number, number, number, number, WelchExpected][] }>
const FIXTURE: Fixture = JSON.parse(readFileSync(new URL('../../../fixtures/rollout/scipy.json', import.meta.url), 'utf8'))

const close = (t: Test, actual: number | undefined, expected: number, absolute: number, message: string): void => {
  t.ok(actual !== undefined && Math.abs(actual - expected) <= absolute, `${message}: ${actual} against ${expected}`)
}

t.test("Wilson's interval against scipy's binomtest, at scipy's exact z", async (t) => {
  t.equal(FIXTURE.wilson.length, 9)
  for (const [k, n, confidence, z, low, high] of FIXTURE.wilson as [number, number, number, number, number, number][]) {
    const interval = wilson(k, n, z)
    close(t, interval?.low, low, 1e-14, `${k} of ${n} at ${confidence}, low`)
    close(t, interval?.high, high, 1e-14, `${k} of ${n} at ${confidence}, high`)
  }
})

t.test("z is 1.96 for 95 % and 3.29 for 99.9 %, scipy's norm.ppf rounded", async (t) => {
  const z = (confidence: number) => FIXTURE.wilson.find((row) => row[2] === confidence)?.[3] ?? Number.NaN
  t.equal(Z_95, 1.96)
  t.equal(Z_999, 3.29)
  t.ok(Math.abs(Z_95 - z(0.95)) < 5e-5, `${Z_95} against ${z(0.95)}`)
  t.ok(Math.abs(Z_999 - z(0.999)) < 6e-4, `${Z_999} against ${z(0.999)}`)
})

t.test("Wilson's interval: 1.96 by default, 0 and 1 exactly at the ends, never past them", async (t) => {
  t.same(wilson(5, 10), wilson(5, 10, 1.96))
  const none = wilson(0, 381)
  t.equal(none?.low, 0)
  // At 0 successes the upper bound is z² / (n + z²): under 1 % from 381 rows.
  close(t, none?.high, Z_95 ** 2 / (381 + Z_95 ** 2), 1e-15, 'z² / (n + z²)')
  t.ok((none?.high ?? 1) < 0.01)
  t.ok((wilson(0, 380)?.high ?? 0) > 0.01)
  t.equal(wilson(10, 10)?.high, 1)
  t.ok((wilson(7, 300, Z_999)?.low ?? 1) < (wilson(7, 300)?.low ?? 0), 'a 99.9 % interval is wider')
  // The interval depends on n and z only through p, z²/n: 2.5 of 10 at z is 5 of 20 at z√2.
  close(t, wilson(2.5, 10)?.low, wilson(5, 20, Z_95 * Math.SQRT2)?.low ?? Number.NaN, 1e-15, 'fractional counts, as increase() gives')
})

t.test('Wilson refuses what is no proportion: no rows, a count out of range, a NaN, ±∞, a bad z', async (t) => {
  for (const [successes, n, z] of [
    [0, 0, Z_95],
    [1, 0, Z_95],
    [11, 10, Z_95],
    [-1, 10, Z_95],
    [Number.NaN, 10, Z_95],
    [1, Number.NaN, Z_95],
    [1, Number.POSITIVE_INFINITY, Z_95],
    [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, Z_95],
    [1, 10, 0],
    [1, 10, Number.NaN],
    [1, 10, Number.POSITIVE_INFINITY],
  ]) {
    t.equal(wilson(successes as number, n as number, z as number), undefined, `${successes} of ${n}, z = ${z}`)
  }
})

t.test('the rows at which a Wilson interval excludes a limit are where it does', async (t) => {
  // At 0 of n against 1 %: n > 1.96² · 0.01 · 0.99 / 0.01² = 380.3.
  close(t, wilsonRowsToExclude(0, 0.01), 380.3184, 1e-4, '0 against 1 %')
  for (const [p, limit] of [
    [0, 0.01],
    [0.03, 0.02],
    [0.2, 0.05],
    [0.04, 0.05],
  ]) {
    const n = wilsonRowsToExclude(p as number, limit as number)
    const before = wilson((p as number) * n * 0.99, n * 0.99)
    const after = wilson((p as number) * n * 1.01, n * 1.01)
    t.ok(before !== undefined && before.low <= (limit as number) && (limit as number) <= before.high, `${p} against ${limit}: still inside just before ${n}`)
    t.ok(after !== undefined && (after.low > (limit as number) || after.high < (limit as number)), `${p} against ${limit}: outside just after`)
  }
  t.equal(wilsonRowsToExclude(0.05, 0.05), Number.POSITIVE_INFINITY, 'a share on the limit never leaves it')
})

t.test("Newcombe's method 10 against the worked examples of his Table II (1998), to the 4 places printed", async (t) => {
  for (const [x1, n1, x2, n2, low, high] of [
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [0, 10, 0, 10, -0.2775, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
    [10, 10, 0, 10, 0.6075, 1],
  ] as const) {
    const interval = newcombe(x1, n1, x2, n2)
    t.equal(interval?.low.toFixed(4), low.toFixed(4), `${x1}/${n1} − ${x2}/${n2}, low`)
    t.equal(interval?.high.toFixed(4), high.toFixed(4), `${x1}/${n1} − ${x2}/${n2}, high`)
  }
})

t.test("Newcombe's interval against one composed from scipy's Wilson intervals", async (t) => {
  t.equal(FIXTURE.newcombe.length, 8)
  for (const [x1, n1, x2, n2, confidence, z, low, high] of FIXTURE.newcombe as [number, number, number, number, number, number, number, number][]) {
    const interval = newcombe(x1, n1, x2, n2, z)
    close(t, interval?.low, low, 1e-14, `${x1}/${n1} − ${x2}/${n2} at ${confidence}, low`)
    close(t, interval?.high, high, 1e-14, `${x1}/${n1} − ${x2}/${n2} at ${confidence}, high`)
  }
  t.equal(newcombe(1, 0, 5, 10), undefined, 'no rows on one side')
  t.equal(newcombe(5, 10, Number.NaN, 10), undefined, 'a NaN on the other')
})

t.test("Welch's test against scipy's ttest_ind_from_stats, with the interval from t.ppf", async (t) => {
  t.equal(FIXTURE.welch.length, 5)
  for (const [m1, v1, n1, m2, v2, n2, confidence, expected] of FIXTURE.welch) {
    const test = welch({ mean: m1, variance: v1, n: n1 }, { mean: m2, variance: v2, n: n2 }, confidence)
    const name = `${m1} (${v1}, ${n1}) − ${m2} (${v2}, ${n2}) at ${confidence}`
    close(t, test?.difference, m1 - m2, 1e-15, `${name}, difference`)
    close(t, test?.df, expected.df, 1e-12 * expected.df, `${name}, df`)
    close(t, test?.t, expected.t, 1e-13, `${name}, t`)
    close(t, test?.p, expected.p, 1e-13, `${name}, p`)
    // scipy 1.10's t.ppf is off by up to 2e-9 relative (distributions.test.ts).
    close(t, test?.low, expected.low, 1e-9, `${name}, low`)
    close(t, test?.high, expected.high, 1e-9, `${name}, high`)
    close(t, test?.standardError, Math.sqrt(v1 / n1 + v2 / n2), 1e-15, `${name}, standard error`)
  }
  t.same(welch({ mean: 1, variance: 1, n: 10 }, { mean: 0, variance: 1, n: 10 }), welch({ mean: 1, variance: 1, n: 10 }, { mean: 0, variance: 1, n: 10 }, 0.95))
})

t.test("Welch's test refuses fewer than 2 rows a side, no spread at all, NaN, ±∞ and a confidence outside (0, 1)", async (t) => {
  const good = { mean: 1, variance: 0.5, n: 30 }
  for (const [name, a, b, confidence] of [
    ['1 row', { mean: 1, variance: 0, n: 1 }, good, 0.95],
    ['1 row on the other side', good, { mean: 1, variance: 0, n: 1 }, 0.95],
    ['no spread on either side', { mean: 1, variance: 0, n: 30 }, { mean: 2, variance: 0, n: 30 }, 0.95],
    ['a NaN mean', { mean: Number.NaN, variance: 0.5, n: 30 }, good, 0.95],
    ['an infinite mean', { mean: Number.POSITIVE_INFINITY, variance: 0.5, n: 30 }, good, 0.95],
    ['a negative variance', { mean: 1, variance: -0.5, n: 30 }, good, 0.95],
    ['a NaN variance', good, { mean: 1, variance: Number.NaN, n: 30 }, 0.95],
    ['infinitely many rows', good, { mean: 1, variance: 0.5, n: Number.POSITIVE_INFINITY }, 0.95],
    ['confidence 1', good, good, 1],
    ['confidence 0', good, good, 0],
  ] as const) {
    t.equal(welch(a, b, confidence), undefined, name)
  }
})
