// What `svc loadgen` refuses before it sends anything.

/** A mistake in the command line, or one the model described shows: printed with a pointer to --help, exit 2. */
export class LoadgenUsageError extends Error {
  override name = 'LoadgenUsageError'
}
