// The shadow queue's drainer (copies.ts holds the queue): runs the copies waiting, one at a time,
// from a later turn than the reply's. A synchronous copy (the kernel) runs back to back with the
// next for at most TURN_BUDGET_MS a turn; an asynchronous one (ONNX) holds the slot until it
// settles, a timed-out one included (`overdue`), while what waits and what comes is dropped.
// Drains run outside the request's store (copies.ts explains why).
import { performance } from 'node:perf_hooks'
import type { Ring } from '../../core/ring.js'
import { requestStore } from '../../telemetry/request-store.js'
import type { ServedModel } from '../../models/registry/registry.js'
import type { ShadowCells } from './metrics.js'
import type { ShadowCopy } from './run.js'

/** How long copies that answer synchronously may run back to back before yielding the loop. */
export const TURN_BUDGET_MS = 1

export type DrainerOptions = Readonly<{
  queue: Ring<ShadowCopy>
  /** The cells of a build that is a shadow now; undefined for one that stopped being one. */
  cellsOf: (shadow: ServedModel) => ShadowCells | undefined
  /** Runs one copy: undefined once done, or the promise of an asynchronous one (run.ts). */
  run: (copy: ShadowCopy, cells: ShadowCells) => Promise<void> | undefined
  isUnderPressure: () => boolean
}>

export type Drainer = Readonly<{
  /** Drains from a later turn, unless a drain is due already or a run holds the slot. */
  schedule(): void
  /** The run in flight has timed out: everything waiting is dropped, and new copies until it settles. */
  overdue(): void
  /** True from a timeout until the timed-out run settles. */
  isOverdue(): boolean
  /** True while an asynchronous run holds the slot. */
  isRunning(): boolean
}>

/** Empties `queue`, each copy counted as dropped against its shadow (a build no longer one has no series). */
export const dropAll = (queue: Ring<ShadowCopy>, cellsOf: DrainerOptions['cellsOf']): void => {
  while (queue.size > 0) {
    const cells = cellsOf(queue.take().shadow)
    if (cells !== undefined) cells.dropped.value++
  }
}

export const createDrainer = ({ queue, cellsOf, run, isUnderPressure }: DrainerOptions): Drainer => {
  /** A run in flight until its prediction settles. */
  let isRunning = false
  /** The run in flight has timed out. */
  let isOverdue = false
  /** A drain is due from a later turn. */
  let isScheduled = false

  const settled = (): void => {
    isRunning = false
    isOverdue = false
    schedule()
  }

  /** Runs one copy unless its shadow stopped being one (a reload: dropped with the role); true while an asynchronous one runs on. */
  const start = (copy: ShadowCopy): boolean => {
    const cells = cellsOf(copy.shadow)
    const running = cells === undefined ? undefined : run(copy, cells)
    if (running === undefined) return false
    isRunning = true
    void running.then(settled)
    return true
  }

  const drain = (): void => {
    isScheduled = false
    const until = performance.now() + TURN_BUDGET_MS
    while (queue.size > 0 && !isRunning) {
      if (isUnderPressure()) return dropAll(queue, cellsOf)
      if (start(queue.take())) return
      if (performance.now() > until) break
    }
    schedule()
  }

  const later = (): void => void setImmediate(drain)
  // `exit` only inside a store: on Node 20 it toggles async hooks.
  const schedule = (): void => {
    if (isScheduled || isRunning || queue.size === 0) return
    isScheduled = true
    if (requestStore.getStore() === undefined) later()
    else requestStore.exit(later)
  }

  return {
    schedule,
    overdue: () => {
      isOverdue = true
      dropAll(queue, cellsOf)
    },
    isOverdue: () => isOverdue,
    isRunning: () => isRunning,
  }
}
