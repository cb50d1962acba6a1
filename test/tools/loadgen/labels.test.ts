// --label-noise: the share of labels made wrong, how, and that a seed repeats it.
import t from 'tap'
import { drawNoise, noisyTruth, REGRESSION_NOISE, type LabelColumn, type Truth } from '../../../lib/tools/loadgen/labels.js'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'

const SPECIES: LabelColumn = { name: 'species', classes: ['setosa', 'versicolor', 'virginica'], namedBy: "the model's output" }
const MPG: LabelColumn = { name: 'miles_per_gallon', classes: undefined, namedBy: "the model's output" }

const sent = (label: LabelColumn, noise: number, seed: number, truths: readonly Truth[]): Truth[] => {
  const random = mulberry32(seed)
  return truths.map((truth) => noisyTruth(label, truth, drawNoise(random), noise))
}

const TRUTHS: readonly Truth[] = Array.from({ length: 3000 }, (_, i) => SPECIES.classes?.[i % 3] as string)
const VALUES: readonly Truth[] = Array.from({ length: 3000 }, (_, i) => 10 + (i % 30))

t.test('no noise sends the truth, whatever was drawn', async (t) => {
  t.same(
    TRUTHS.map((truth) => noisyTruth(SPECIES, truth, { wrong: 0, how: 0 }, 0)),
    TRUTHS,
  )
  t.same(sent(MPG, 0, 1, VALUES), VALUES)
})

t.test('each label draws twice, whatever its share: the labels wrong at a share are among those wrong at a larger one', async (t) => {
  let draws = 0
  drawNoise(() => {
    draws++
    return 0.5
  })
  t.equal(draws, 2)
  const low = sent(SPECIES, 0.1, 11, TRUTHS)
  const high = sent(SPECIES, 0.3, 11, TRUTHS)
  const wrongAt = (labels: readonly Truth[]) => labels.flatMap((label, i) => (label !== TRUTHS[i] ? [i] : []))
  t.ok(wrongAt(low).length > 0 && wrongAt(low).every((i) => high[i] === low[i]), 'every label wrong at 0.1 is wrong at 0.3, and the same')
  t.ok(wrongAt(high).length > wrongAt(low).length)
})

t.test("a classifier's labels: a share P becomes one of the other classes, each as likely; P = 1 makes every one wrong", async (t) => {
  const all = sent(SPECIES, 1, 7, TRUTHS)
  t.ok(
    all.every((label, i) => label !== TRUTHS[i] && SPECIES.classes?.includes(label as string)),
    'every label wrong, and a class of the model',
  )
  for (const from of SPECIES.classes ?? []) {
    const to = all.filter((_, i) => TRUTHS[i] === from)
    const first = to.filter((label) => label === to[0]).length
    // 1000 labels of each class, split between the two others: 500 each, ± 4 sd (sd ≈ 15.8).
    t.ok(Math.abs(first - 500) < 64, `${from}: ${first} of ${to.length} to ${to[0]}, the rest to the third`)
  }
  const some = sent(SPECIES, 0.3, 7, TRUTHS)
  const wrong = some.filter((label, i) => label !== TRUTHS[i]).length
  // 3000 draws at 0.3: 900 ± 4 sd (sd ≈ 25).
  t.ok(Math.abs(wrong - 900) < 100, `${wrong} of 3000 wrong at 0.3`)
  t.same(sent(SPECIES, 0.3, 7, TRUTHS), some, 'the same seed, the same labels')
  t.notSame(sent(SPECIES, 0.3, 8, TRUTHS), some, 'another seed, other labels')
})

t.test("a regressor's truths: a share P moved by REGRESSION_NOISE of itself, up or down", async (t) => {
  const all = sent(MPG, 1, 3, VALUES)
  const up = all.filter((value, i) => value === (VALUES[i] as number) * (1 + REGRESSION_NOISE)).length
  const down = all.filter((value, i) => value === (VALUES[i] as number) * (1 - REGRESSION_NOISE)).length
  t.equal(up + down, 3000, 'every truth moved, by exactly that share')
  t.ok(Math.abs(up - 1500) < 110, `${up} up, ${down} down`)
  const some = sent(MPG, 0.3, 3, VALUES)
  const moved = some.filter((value, i) => value !== VALUES[i]).length
  t.ok(Math.abs(moved - 900) < 100, `${moved} of 3000 moved at 0.3`)
  t.same(sent(MPG, 0.3, 3, VALUES), some, 'the same seed, the same truths')
})
