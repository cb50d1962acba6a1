import t from 'tap'
import { mapLimited } from '../../../lib/core/schedule/limited.js'

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

t.test('results come in the items’ order, however the work finishes', async (t) => {
  const items = [5, 1, 4, 2, 3]
  const results = await mapLimited(items, 2, async (n) => {
    for (let i = 0; i < n; i++) await tick()
    return n * 10
  })
  t.same(results, [50, 10, 40, 20, 30])
})

t.test('never more than `limit` at once, and every item taken once', async (t) => {
  let running = 0
  let most = 0
  const seen: number[] = []
  await mapLimited(
    Array.from({ length: 20 }, (_, i) => i),
    3,
    async (i) => {
      running++
      most = Math.max(most, running)
      seen.push(i)
      await tick()
      running--
    },
  )
  t.equal(most, 3)
  t.same(
    seen,
    Array.from({ length: 20 }, (_, i) => i),
  )
})

t.test('fewer items than the limit, and none', async (t) => {
  t.same(await mapLimited(['a'], 8, async (s) => s.toUpperCase()), ['A'])
  t.same(await mapLimited([], 8, async () => 1), [])
})

t.test('a failure rejects the whole, as Promise.all does', async (t) => {
  await t.rejects(
    mapLimited([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('two')
      return n
    }),
    { message: 'two' },
  )
})
