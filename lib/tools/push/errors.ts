// What `svc push` refuses, each code with its exit status: 2 for what the command line or the
// version's directory gets wrong, found before anything is written; 1 for what the store holds (the
// version pushed before with other bytes, a manifest svc would not serve, one other writers keep
// changing). A store's own failure is its StoreError, exit 1.
import { CodedError } from '../../core/errors.js'

export const PUSH_EXIT_STATUS = {
  INVALID_ARGUMENTS: 2,
  INVALID_VERSION_DIR: 2,
  VERSION_EXISTS: 1,
  INVALID_MANIFEST: 1,
  MANIFEST_CONTENDED: 1,
} as const
export type PushErrorCode = keyof typeof PUSH_EXIT_STATUS

export class PushError extends CodedError<PushErrorCode> {
  override name = 'PushError'
}
