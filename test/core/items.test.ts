import t from 'tap'
import { itemAt } from '../../lib/core/items.js'

t.test('itemAt reads the element at an index within the array, the first and the last included', async (t) => {
  const items = ['a', 'b', 'c'] as const
  t.equal(itemAt(items, 0), 'a')
  t.equal(itemAt(items, 1), 'b')
  t.equal(itemAt(items, 2), 'c')
})
