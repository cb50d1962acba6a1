// Shadow copies (lib/README.md §10): a share of the requests a model answers is predicted again by
// its shadow version, after the reply, and compared with what the client was given.
//
// - Never on the reply's path. A copy is queued by a hook the server runs once the reply is written
//   (`ctx.whenWritten`), and predicted from a later turn (setImmediate), so the client has its answer
//   before the shadow starts; a shadow that throws, rejects or hangs only counts against itself.
// - Bounded. The queue holds at most SVC_SHADOW_QUEUE copies; past that, or while the service is
//   under load (`isUnderPressure`: the shedding layer's half-way marks), a copy is dropped and counted,
//   so shadow work goes before any real request is shed. Copies run one at a time: a synchronous
//   one (the kernel) back to back for at most TURN_BUDGET_MS a turn, an asynchronous one (ONNX)
//   awaited for at most SVC_SHADOW_TIMEOUT_MS, after which it is a `timeout` and the next one runs.
// - Drains run outside the request's store: a copy's log lines are not the request's, and no
//   request's context is kept alive by one. A synchronous reply is written outside the store
//   already; `requestStore.exit` is called only inside one, since on Node 20 it turns the async
//   hooks off and on again (~0.4 µs a call; test/bench/README.md, Rollouts).
// - A copy is encoded for the shadow's own inputs, from the request, and its rows go to the
//   shadow's drift bin counters (`onRows`), never to the default version's window.
// - A copy whose shadow stopped being one (a reload) before it ran is dropped: its build may be
//   released by then.
// - A failing shadow is logged (`shadow_prediction_failed`) when its message is new for that
//   version, not on every copy (run.ts, which runs one copy).
import { performance } from 'node:perf_hooks'
import type { Registry } from 'prom-client'
import type { Ctx } from '../../core/http/context.js'
import type { Logger } from '../../telemetry/logger.js'
import { requestStore } from '../../telemetry/request-store.js'
import type { ServedModel } from '../registry/registry.js'
import type { Prediction } from '../runtime.js'
import { createShadowMetrics, type ShadowCells } from './metrics.js'
import { createCopyRunner, type ShadowCopy } from './run.js'

export type { ShadowCopy } from './run.js'

/** How long copies that answer synchronously may run back to back before yielding the loop. */
export const TURN_BUDGET_MS = 1

export type ShadowOptions = Readonly<{
  metrics: Registry
  logger: Logger
  /** Most copies waiting at once (SVC_SHADOW_QUEUE). */
  capacity: number
  /** How long an asynchronous copy is awaited (SVC_SHADOW_TIMEOUT_MS). */
  timeoutMs: number
  /** Relative tolerance of a regressor's values (SVC_SHADOW_TOLERANCE; compare.ts). */
  tolerance: number
  /** True while the service is near shedding: copies are dropped instead of queued or run. */
  isUnderPressure: () => boolean
  /** A successful copy's rows and answers: the shadow version's drift bin counters. */
  onRows?: ((served: ServedModel, features: Float64Array, rows: number, prediction: Prediction) => void) | undefined
}>

export type ShadowCopies = Readonly<{
  /** The shadow builds served now (each publish): their series exist from here, and copies of others are dropped. */
  track(shadows: readonly ServedModel[]): void
  /** hot path: predicts `copy` again once `ctx`'s reply is written, or drops it. */
  copy(ctx: Ctx, copy: ShadowCopy): void
  /** Copies queued or running. */
  pending(): number
}>

export const createShadowCopies = ({ metrics, logger, capacity, timeoutMs, tolerance, isUnderPressure, onRows }: ShadowOptions): ShadowCopies => {
  const series = createShadowMetrics(metrics)
  let byBuild = new Map<ServedModel, ShadowCells>()
  const queue: (ShadowCopy | undefined)[] = new Array(capacity)
  let [head, count] = [0, 0]
  let [isRunning, isScheduled] = [false, false]
  const runner = createCopyRunner({ logger, timeoutMs, tolerance, onRows })

  /** Runs one copy unless its shadow stopped being one (a reload): dropped with the role, its build may be released. */
  const run = (copy: ShadowCopy): Promise<void> | undefined => {
    const cells = byBuild.get(copy.shadow)
    return cells === undefined ? undefined : runner.run(copy, cells)
  }

  const take = (): ShadowCopy => {
    const copy = queue[head] as ShadowCopy
    queue[head] = undefined
    head = (head + 1) % capacity
    count--
    return copy
  }

  const dropQueued = (): void => {
    while (count > 0) {
      const copy = take()
      const cells = byBuild.get(copy.shadow)
      if (cells !== undefined) cells.dropped.value++
    }
  }

  const drain = (): void => {
    isScheduled = false
    const until = performance.now() + TURN_BUDGET_MS
    while (count > 0 && !isRunning) {
      if (isUnderPressure()) return dropQueued()
      const running = run(take())
      if (running !== undefined) {
        isRunning = true
        void running.then(() => {
          isRunning = false
          schedule()
        })
        return
      }
      if (performance.now() > until) break
    }
    schedule()
  }

  const later = (): void => void setImmediate(drain)
  // Outside the request's store (header); `exit` only inside one: on Node 20 it toggles async hooks.
  const schedule = (): void => {
    if (isScheduled || isRunning || count === 0) return
    isScheduled = true
    if (requestStore.getStore() === undefined) later()
    else requestStore.exit(later)
  }

  const enqueue = (copy: ShadowCopy): void => {
    const cells = byBuild.get(copy.shadow)
    if (cells === undefined) return
    if (count === capacity || isUnderPressure()) {
      cells.dropped.value++
      return
    }
    queue[(head + count) % capacity] = copy
    count++
    schedule()
  }

  return {
    track: (shadows) => {
      const cells = series.track(shadows)
      byBuild = new Map(shadows.map((build) => [build, cells.get(`${build.name}/${build.version}`) as ShadowCells]))
      runner.forget(cells)
    },
    copy: (ctx, copy) => ctx.whenWritten(() => enqueue(copy)),
    pending: () => count + (isRunning ? 1 : 0),
  }
}
