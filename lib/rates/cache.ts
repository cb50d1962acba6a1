// A per-key cache in front of a slow, rate-limited upstream: fresh values answer at once, concurrent
// misses of one key share one load (single-flight), and when a load fails a value up to `staleMs`
// old still answers (stale-if-error). Each answer says what happened as an RFC 9211 Cache-Status.
import { performance } from 'node:perf_hooks'

export type Lookup<V> = Readonly<{ value: V; cacheStatus: string }>

export type Cache<V, A> = Readonly<{
  /** A fresh value synchronously; otherwise the load under way or a new one, given `arg`. */
  lookup(key: string, arg: A): Lookup<V> | Promise<Lookup<V>>
}>

export type CacheOptions<V, A> = Readonly<{
  /** How long a stored value answers without a load; 0 loads every time (still single-flight). */
  ttlMs: number
  /** How old a stored value may be and still answer when a load fails. */
  staleMs: number
  /** Loads the value of `key`; `arg` comes from the lookup that started the load. */
  load(key: string, arg: A): Promise<V>
  /** Milliseconds on a monotonic clock. */
  now?: () => number
}>

/** RFC 9211 (cache name `svc`): a fresh value, a load, a load shared, or a stale value served. */
export const CACHE_STATUS = Object.freeze({
  hit: 'svc; hit',
  missStored: 'svc; fwd=miss; stored',
  missCollapsed: 'svc; fwd=miss; stored; collapsed',
  staleStored: 'svc; fwd=stale; stored',
  staleCollapsed: 'svc; fwd=stale; stored; collapsed',
  staleIfError: 'svc; fwd=stale; detail=stale-if-error',
  staleIfErrorCollapsed: 'svc; fwd=stale; collapsed; detail=stale-if-error',
})

type Entry<V> = { readonly storedAt: number; readonly hit: Lookup<V> }
/** The load under way for a key: what its first caller gets, and what the callers who joined get. */
type Flight<V> = { readonly first: Promise<Lookup<V>>; readonly joined: Promise<Lookup<V>> }

const COLLAPSED: Readonly<Record<string, string>> = {
  [CACHE_STATUS.missStored]: CACHE_STATUS.missCollapsed,
  [CACHE_STATUS.staleStored]: CACHE_STATUS.staleCollapsed,
  [CACHE_STATUS.staleIfError]: CACHE_STATUS.staleIfErrorCollapsed,
}

/** Keys are kept for the life of the process: the caller bounds them (three letters: 17 576 at most). */
export const createCache = <V, A>({ ttlMs, staleMs, load, now = () => performance.now() }: CacheOptions<V, A>): Cache<V, A> => {
  const entries = new Map<string, Entry<V>>()
  const flights = new Map<string, Flight<V>>()

  const refresh = async (key: string, arg: A, entry: Entry<V> | undefined): Promise<Lookup<V>> => {
    let value: V
    try {
      value = await load(key, arg)
    } catch (error: unknown) {
      flights.delete(key)
      if (entry !== undefined && now() - entry.storedAt <= staleMs) return { value: entry.hit.value, cacheStatus: CACHE_STATUS.staleIfError }
      throw error
    }
    flights.delete(key)
    entries.set(key, { storedAt: now(), hit: Object.freeze({ value, cacheStatus: CACHE_STATUS.hit }) })
    return { value, cacheStatus: entry === undefined ? CACHE_STATUS.missStored : CACHE_STATUS.staleStored }
  }

  return {
    lookup: (key, arg) => {
      const entry = entries.get(key)
      // hot path: a fresh value is answered synchronously, with no allocation
      if (entry !== undefined && now() - entry.storedAt < ttlMs) return entry.hit
      const flight = flights.get(key)
      if (flight !== undefined) return flight.joined
      const first = refresh(key, arg, entry)
      const joined = first.then((found) => ({ value: found.value, cacheStatus: COLLAPSED[found.cacheStatus] as string }))
      // A load that fails with nobody joined must not surface as an unhandled rejection here.
      joined.catch(() => {})
      flights.set(key, { first, joined })
      return first
    },
  }
}
