import t from 'tap'
import { nextSlice, SLICE_MS, sliceElapsed } from '../../../lib/core/schedule/slices.js'

t.test('a slice has run its length once SLICE_MS have passed since its start', async (t) => {
  const start = performance.now()
  t.notOk(sliceElapsed(start), 'not at its start')
  t.ok(sliceElapsed(start - SLICE_MS - 1), 'past its length')
  t.ok(SLICE_MS <= 5, 'a slice is a few milliseconds: a stall of one is what a waiting request sees')
})

t.test('nextSlice is a turn of the loop, not a microtask: what was queued before it runs first', async (t) => {
  const order: string[] = []
  setImmediate(() => order.push('queued before'))
  void Promise.resolve().then(() => order.push('microtask'))
  const before = performance.now()
  const start = await nextSlice()
  order.push('next slice')
  t.same(order, ['microtask', 'queued before', 'next slice'])
  t.ok(start >= before, 'the new start is read after the turn')
})

t.test('between two slices of busy work a timer that fell due runs: a waiting request waits a slice or two', async (t) => {
  let timerRan = false
  setTimeout(() => (timerRan = true), 1)
  for (let slice = 0; slice < 2; slice++) {
    const begin = performance.now()
    while (performance.now() - begin < 3) {}
    await nextSlice()
  }
  t.ok(timerRan)
})
