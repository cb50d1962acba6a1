// A bounded first-in first-out queue: a fixed ring of `capacity` slots, allocated once, so queueing
// on a reply's hook allocates nothing and a full queue is one comparison. Work queued after the
// reply (shadow copies, payload log events) waits here until a later turn takes it.

export type Ring<T> = {
  /** Items waiting now. */
  readonly size: number
  /** Queues `item`; false, and nothing queued, when the ring is full. */
  put(item: T): boolean
  /** The oldest item; only while `size > 0`. */
  take(): T
}

export const createRing = <T>(capacity: number): Ring<T> => {
  const slots: (T | undefined)[] = new Array(capacity)
  let head = 0
  let count = 0
  return {
    get size() {
      return count
    },
    put: (item) => {
      if (count === capacity) return false
      slots[(head + count) % capacity] = item
      count++
      return true
    },
    take: () => {
      const item = slots[head] as T
      slots[head] = undefined
      head = (head + 1) % capacity
      count--
      return item
    },
  }
}
