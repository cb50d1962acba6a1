// The order rows are replayed in, and the shift.
import t from 'tap'
import { LoadgenUsageError } from '../../../lib/tools/loadgen/errors.js'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'
import { createReplay, shiftedInputs, shiftRows, standardDeviation } from '../../../lib/tools/loadgen/replay.js'
import type { Row } from '../../../lib/tools/loadgen/rows.js'
import type { Input } from '../../../lib/models/runtime.js'

const INPUTS: readonly Input[] = [
  { name: 'x', type: 'numerical' },
  { name: 'y', type: 'numerical' },
  { name: 'colour', type: 'categorical', levels: ['red', 'green'] },
]
const ROWS: readonly Row[] = Array.from({ length: 7 }, (_, i) => ({ x: i, y: 10 * i, colour: i % 2 === 0 ? 'red' : 'green' }))

const take = (next: () => number, n: number): Row[] => Array.from({ length: n }, () => ROWS[next()] as Row)

t.test('the same seed replays the same rows in the same order; another seed another order', async (t) => {
  const a = take(createReplay(ROWS.length, mulberry32(3)), 30)
  const b = take(createReplay(ROWS.length, mulberry32(3)), 30)
  const c = take(createReplay(ROWS.length, mulberry32(4)), 30)
  t.same(a, b)
  t.notSame(
    a.map((row) => row['x']),
    c.map((row) => row['x']),
  )
})

t.test('each cycle sends every row once, in a fresh shuffle', async (t) => {
  const sent = take(createReplay(ROWS.length, mulberry32(9)), 5 * ROWS.length).map((row) => row['x'] as number)
  const cycles = Array.from({ length: 5 }, (_, k) => sent.slice(k * ROWS.length, (k + 1) * ROWS.length))
  for (const cycle of cycles) t.same([...cycle].sort(), [0, 1, 2, 3, 4, 5, 6], `cycle ${cycle.join(' ')}`)
  t.ok(
    cycles.some((cycle) => cycle.join() !== cycles[0]?.join()),
    'reshuffled: not the same order every cycle',
  )
  t.notSame(cycles[0], [0, 1, 2, 3, 4, 5, 6], 'shuffled, not in file order')
})

t.test("a shift moves the chosen inputs by K population standard deviations of the file's own values", async (t) => {
  const rows: Row[] = [
    { x: 1, y: 5, colour: 'red' },
    { x: 2, y: 5, colour: 'green' },
    { x: 3, y: 6, colour: 'red' },
    { x: 4, y: 6, colour: 'red' },
    { x: null, y: 7, colour: null },
  ]
  // x: 1..4, mean 2.5, population sd √1.25 (the sample sd, √(5/3), would move it further).
  t.equal(standardDeviation(rows, 'x'), Math.sqrt(1.25))
  const moved = shiftRows(rows, ['x'], 2, 'rows.csv')
  t.same(
    moved.map((row) => row['x']),
    [...[1, 2, 3, 4].map((x) => x + 2 * Math.sqrt(1.25)), null],
    'missing stays missing',
  )
  t.same(
    moved.map((row) => [row['y'], row['colour']]),
    rows.map((row) => [row['y'], row['colour']]),
    'the others unmoved',
  )
  t.equal(rows[0]?.['x'], 1, 'the rows read are not changed')
  t.equal(shiftRows(rows, ['x'], 0, 'rows.csv'), rows, 'no shift, no copy')
  const both = shiftRows(rows, ['x', 'y'], -1, 'rows.csv')
  t.equal(both[4]?.['y'], 7 - standardDeviation(rows, 'y'))
})

t.test('the inputs shifted: those named, else every numerical one', async (t) => {
  t.same(shiftedInputs(INPUTS, [], 1, 'm'), ['x', 'y'])
  t.same(shiftedInputs(INPUTS, ['y'], 1, 'm'), ['y'])
  t.same(shiftedInputs([INPUTS[2] as Input], [], 0, 'm'), [], 'nothing to shift is fine when nothing is shifted')
})

t.test('what cannot be shifted is a usage error that says why', async (t) => {
  const cases: Array<[() => unknown, string]> = [
    [() => shiftedInputs(INPUTS, ['height'], 1, 'm'), '--features names height, not an input of model m; its inputs are x, y, colour'],
    [() => shiftedInputs(INPUTS, ['colour'], 1, 'm'), '--features names colour, a categorical input: only numerical inputs can be shifted'],
    [() => shiftedInputs([INPUTS[2] as Input], [], 1.5, 'm'), '--shift 1.5: model m has no numerical input to shift'],
    [
      () => shiftRows([{ x: 2 }, { x: 2 }], ['x'], 1, 'flat.csv'),
      '--shift: x does not vary in flat.csv (one value, or none): a standard deviation of it is no distance',
    ],
    [
      () => shiftRows([{ x: null }], ['x'], 1, 'empty.csv'),
      '--shift: x does not vary in empty.csv (one value, or none): a standard deviation of it is no distance',
    ],
  ]
  for (const [run, message] of cases) {
    const error = t.throws(run, message) as Error
    t.type(error, LoadgenUsageError)
    t.equal(error.message, message)
  }
})
