// Why a request finds no model to answer it: the name or version is unknown, or the model is
// UNAVAILABLE. Domain code, so no HTTP here: the model endpoints answer it (404, 503) through
// lib/endpoints/serving.ts.
import { CodedError } from '../core/errors.js'

export type ModelLookupErrorCode = 'MODEL_NOT_FOUND' | 'MODEL_NOT_READY'

/** The message is the problem's detail as it is answered: `Model iris with version 3 not found`. */
export class ModelLookupError extends CodedError<ModelLookupErrorCode> {
  override name = 'ModelLookupError'
}

export const notFound = (name: string, version: string | undefined): ModelLookupError =>
  new ModelLookupError('MODEL_NOT_FOUND', version === undefined ? `Model ${name} not found` : `Model ${name} with version ${version} not found`)

/** `reason` is set exactly when a model is UNAVAILABLE (ModelEntry). */
export const notReady = (name: string, reason: string): ModelLookupError => new ModelLookupError('MODEL_NOT_READY', `Model ${name} is not ready: ${reason}`)
