// The bounded queue that holds work after a reply: first in, first out, full at capacity, and
// reusable across wrap-around.
import t from 'tap'
import { createRing } from '../../lib/core/ring.js'

t.test('items come out in the order they went in, across the wrap', async (t) => {
  const ring = createRing<number>(3)
  t.equal(ring.size, 0)
  t.ok(ring.put(1))
  t.ok(ring.put(2))
  t.equal(ring.take(), 1)
  t.ok(ring.put(3))
  t.ok(ring.put(4), 'wraps into the freed slot')
  t.equal(ring.size, 3)
  t.same([ring.take(), ring.take(), ring.take()], [2, 3, 4])
  t.equal(ring.size, 0)
})

t.test('a full ring refuses and keeps what it holds', async (t) => {
  const ring = createRing<string>(2)
  t.ok(ring.put('a'))
  t.ok(ring.put('b'))
  t.notOk(ring.put('c'))
  t.equal(ring.size, 2)
  t.equal(ring.take(), 'a')
  t.equal(ring.take(), 'b')
})
