// Shadow copies (lib/README.md §10): a share of the requests a model answers is predicted again by
// its shadow version, after the reply, and compared with what the client was given.
//
// - Never on the reply's path. A copy is queued by a hook the server runs once the reply is written
//   (`ctx.whenWritten`), and predicted from a later turn (setImmediate), so the client has its answer
//   before the shadow starts; a shadow that throws, rejects or hangs only counts against itself.
// - Bounded. The queue holds at most SVC_SHADOW_QUEUE copies; past that, or while the service is
//   under load (`isUnderPressure`: the shedding layer's half-way marks), a copy is dropped and counted,
//   so shadow work goes before any real request is shed. Copies run one at a time (drainer.ts): a synchronous
//   one (the kernel) back to back for at most TURN_BUDGET_MS a turn, an asynchronous one (ONNX)
//   awaited for at most SVC_SHADOW_TIMEOUT_MS, after which it is a `timeout`.
// - One run in flight, a timed-out one included. An ONNX run cannot be stopped, so a run past its
//   timeout still holds its slot until it settles: meanwhile what waits and what comes is dropped
//   and counted, so a shadow that hangs costs one run's CPU and memory, never a pile of them. It
//   is `pending`, whatever `track` has done since; its build is safe to dispose, since a predictor
//   frees its session only once its runs settle (lib/models/runtime.ts, `dispose`).
// - Only a reply the endpoint returned is compared: when the server wrote something else (a body
//   it could not serialise, a layer that failed: its 500), the hook hears why and drops the copy,
//   uncounted, since none was owed. A client that left is no such case: its answer was made.
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
//
// What is copied: that share of the requests the model answered, not those the shadow version
// answered itself.
import type { Registry } from 'prom-client'
import type { Ctx } from '../../core/http/context.js'
import type { Logger } from '../../telemetry/logger.js'
import type { ServedModel } from '../../models/registry/registry.js'
import type { Prediction } from '../../models/runtime.js'
import { createShadowMetrics, type ShadowCells } from './metrics.js'
import { createRing } from '../../core/ring.js'
import { createDrainer, type Drainer } from './drainer.js'
import { createCopyRunner, type ShadowCopy } from './run.js'

export type { ShadowCopy } from './run.js'

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
  /** Copies queued or running, a timed-out run included until it settles. */
  pending(): number
}>

export const createShadowCopies = ({ metrics, logger, capacity, timeoutMs, tolerance, isUnderPressure, onRows }: ShadowOptions): ShadowCopies => {
  const series = createShadowMetrics(metrics)
  let byBuild = new Map<ServedModel, ShadowCells>()
  const cellsOf = (shadow: ServedModel): ShadowCells | undefined => byBuild.get(shadow)
  const queue = createRing<ShadowCopy>(capacity)
  // The runner reports a timeout to the drainer, which runs copies through the runner.
  const runner = createCopyRunner({ logger, timeoutMs, tolerance, onRows, onTimeout: () => drainer.overdue() })
  const drainer: Drainer = createDrainer({ queue, cellsOf, run: runner.run, isUnderPressure })

  const enqueue = (copy: ShadowCopy): void => {
    const cells = byBuild.get(copy.shadow)
    if (cells === undefined) return
    if (drainer.isOverdue() || isUnderPressure() || !queue.put(copy)) cells.dropped.value++
    else drainer.schedule()
  }

  return {
    track: (shadows) => {
      const cells = series.track(shadows)
      byBuild = new Map(shadows.map((build) => [build, cells.get(`${build.name}/${build.version}`) as ShadowCells]))
      runner.forget(cells)
    },
    // An error: the server wrote something else than the endpoint's reply (header).
    copy: (ctx, copy) =>
      ctx.whenWritten((_, error) => {
        if (error === undefined) enqueue(copy)
      }),
    pending: () => queue.size + (drainer.isRunning() ? 1 : 0),
  }
}
