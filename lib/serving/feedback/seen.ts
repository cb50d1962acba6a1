// The feedback tokens an instance has scored (SVC_FEEDBACK_SEEN of them, the oldest forgotten first),
// so a label sent twice to the same instance is refused as `duplicate`. Kept in memory only: a
// restart, an eviction or another instance cannot recognise a resend (README says so).
//
// An id is 48 bits of the token's tag, a PRF output, as a number: two tokens share one with odds of
// about capacity / 2^48 (3.6e-9 at the default million). The set is an open-addressing table of
// doubles with linear probing and backward-shift deletion, plus a ring of ids in arrival order for
// eviction: 24 bytes an id at the default, where a Set of strings took about 60. Both start small
// and double as ids come, so an instance takes memory for the labels it has scored, not for
// SVC_FEEDBACK_SEEN.
export type SeenSet = Readonly<{
  /** Adds `id`; false when it was there already. */
  add(id: number): boolean
  has(id: number): boolean
  size(): number
}>

/** A 48-bit id, never 0 (the table's empty slot). */
export const seenId = (tag: Buffer, offset: number): number => tag.readUIntBE(offset, 6) || 1

/** The table's first size: 8 KiB, doubled as ids come (the largest SVC_FEEDBACK_SEEN would otherwise take 2.4 GB at start). */
const FIRST_SLOTS = 1024

export const createSeenSet = (capacity: number): SeenSet => {
  /** The table's size at capacity: a power of two at least twice the capacity (a load of at most 0.5). */
  let fullSlots = 2
  while (fullSlots < capacity * 2) fullSlots *= 2
  let slots = Math.min(FIRST_SLOTS, fullSlots)
  let table = new Float64Array(slots)
  let mask = slots - 1
  let ring = new Float64Array(Math.min(capacity, slots / 2))
  let head = 0
  let count = 0
  const home = (id: number): number => id % slots

  const find = (id: number): number => {
    let i = home(id)
    while (table[i] !== 0 && table[i] !== id) i = (i + 1) & mask
    return i
  }

  /**
   * Doubles the table and the ring before the table passes a load of 0.5. The ring is only full, and
   * ids only forgotten, at capacity: until then the oldest id is at 0 and the ring copies as it is.
   */
  const grow = (): void => {
    const old = table
    slots *= 2
    mask = slots - 1
    table = new Float64Array(slots)
    for (const id of old) if (id !== 0) table[find(id)] = id
    const longer = new Float64Array(Math.min(capacity, slots / 2))
    longer.set(ring)
    ring = longer
  }

  /** Empties slot `i` and shifts later members of its run back, so every lookup still finds them. */
  const remove = (id: number): void => {
    let i = find(id)
    table[i] = 0
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const h = home(table[j] as number)
      // The member at j may fill the hole at i unless its home lies cyclically in (i, j].
      const isInRun = i <= j ? h > i && h <= j : h > i || h <= j
      if (isInRun) continue
      table[i] = table[j] as number
      table[j] = 0
      i = j
    }
  }

  return {
    add: (id) => {
      const i = find(id)
      if (table[i] === id) return false
      if (count === capacity) {
        remove(ring[head] as number)
        head = (head + 1) % capacity
        count--
      } else if (count === ring.length) grow()
      table[find(id)] = id
      ring[(head + count) % capacity] = id
      count++
      return true
    },
    has: (id) => table[find(id)] === id,
    size: () => count,
  }
}
