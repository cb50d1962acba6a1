import t from 'tap'
import { createSeenSet, seenId } from '../../../lib/serving/feedback/seen.js'

t.test('an id is added once; the second add says it was seen', async (t) => {
  const seen = createSeenSet(4)
  t.equal(seen.add(7), true)
  t.equal(seen.add(7), false)
  t.equal(seen.has(7), true)
  t.equal(seen.has(8), false)
  t.equal(seen.size(), 1)
})

t.test('past its capacity the oldest id is forgotten first', async (t) => {
  const seen = createSeenSet(3)
  for (const id of [1, 2, 3, 4]) seen.add(id)
  t.same([1, 2, 3, 4].map(seen.has), [false, true, true, true])
  t.equal(seen.size(), 3)
  t.equal(seen.add(1), true, 'a forgotten id is new again')
  t.same([1, 2, 3, 4].map(seen.has), [true, false, true, true])
})

t.test('ids that collide in the table stay findable through evictions (backward-shift deletion)', async (t) => {
  // Capacity 8 makes a table of 16 slots: ids 16k + 3 all have home slot 3, and 19 wraps runs round the end.
  const seen = createSeenSet(8)
  const ids = [3, 19, 35, 51, 4, 15, 31, 47]
  for (const id of ids) seen.add(id)
  const model = new Set(ids)
  const order = [...ids]
  let next = 1000
  for (let round = 0; round < 200; round++) {
    const id = round % 3 === 0 ? 16 * next + 15 : round % 3 === 1 ? 16 * next + 3 : 16 * next + 4
    next++
    t.equal(seen.add(id), true)
    model.delete(order.shift() as number)
    model.add(id)
    order.push(id)
    for (const member of model) if (!seen.has(member)) t.fail(`lost ${member} at round ${round}`)
  }
  t.equal(seen.size(), 8)
  for (const gone of ids) t.equal(seen.has(gone), false)
})

t.test("a seen id is 48 bits of a tag, never 0 (the table's empty slot)", async (t) => {
  t.equal(seenId(Buffer.from([0, 0, 0, 0, 0, 0, 9]), 0), 1)
  t.equal(seenId(Buffer.from([1, 2, 3, 4, 5, 6, 7]), 0), 0x010203040506)
  t.equal(seenId(Buffer.from([255, 255, 255, 255, 255, 255]), 0), 2 ** 48 - 1)
})

t.test('the set grows as ids come: a large capacity takes no memory at start, and every id stays findable', async (t) => {
  const before = process.memoryUsage().arrayBuffers
  const seen = createSeenSet(100_000_000)
  t.ok(process.memoryUsage().arrayBuffers - before < 1 << 20, 'under 1 MiB for the largest SVC_FEEDBACK_SEEN, not 2.4 GB')
  const ids = Array.from({ length: 5000 }, (_, i) => 1 + i * 7919)
  t.ok(
    ids.every((id) => seen.add(id)),
    'each id is new',
  )
  t.equal(seen.size(), 5000)
  t.ok(ids.every(seen.has), 'each id found after the table doubled')
  t.equal(seen.add(ids[0] as number), false)
  t.equal(seen.has(2), false)
})

t.test('a set grown to its capacity forgets the oldest id first', async (t) => {
  const seen = createSeenSet(1500)
  for (let id = 1; id <= 1600; id++) seen.add(id)
  t.equal(seen.size(), 1500)
  t.same([1, 100, 101, 1600].map(seen.has), [false, false, true, true])
})
