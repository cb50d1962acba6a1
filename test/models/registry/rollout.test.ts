// The split itself (lib/models/registry/rollout.ts): a key's point is fixed and spread evenly, a
// share is a probability without a key, and a slot routes by both.
import t from 'tap'
import { isInShare, keyPoint, prefixState, routeOf } from '../../../lib/models/registry/rollout.js'
import { NO_ROLLOUT, type ModelSlot, type ServedModel } from '../../../lib/models/registry/state.js'

const build = (version: string): ServedModel => ({ name: 'iris', version }) as unknown as ServedModel
const [v1, v2] = [build('1'), build('2')]
const slot = (percent: number | undefined): ModelSlot =>
  ({
    defaultModel: v1,
    rollout: percent === undefined ? NO_ROLLOUT : { canary: { served: v2, percent }, shadow: undefined },
  }) as unknown as ModelSlot

/** FNV-1a 32 then MurmurHash3's fmix32, written out from their definitions with BigInt, as a reference. */
const reference = (key: string): number => {
  const M = 0xffffffffn
  let h = 0x811c9dc5n
  for (const unit of key.split('').map((c) => BigInt(c.charCodeAt(0)))) h = ((h ^ unit) * 0x01000193n) & M
  h = ((h ^ (h >> 16n)) * 0x85ebca6bn) & M
  h = ((h ^ (h >> 13n)) * 0xc2b2ae35n) & M
  h ^= h >> 16n
  return (Number(h) / 2 ** 32) * 100
}

t.test("a key's point is a fixed hash of it, the same on every call and every host, in [0, 100), spread evenly", async (t) => {
  for (const key of ['', 'a', 'user-42', 'é-ü-√', 'x'.repeat(300)]) t.equal(keyPoint(key), reference(key), JSON.stringify(key).slice(0, 20))
  const logState = prefixState('log:')
  for (const key of ['', 'user-42']) t.equal(keyPoint(key, logState), reference(`log:${key}`), 'after a prefix: the point of prefix + key')
  const buckets = new Array<number>(10).fill(0)
  let outside = 0
  for (let i = 0; i < 100_000; i++) {
    const point = keyPoint(`session-${i}`)
    if (!(point >= 0 && point < 100)) outside++
    buckets[Math.floor(point / 10)]!++
  }
  t.equal(outside, 0)
  // Binomial(10⁵, 0.1): sd 95, so ±500 is over 5 sd.
  t.ok(
    buckets.every((n) => n > 9_500 && n < 10_500),
    `sequential keys spread evenly over the tenths: ${buckets.join(' ')}`,
  )
})

t.test('a share holds by key, or at random; 0 % never and 100 % always', async (t) => {
  t.equal(isInShare({ served: v2, percent: 0 }, 'a'), false)
  t.equal(isInShare({ served: v2, percent: 100 }, 'a'), true)
  t.equal(isInShare({ served: v2, percent: 0 }, undefined), false)
  t.equal(isInShare({ served: v2, percent: 100 }, undefined), true)
  const point = keyPoint('a')
  t.equal(isInShare({ served: v2, percent: point + 0.001 }, 'a'), true)
  t.equal(isInShare({ served: v2, percent: point }, 'a'), false, 'below the percent, not at it')
})

t.test('a slot routes to the canary for its share, else to the default', async (t) => {
  t.equal(routeOf(slot(undefined), 'a'), v1, 'no canary: the default')
  t.equal(routeOf(slot(100), undefined), v2)
  t.equal(routeOf(slot(0), undefined), v1)
  const point = keyPoint('user-7')
  t.equal(routeOf(slot(point + 1), 'user-7'), v2)
  t.equal(routeOf(slot(point - 1e-9), 'user-7'), v1)
})
