// A prediction request the models domain refuses: what request.ts finds wrong with a body, and
// features.ts with a body against the model it names. Domain code, so no HTTP here: the model
// endpoints answer it as a 400 problem through the one table of lib/endpoints/problems.ts.
import { CodedError } from '../../core/errors.js'

export const REQUEST_ERROR_CODES = [
  /** The body's own members: not an object, an unknown member, a bad `id`, `model` or `version`. */
  'INVALID_REQUEST',
  /** A tensor or an instance: its name, datatype, shape or values, or what the model takes. */
  'INVALID_INPUT',
  /** More rows than SVC_MAX_BATCH. */
  'BATCH_TOO_LARGE',
] as const
export type RequestErrorCode = (typeof REQUEST_ERROR_CODES)[number]

/** The message names the input and the reason; `input` is the input's name when one is at fault. */
export class RequestError extends CodedError<RequestErrorCode> {
  override name = 'RequestError'
  readonly input: string | undefined
  constructor(code: RequestErrorCode, message: string, input?: string) {
    super(code, message)
    this.input = input
  }
}
