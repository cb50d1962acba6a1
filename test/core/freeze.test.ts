import t from 'tap'
import { deepFreeze } from '../../lib/core/freeze.js'

t.test('deepFreeze freezes a value and everything reachable from it, and returns it', async (t) => {
  const value = { a: { b: [1, { c: 'x' }] }, d: [[2]] }
  t.equal(deepFreeze(value), value)
  for (const part of [value, value.a, value.a.b, value.a.b[1], value.d, value.d[0]]) t.ok(Object.isFrozen(part))
  t.throws(() => {
    ;(value.a.b[1] as { c: string }).c = 'y'
  }, TypeError)
})

t.test('primitives come back as they are', async (t) => {
  for (const value of [1, 'x', null, undefined, true]) t.equal(deepFreeze(value), value)
})

t.test('a URL is left alone: freezing it would not stop its setters', async (t) => {
  const config = { store: new URL('http://example.com/models/') }
  deepFreeze(config)
  t.ok(Object.isFrozen(config))
  t.notOk(Object.isFrozen(config.store))
  t.equal(config.store.href, 'http://example.com/models/', 'still a working URL')
})

t.test('what is already frozen is not walked again: a cycle ends, a shared constant is visited once', async (t) => {
  const cyclic: { self?: unknown; list: unknown[] } = { list: [] }
  cyclic.self = cyclic
  cyclic.list.push(cyclic)
  t.equal(deepFreeze(cyclic), cyclic)
  t.ok(Object.isFrozen(cyclic) && Object.isFrozen(cyclic.list))
  // A frozen object is taken as done: what it holds is its owner's business.
  const inner = { x: 1 }
  const shared = Object.freeze({ inner })
  deepFreeze({ shared })
  t.notOk(Object.isFrozen(inner))
})
