// The copies waiting for the shadow (copies.ts): a fixed ring of `capacity` slots, allocated once,
// so queueing a copy on the reply's hook allocates nothing and a full queue is one comparison.
import type { ShadowCopy } from './run.js'

export type CopyQueue = {
  /** Copies waiting now. */
  readonly size: number
  /** Queues `copy`; false, and nothing queued, when the queue is full. */
  put(copy: ShadowCopy): boolean
  /** The oldest copy; only while `size > 0`. */
  take(): ShadowCopy
}

export const createCopyQueue = (capacity: number): CopyQueue => {
  const slots: (ShadowCopy | undefined)[] = new Array(capacity)
  let [head, count] = [0, 0]
  return {
    get size() {
      return count
    },
    put: (copy) => {
      if (count === capacity) return false
      slots[(head + count) % capacity] = copy
      count++
      return true
    },
    take: () => {
      const copy = slots[head] as ShadowCopy
      slots[head] = undefined
      head = (head + 1) % capacity
      count--
      return copy
    },
  }
}
