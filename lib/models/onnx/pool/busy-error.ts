// A prediction the worker pool (pool.ts) could not take or finish in time: the service's overload,
// not the model's failure. Answered 503 with Retry-After (lib/endpoints/problems.ts) and counted as
// the version's `overloaded` outcome, never its `server_error`, so overload never rolls a canary back.
import { SvcError } from '../../../core/errors.js'

/** Why: the queue held SVC_BATCH_QUEUE_ROWS rows; the request passed SVC_PREDICT_TIMEOUT_MS; the process is stopping. */
export const BUSY_REASONS = ['queue_full', 'timeout', 'shutting_down'] as const
export type BusyReason = (typeof BUSY_REASONS)[number]

const MESSAGES: Readonly<Record<BusyReason, string>> = {
  queue_full: 'Too many rows are waiting for a model worker; retry after the time in Retry-After',
  timeout: 'The prediction was not answered within its time limit; retry after the time in Retry-After',
  shutting_down: 'The service is stopping; retry after the time in Retry-After',
}

export class PredictionBusyError extends SvcError {
  override name = 'PredictionBusyError'
  readonly code = 'OVERLOADED'
  readonly reason: BusyReason

  constructor(reason: BusyReason) {
    super(MESSAGES[reason])
    this.reason = reason
  }
}
