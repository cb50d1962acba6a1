// The one way a per-version family of series is made and dropped (lib/README.md §10, "When a series
// goes"). The registry's publish drives them all, and each family states how long its series outlive it:
//   made    at 0 by the publish that serves the version, before any request reaches it, so that a
//           scrape reads 0 before the first count and increase() misses none (a series first seen
//           at N takes N as its start)
//   kept    seconds the series outlive the publish that stopped serving the version: 0 for every
//           family but feedback's, which something can still count into until the last token its
//           versions signed expires (SVC_FEEDBACK_MAX_AGE_S)
// A version served again before it is dropped keeps its series; one dropped starts from 0. What a
// family's series are, how a scrape reads them and in which order stays the family's own: it gives
// `make` and `drop`, and this module decides when each is called.

export type SeriesPolicy = Readonly<{
  /** Seconds kept after the publish that stopped serving the version; 0: dropped by that publish. */
  keptS: number
}>

/** A served version as a family sees it; `K` the key its series are kept under (`model/version` mostly). */
export type FamilyOptions<S, K, T> = Readonly<{
  policy: SeriesPolicy
  keyOf: (served: S) => K
  /** The version's series, at 0. */
  make: (served: S) => T
  /** Removes the version's series from what a scrape reads. */
  drop: (key: K, series: T) => void
}>

export type VersionFamily<S, K, T> = Readonly<{
  /** hot path: the version's series; made here only for a version no publish served yet (a family used on its own). */
  of(served: S): T
  /** The series kept now, in the order served, then those retired and still kept. */
  series(): ReadonlyMap<K, T>
  /** Each publish, with the versions it serves (of this family) and the time in seconds: makes, retires and drops. */
  publish(served: readonly S[], nowS: number): void
}>

export const createVersionFamily = <S, K, T>({ policy, keyOf, make, drop }: FamilyOptions<S, K, T>): VersionFamily<S, K, T> => {
  let kept = new Map<K, T>()
  /** When each key stopped being served; absent while it is served. */
  const retired = new Map<K, number>()

  const of = (served: S): T => {
    const key = keyOf(served)
    let series = kept.get(key)
    if (series === undefined) kept.set(key, (series = make(served)))
    return series
  }

  /** Kept in the order served, those still kept after it (feedback's retired ones). */
  const reorder = (served: readonly S[]): void => {
    const next = new Map<K, T>()
    for (const build of served) {
      const key = keyOf(build)
      next.set(key, kept.get(key) ?? make(build))
    }
    for (const [key, series] of kept) if (!next.has(key)) next.set(key, series)
    kept = next
  }

  const retire = (serving: ReadonlySet<K>, nowS: number): void => {
    for (const key of kept.keys()) {
      if (serving.has(key)) retired.delete(key)
      else if (!retired.has(key)) retired.set(key, nowS)
    }
    for (const [key, since] of retired) {
      if (policy.keptS > 0 && nowS - since <= policy.keptS) continue
      retired.delete(key)
      drop(key, kept.get(key) as T)
      kept.delete(key)
    }
  }

  return {
    of,
    series: () => kept,
    publish: (served, nowS) => {
      reorder(served)
      retire(new Set(served.map(keyOf)), nowS)
    },
  }
}
