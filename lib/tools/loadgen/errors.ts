// What `svc loadgen` refuses before it sends anything.
import { SvcError } from '../../core/errors.js'

/** A mistake in the command line, or one the model described shows: printed with a pointer to --help, exit 2. */
export class LoadgenUsageError extends SvcError {
  override name = 'LoadgenUsageError'
  readonly code = 'INVALID_ARGUMENTS'
}
