// Filling the inputs a payload log left out (lib/tools/profile/fill.ts): values drawn from the
// model's reference distribution, by its proportions, within its bins and range.
import t from 'tap'
import type { Input } from '../../../lib/models/runtime.js'
import { FILL_SEED, filledNote, referenceDraw } from '../../../lib/tools/profile/fill.js'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'

const NUMBER: Input = { name: 'x', type: 'numerical' }
const draws = (count: number, draw: () => number | string): (number | string)[] => Array.from({ length: count }, draw)

t.test('a level is drawn by its proportion; a level of proportion 0 never', async (t) => {
  const input: Input = { name: 'c', type: 'categorical', levels: ['a', 'b', 'c'] }
  const values = draws(
    10_000,
    referenceDraw(input, { name: 'c', type: 'categorical', levels: ['a', 'b', 'c'], proportions: [0.25, 0, 0.75] }, mulberry32(FILL_SEED)),
  )
  const share = (level: string) => values.filter((v) => v === level).length / values.length
  t.ok(Math.abs(share('a') - 0.25) < 0.02, `a: ${share('a')}`)
  t.equal(share('b'), 0)
  t.ok(Math.abs(share('c') - 0.75) < 0.02, `c: ${share('c')}`)
})

t.test('a number is drawn within a bin by its proportion, the outer bins bounded by the range the rows spanned', async (t) => {
  const reference = { name: 'x', type: 'numerical', edges: [10, 20], proportions: [0.2, 0.5, 0.3], min: 5, max: 40 } as const
  const values = draws(10_000, referenceDraw(NUMBER, reference, mulberry32(1))) as number[]
  t.ok(
    values.every((v) => v >= 5 && v <= 40),
    'within min and max',
  )
  const share = (low: number, high: number) => values.filter((v) => v >= low && v < high).length / values.length
  t.ok(Math.abs(share(5, 10) - 0.2) < 0.02 && Math.abs(share(10, 20) - 0.5) < 0.02 && Math.abs(share(20, 41) - 0.3) < 0.02, 'by the proportions')
})

t.test(
  'a reference without its range bounds the outer bins by the nearest edge; one without edges draws its range; an integer input whole numbers',
  async (t) => {
    const edgesOnly = draws(1000, referenceDraw(NUMBER, { name: 'x', type: 'numerical', edges: [1, 2], proportions: [0.5, 0, 0.5] }, mulberry32(2)))
    t.same([...new Set(edgesOnly)].sort(), [1, 2], 'the outer bins collapse onto their edge')
    const single = draws(100, referenceDraw(NUMBER, { name: 'x', type: 'numerical', edges: [], proportions: [1], min: 3, max: 4 }, mulberry32(3))) as number[]
    t.ok(single.every((v) => v >= 3 && v <= 4))
    const nothing = draws(10, referenceDraw(NUMBER, { name: 'x', type: 'numerical', edges: [], proportions: [1] }, mulberry32(3)))
    t.same([...new Set(nothing)], [0], 'no edge and no range: 0')
    const onlyMax = draws(10, referenceDraw(NUMBER, { name: 'x', type: 'numerical', edges: [], proportions: [1], max: 7 }, mulberry32(3)))
    t.same([...new Set(onlyMax)], [7])
    const integer: Input = { name: 'n', type: 'numerical', datatype: 'INT64' }
    const whole = draws(
      100,
      referenceDraw(integer, { name: 'n', type: 'numerical', edges: [10], proportions: [0.5, 0.5], min: 0, max: 20 }, mulberry32(4)),
    ) as number[]
    t.ok(whole.every(Number.isInteger), 'INT64: whole numbers')
    const float: Input = { name: 'f', type: 'numerical', datatype: 'FP32' }
    t.notOk(
      draws(100, referenceDraw(float, { name: 'f', type: 'numerical', edges: [10], proportions: [0.5, 0.5], min: 0, max: 20 }, mulberry32(4))).every(
        Number.isInteger,
      ),
      'FP32: any number',
    )
  },
)

t.test('proportions that do not sum to 1 (rounded in a file) still draw a bin', async (t) => {
  const values = draws(100, referenceDraw(NUMBER, { name: 'x', type: 'numerical', edges: [1], proportions: [0, 0], min: 0, max: 2 }, mulberry32(5)))
  t.ok(
    values.every((v) => typeof v === 'number' && v >= 1 && v <= 2),
    'the last bin',
  )
})

t.test('what a tool says names the inputs, one or more', async (t) => {
  t.equal(
    filledNote(['a'], 'm'),
    "a: not in the payload log (SVC_PAYLOAD_LOG_EXCLUDE left it out); each row's value drawn from model m's reference distribution",
  )
  t.match(filledNote(['a', 'b'], 'm'), /^a, b: not in the payload log \(SVC_PAYLOAD_LOG_EXCLUDE left them out\)/)
})
