import t from 'tap'
import { CACHE_STATUS, createCache, type Lookup } from '../../lib/rates/cache.js'

/** A load the test settles by hand, counting calls and recording each call's argument. */
const manualLoad = () => {
  const calls: Array<{ key: string; arg: string; resolve(v: string): void; reject(e: unknown): void }> = []
  const load = (key: string, arg: string): Promise<string> =>
    new Promise((resolve, reject) => {
      calls.push({ key, arg, resolve, reject })
    })
  return { calls, load }
}

const setup = (ttlMs = 1000, staleMs = 5000) => {
  let clock = 0
  const loads = manualLoad()
  const cache = createCache<string, string>({ ttlMs, staleMs, load: loads.load, now: () => clock })
  return { cache, loads, tick: (ms: number) => void (clock += ms) }
}

/** Stores `value` for `key` through a completed load. */
const store = async (s: ReturnType<typeof setup>, key: string, value: string): Promise<void> => {
  const pending = s.cache.lookup(key, 'arg')
  s.loads.calls.at(-1)?.resolve(value)
  await pending
}

t.test('a miss loads and stores; within the TTL the value answers synchronously as a hit', async (t) => {
  const s = setup()
  const pending = s.cache.lookup('USD', 'ctx-1')
  t.ok(pending instanceof Promise)
  t.same(
    s.loads.calls.map((c) => [c.key, c.arg]),
    [['USD', 'ctx-1']],
  )
  s.loads.calls[0]?.resolve('64000')
  t.same(await pending, { value: '64000', cacheStatus: 'svc; fwd=miss; stored' })
  s.tick(999)
  const hit = s.cache.lookup('USD', 'ctx-2') as Lookup<string>
  t.notOk(hit instanceof Promise, 'a fresh value needs no promise')
  t.same(hit, { value: '64000', cacheStatus: CACHE_STATUS.hit })
  t.equal(s.loads.calls.length, 1)
})

t.test('once the TTL passes the next lookup loads again and says the stored value was stale', async (t) => {
  const s = setup()
  await store(s, 'USD', 'old')
  s.tick(1000)
  const pending = s.cache.lookup('USD', 'arg')
  t.equal(s.loads.calls.length, 2)
  s.loads.calls[1]?.resolve('new')
  t.same(await pending, { value: 'new', cacheStatus: 'svc; fwd=stale; stored' })
  t.same(s.cache.lookup('USD', 'arg'), { value: 'new', cacheStatus: 'svc; hit' }, 'the TTL restarts from the new value')
})

t.test('keys are cached apart', async (t) => {
  const s = setup()
  await store(s, 'USD', 'dollar')
  const pending = s.cache.lookup('EUR', 'arg')
  t.equal(s.loads.calls.length, 2)
  s.loads.calls[1]?.resolve('euro')
  t.same((await pending).value, 'euro')
})

t.test('concurrent lookups of one key share one load; the others say they were collapsed', async (t) => {
  const s = setup()
  const lookups = Array.from({ length: 10 }, (_, i) => s.cache.lookup('USD', `ctx-${i}`))
  t.equal(s.loads.calls.length, 1, 'one load for ten lookups')
  t.equal(s.loads.calls[0]?.arg, 'ctx-0', "with the first lookup's argument")
  s.loads.calls[0]?.resolve('64000')
  const results = await Promise.all(lookups)
  t.same(results[0], { value: '64000', cacheStatus: 'svc; fwd=miss; stored' })
  for (const r of results.slice(1)) t.same(r, { value: '64000', cacheStatus: 'svc; fwd=miss; stored; collapsed' })
  s.tick(2000)
  const refreshes = [s.cache.lookup('USD', 'a'), s.cache.lookup('USD', 'b')]
  s.loads.calls[1]?.resolve('65000')
  t.same(
    (await Promise.all(refreshes)).map((r) => r.cacheStatus),
    ['svc; fwd=stale; stored', 'svc; fwd=stale; stored; collapsed'],
  )
})

t.test('a failed load with nothing stored fails every lookup that shared it, and the next lookup loads again', async (t) => {
  const s = setup()
  const first = s.cache.lookup('USD', 'a') as Promise<Lookup<string>>
  const joined = s.cache.lookup('USD', 'b') as Promise<Lookup<string>>
  const failure = new Error('upstreams down')
  s.loads.calls[0]?.reject(failure)
  await t.rejects(first, failure)
  await t.rejects(joined, failure)
  const retry = s.cache.lookup('USD', 'c')
  t.equal(s.loads.calls.length, 2, 'a failure is not cached')
  s.loads.calls[1]?.resolve('back')
  t.same((await retry).cacheStatus, 'svc; fwd=miss; stored')
})

t.test('a failed load with nobody joined leaves no unhandled rejection', async (t) => {
  const s = setup()
  const only = s.cache.lookup('USD', 'a') as Promise<Lookup<string>>
  s.loads.calls[0]?.reject(new Error('down'))
  await t.rejects(only)
})

t.test('stale-if-error: a failed load answers with a value up to staleMs old, then no longer', async (t) => {
  const s = setup(1000, 5000)
  await store(s, 'USD', 'kept')
  s.tick(5000)
  const stale = s.cache.lookup('USD', 'a')
  const joined = s.cache.lookup('USD', 'b')
  s.loads.calls[1]?.reject(new Error('down'))
  t.same(await stale, { value: 'kept', cacheStatus: 'svc; fwd=stale; detail=stale-if-error' })
  t.same(await joined, { value: 'kept', cacheStatus: 'svc; fwd=stale; collapsed; detail=stale-if-error' })
  s.tick(1)
  const tooOld = s.cache.lookup('USD', 'c') as Promise<Lookup<string>>
  s.loads.calls[2]?.reject(new Error('still down'))
  await t.rejects(tooOld, { message: 'still down' }, 'older than staleMs: the failure shows')
})

t.test('with a TTL of 0 every lookup loads, still one load at a time', async (t) => {
  const s = setup(0, 1000)
  await store(s, 'USD', 'a')
  const both = [s.cache.lookup('USD', 'x'), s.cache.lookup('USD', 'y')]
  t.equal(s.loads.calls.length, 2)
  s.loads.calls[1]?.resolve('b')
  t.same(
    (await Promise.all(both)).map((r) => r.value),
    ['b', 'b'],
  )
})

t.test('the default clock is monotonic milliseconds', async (t) => {
  let loads = 0
  const cache = createCache<number, undefined>({ ttlMs: 60_000, staleMs: 0, load: async () => ++loads })
  await cache.lookup('k', undefined)
  t.same(cache.lookup('k', undefined), { value: 1, cacheStatus: 'svc; hit' })
})
