import t from 'tap'
import { FeatureWindow, INITIAL_ROWS } from '../../lib/drift/window.js'

const rows = (...values: number[][]): Float64Array => Float64Array.from(values.flat())
/** The window's rows in slot order, as arrays. */
const held = (window: FeatureWindow): number[][] =>
  Array.from({ length: window.size }, (_, r) => Array.from(window.values.subarray(r * window.width, (r + 1) * window.width)))

t.test('keeps the last `capacity` rows, overwriting the oldest', async (t) => {
  const window = new FeatureWindow(2, 3)
  t.equal(window.size, 0)
  window.record(rows([1, 10], [2, 20]), 2)
  t.same(held(window), [
    [1, 10],
    [2, 20],
  ])
  window.record(rows([3, 30], [4, 40]), 2)
  t.equal(window.size, 3, 'full')
  t.same(
    held(window),
    [
      [4, 40],
      [2, 20],
      [3, 30],
    ],
    'row 1 was overwritten by row 4',
  )
  t.equal(window.total, 4)
  window.record(rows([5, 50]), 1)
  t.same(
    held(window).sort((a, b) => (a[0] as number) - (b[0] as number)),
    [
      [3, 30],
      [4, 40],
      [5, 50],
    ],
  )
})

t.test('reads only the rows asked for, and a batch larger than the window keeps its last rows', async (t) => {
  const window = new FeatureWindow(1, 4)
  window.record(rows([1], [2], [99]), 2)
  t.same(held(window), [[1], [2]], 'the third value of the array is beyond `rows`')
  window.record(rows([3], [4], [5], [6], [7], [8]), 6)
  t.same(held(window).flat().sort(), [5, 6, 7, 8])
  t.equal(window.total, 8)
  window.record(rows([9]), 1)
  t.same(held(window).flat().sort(), [6, 7, 8, 9], 'the ring continues where the big batch left it')
  window.record(rows(), 0)
  t.equal(window.size, 4, 'an empty batch changes nothing')
})

t.test('missing values are kept as NaN for the check to count', async (t) => {
  const window = new FeatureWindow(2, 2)
  window.record(rows([Number.NaN, 1]), 1)
  t.ok(Number.isNaN(window.values[0]))
})

t.test('refuses a shape it cannot hold', async (t) => {
  t.throws(() => new FeatureWindow(0, 10), /width must be a positive integer, is 0/)
  t.throws(() => new FeatureWindow(2, 1.5), /capacity must be a positive integer, is 1.5/)
})

t.test('recordAnswered keeps each row’s answer as its last value, NaN when there are none', async (t) => {
  const window = new FeatureWindow(3, 3)
  window.recordAnswered(Float64Array.of(1, 10, 2, 20), 2, Uint32Array.of(7, 8))
  window.recordAnswered(Float64Array.of(3, 30), 1, undefined)
  t.same(Array.from(window.values.subarray(0, 6)), [1, 10, 7, 2, 20, 8])
  t.same(Array.from(window.values.subarray(6, 8)), [3, 30])
  t.ok(Number.isNaN(window.values[8]), 'no answer: missing')
  window.recordAnswered(Float64Array.of(4, 40, 5, 50, 6, 60, 9, 90), 4, Float64Array.of(0.5, 1.5, 2.5, 3.5))
  t.equal(window.size, 3)
  t.equal(window.total, 7)
  t.same(
    [0, 1, 2].map((slot) => Array.from(window.values.subarray(slot * 3, slot * 3 + 3))).sort((a, b) => (a[0] as number) - (b[0] as number)),
    [
      [5, 50, 1.5],
      [6, 60, 2.5],
      [9, 90, 3.5],
    ],
    'the last three rows of a batch larger than the window, each with its own answer',
  )
})

t.test('a new window allocates a few rows and grows to its capacity only as rows come', async (t) => {
  const window = new FeatureWindow(5, 1000)
  t.equal(window.values.length, 5 * INITIAL_ROWS, 'not 1000 rows before the first')
  window.record(new Float64Array(5 * INITIAL_ROWS), INITIAL_ROWS)
  t.equal(window.values.length, 5 * INITIAL_ROWS, 'rows that fit do not grow it')
  window.record(new Float64Array(5), 1)
  t.equal(window.values.length, 10 * INITIAL_ROWS, 'doubled')
  window.record(new Float64Array(5 * 300), 300)
  t.equal(window.values.length, 5 * (INITIAL_ROWS + 1 + 300), 'a batch larger than the doubling gets what it needs')
  window.record(new Float64Array(5 * 2000), 2000)
  t.equal(window.values.length, 5 * 1000, 'never beyond the capacity')
  t.equal(new FeatureWindow(2, 3).values.length, 6, 'a window smaller than the first allocation is made full')
})

t.test('a grown window holds the rows a full-size one holds, in the same slots', async (t) => {
  const width = 3
  const capacity = 500
  const grown = new FeatureWindow(width, capacity)
  const full = new FeatureWindow(width, capacity, capacity)
  let seed = 7
  const next = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed
  }
  for (const rows of [1, 15, 1, 40, 3, 100, 200, 139, 2, 777, 5, 0, 499, 1]) {
    const features = Float64Array.from({ length: rows * (width - 1) }, () => next() / 2 ** 20)
    const answers = Float64Array.from({ length: rows }, () => next() % 3)
    grown.recordAnswered(features, rows, answers)
    full.recordAnswered(features, rows, answers)
    t.equal(grown.size, full.size)
    t.equal(grown.total, full.total)
    t.same(Array.from(grown.values.subarray(0, grown.size * width)), Array.from(full.values.subarray(0, full.size * width)), `after ${grown.total} rows`)
  }
  t.equal(grown.values.length, full.values.length, 'full by the end')
})
