// One shadow copy run (copies.ts queues them): encoded for the shadow's own inputs from the
// request, predicted, compared with what the client was given (compare.ts) and counted; a failure
// is the copy's outcome (`error`, or `timeout` for an asynchronous one not settled in time), logged
// when its message is new for that version (`shadow_prediction_failed`). A timed-out run is counted
// then, but not over: an ONNX session cannot be interrupted, so its promise waits for it.
import { performance } from 'node:perf_hooks'
import { errorMessage } from '../../core/errors.js'
import { observe } from '../../telemetry/metrics/cells.js'
import type { Logger } from '../../telemetry/logger.js'
import { encodeInputs } from '../../models/inference/features.js'
import type { InferRequest } from '../../models/inference/request.js'
import type { ServedModel } from '../../models/registry/registry.js'
import type { Prediction } from '../../models/runtime.js'
import { disagreements } from './compare.js'
import type { ShadowCells, ShadowOutcome } from './metrics.js'

/** One request to predict again: the shadow build, and the primary build with what it answered. */
export type ShadowCopy = Readonly<{ shadow: ServedModel; primary: ServedModel; request: InferRequest; answered: Prediction }>

export type RunOptions = Readonly<{
  logger: Logger
  timeoutMs: number
  tolerance: number
  onRows: ((served: ServedModel, features: Float64Array, rows: number, prediction: Prediction) => void) | undefined
  /** A copy was counted as a timeout: its run goes on, and its promise settles only with it. */
  onTimeout: () => void
}>

export type CopyRunner = Readonly<{
  /** Runs one copy, counted in `cells`: undefined once done, or the promise of an asynchronous one, settled with its prediction (never rejects). */
  run(copy: ShadowCopy, cells: ShadowCells): Promise<void> | undefined
  /** Forgets the failures logged for versions that are no longer a shadow (`model/version` keys kept). */
  forget(kept: ReadonlyMap<string, unknown>): void
}>

export const createCopyRunner = ({ logger, timeoutMs, tolerance, onRows, onTimeout }: RunOptions): CopyRunner => {
  const failures = new Map<string, string>()
  // The shadows now (`forget`): a copy that fails after its shadow was dropped is logged, not
  // remembered, so a version taken again as the shadow is logged afresh.
  let shadows: ReadonlyMap<string, unknown> = new Map()

  const fail = (copy: ShadowCopy, cells: ShadowCells, outcome: Exclude<ShadowOutcome, 'success'>, start: number, message: string): void => {
    cells.outcomes[outcome].value++
    observe(cells.duration, (performance.now() - start) / 1000, undefined)
    const { name, version } = copy.shadow
    const key = `${name}/${version}`
    if (failures.get(key) === message) return
    if (shadows.has(key)) failures.set(key, message)
    logger.warning('shadow_prediction_failed', { model: name, version, outcome, message })
  }

  const compared = (copy: ShadowCopy, cells: ShadowCells, features: Float64Array, prediction: Prediction, start: number): void => {
    const { shadow, primary, request, answered } = copy
    cells.outcomes.success.value++
    observe(cells.duration, (performance.now() - start) / 1000, undefined)
    cells.rows.value += request.rows
    cells.disagreements.value += disagreements(primary.model, answered, shadow.model, prediction, request.rows, tolerance)
    onRows?.(shadow, features, request.rows, prediction)
  }

  /**
   * Counts an asynchronous copy by whichever comes first: its answer, its failure, or the timeout
   * (then `onTimeout`). The promise resolves only once the prediction itself settles, however late:
   * until then the run still holds its CPU, its memory and its session.
   */
  const awaited = (copy: ShadowCopy, cells: ShadowCells, features: Float64Array, pending: Promise<Prediction>, start: number): Promise<void> => {
    let isTimedOut = false
    const timer = setTimeout(() => {
      isTimedOut = true
      fail(copy, cells, 'timeout', start, `no answer within ${timeoutMs} ms`)
      onTimeout()
    }, timeoutMs)
    return pending.then(
      (prediction) => {
        clearTimeout(timer)
        if (!isTimedOut) compared(copy, cells, features, prediction, start)
      },
      (error: unknown) => {
        clearTimeout(timer)
        if (!isTimedOut) fail(copy, cells, 'error', start, errorMessage(error))
      },
    )
  }

  return {
    run: (copy, cells) => {
      const start = performance.now()
      let features: Float64Array
      let prediction: Prediction | Promise<Prediction>
      try {
        features = encodeInputs(copy.request, copy.shadow.model)
        prediction = copy.shadow.predictor.predict(features, copy.request.rows)
      } catch (error: unknown) {
        fail(copy, cells, 'error', start, errorMessage(error))
        return undefined
      }
      if (prediction instanceof Promise) return awaited(copy, cells, features, prediction, start)
      compared(copy, cells, features, prediction, start)
      return undefined
    },
    forget: (kept) => {
      shadows = kept
      for (const key of failures.keys()) if (!kept.has(key)) failures.delete(key)
    },
  }
}
