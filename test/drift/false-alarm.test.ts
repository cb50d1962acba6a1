import t, { type Test } from 'tap'
import { chiSquareSurvival, erfcOfRoot, falseAlarmChance, fewestRowsBelow, mostBinsBelow } from '../../lib/drift/false-alarm.js'

/** |actual − expected| within `relative` of expected. */
const near = (t: Test, actual: number, expected: number, relative: number, message: string): void => {
  t.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${message}: ${actual} against ${expected}`)
}

t.test('erfc(√y) against published values, on both sides of the switch from series to continued fraction', async (t) => {
  // erfc(0.5), erfc(1), erfc(2), erfc(3) and erfc(5) as published, the rest from mpmath 1.3; each the nearest double.
  for (const [y, erfc] of [
    [0.000001, 0.9988716212090307],
    [0.25, 0.4795001221869535],
    [1, 0.15729920705028513],
    [1.4999999, 0.08326452694223974],
    [1.5, 0.0832645166635504],
    [4, 0.004677734981047266],
    [9, 2.209049699858544e-5],
    [25, 1.537459794428035e-12],
  ] as const) {
    near(t, erfcOfRoot(y), erfc, 1e-14, `erfc(√${y})`)
  }
  t.equal(erfcOfRoot(1e-300), 1, 'erfc(0⁺) = 1')
  t.equal(erfcOfRoot(800), 0, 'past the smallest double, 0')
})

t.test('P(χ²(k) > x) against values computed to 40 digits (mpmath 1.3 gammainc, regularised), each the nearest double', async (t) => {
  for (const [x, k, expected] of [
    [3.841458820694124, 1, 0.05000000000000006],
    [6.634896601021213, 1, 0.010000000000000014],
    [1, 1, 0.3173105078629141],
    [0.001, 1, 0.9747728793699604],
    [50, 1, 1.537459794428035e-12],
    [7.814727903251178, 3, 0.05000000000000004],
    [200, 3, 4.2185411071920426e-43],
    [11.54, 3, 0.009137123640160904],
    [11.54, 4, 0.021120758370897014],
    [13.127, 9, 0.15694335214926733],
    [1000, 999, 0.48513148927490146],
    [1000, 1000, 0.49405285382923964],
    [1400, 1000, 7.032145641828589e-16],
    [2000, 999, 2.924923149305196e-69],
  ] as const) {
    near(t, chiSquareSurvival(x, k), expected, 1e-12, `P(χ²(${k}) > ${x})`)
  }
})

t.test('the closed forms of two and four degrees of freedom: e^−y and e^−y (1 + y)', async (t) => {
  near(t, chiSquareSurvival(11.5, 2), Math.exp(-5.75), 1e-15, 'P(χ²(2) > 11.5) = e^−5.75')
  for (const x of [0.01, 1, 7.5, 40, 300]) near(t, chiSquareSurvival(x, 4), Math.exp(-x / 2) * (1 + x / 2), 1e-14, `P(χ²(4) > ${x})`)
})

t.test('the edges: nothing is above +∞, everything above 0; degrees of freedom are whole and positive', async (t) => {
  t.equal(chiSquareSurvival(0, 3), 1)
  t.equal(chiSquareSurvival(-2, 2), 1)
  t.equal(chiSquareSurvival(Number.POSITIVE_INFINITY, 7), 0)
  t.ok(chiSquareSurvival(1e-9, 5) <= 1, 'never above 1')
  t.throws(() => chiSquareSurvival(1, 0), { name: 'RangeError', message: 'degrees of freedom: expected a whole number from 1, got 0' })
  t.throws(() => chiSquareSurvival(1, 2.5), RangeError)
  t.throws(() => chiSquareSurvival(Number.NaN, 2), { message: 'x: expected a number, got NaN' })
})

t.test('more degrees of freedom, a larger tail at the same x', async (t) => {
  let previous = 0
  for (let k = 1; k <= 40; k++) {
    const tail = chiSquareSurvival(20, k)
    t.ok(tail > previous, `k = ${k}`)
    previous = tail
  }
})

t.test("the figures of lib/drift/psi.ts's header and README's Drift section", async (t) => {
  const at = (referenceRows: number, liveRows: number, bins: number): number => falseAlarmChance({ referenceRows, liveRows, threshold: 0.1 }, bins)
  t.equal(at(150, 500, 3).toFixed(3), '0.003', 'iris, 3 bins, 500 live rows: 0.3 %')
  t.equal((1 - (1 - at(150, 500, 3)) ** 4).toFixed(3), '0.012', 'about 1.2 % for its four features')
  t.equal(at(150, 150, 3).toFixed(3), '0.024', '2.4 % at 150 live rows')
  t.equal(at(150, 150, 4).toFixed(3), '0.058', 'and 5.8 % with four bins')
  t.equal(at(392, 500, 10).toFixed(3), '0.009', 'cars, deciles: 0.9 %')
  t.equal(at(178, 500, 10).toFixed(3), '0.157', '10 bins on 178 rows: 15.7 %, a near-certain alarm over 13 features')
})

t.test('the most bins below a chance: the largest count under it, capped, or none', async (t) => {
  const inputs = { referenceRows: 178, liveRows: 500, threshold: 0.1 }
  t.equal(mostBinsBelow(inputs, 0.01, 1000), 4)
  t.ok(falseAlarmChance(inputs, 4) < 0.01 && falseAlarmChance(inputs, 5) >= 0.01, '4 is under 1 %, 5 is not')
  t.equal(mostBinsBelow({ ...inputs, referenceRows: 150 }, 0.01, 1000), 4)
  t.equal(mostBinsBelow({ ...inputs, referenceRows: 1e6 }, 0.01, 12), 12, 'at most maxBins')
  t.equal(mostBinsBelow({ ...inputs, referenceRows: 20 }, 0.01, 1000), undefined, 'even 2 bins are too many for 20 rows')
})

t.test('the fewest rows below a chance, or none when the live rows alone reach it', async (t) => {
  const live = { liveRows: 500, threshold: 0.1 }
  t.equal(fewestRowsBelow(live, 2, 0.01), 77)
  const chance = (referenceRows: number): number => falseAlarmChance({ ...live, referenceRows }, 2)
  t.ok(chance(77) < 0.01 && chance(76) >= 0.01, '77 rows are under 1 %, 76 are not')
  t.equal(fewestRowsBelow(live, 2, 0.9), 1, 'a single row, when that is enough')
  t.equal(fewestRowsBelow({ liveRows: 10, threshold: 0.1 }, 2, 0.01), undefined, 'PSI over 10 live rows crosses 0.1 too often, whatever the reference')
})
