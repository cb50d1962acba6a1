// What `svc loadgen` refuses before it sends anything, and how it counts a request that got no answer.
import { SvcError } from '../../core/errors.js'

/** A mistake in the command line, or one the model described shows: printed with a pointer to --help, exit 2. */
export class LoadgenUsageError extends SvcError {
  override name = 'LoadgenUsageError'
  readonly code = 'INVALID_ARGUMENTS'
}

/** Where a status would be counted for a request that got none: its time limit passed, or no connection. */
export const failureStatus = (error: unknown): string => (error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'connection_error')
