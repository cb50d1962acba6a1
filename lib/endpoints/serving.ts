// What /api/v1 (api-v1.ts) and the Open Inference Protocol (v2.ts) share on the HTTP side: reading
// the body, the answer put in a reply, the errors of the model routes, and tensor metadata. A
// prediction itself is one call of lib/serving/serving.ts.
//
// Errors are problem+json with an `error` member (what OIP clients read), the detail again
// (oipExtra, lib/core/http/errors.ts): MODEL_NOT_FOUND 404 (`Model iris with version 3 not found`),
// MODEL_NOT_READY 503 (the model is UNAVAILABLE; the reason is safe to show), SERVER_NOT_READY 503,
// the 400s of request.ts and features.ts (problems.ts), and the 400/413/415 of ctx.json(). "Not
// ready" is 503, not the 4xx the OIP text suggests: svc answers 503 for every not-ready state
// (lib/README.md §7), and OIP clients only test for 200.
//
// hot path: the body is read before the pipeline (route `body: 'json'`) and a predictor that answers
// synchronously (the kernel) is never awaited: the reply is built in the same turn as the body's
// last byte, through every layer, and only a Promise from an async runtime is waited on.
import type { Ctx } from '../core/http/context.js'
import { HttpError, oipExtra, type ProblemExtra } from '../core/http/errors.js'
import type { Reply } from '../core/pipeline.js'
import type { ServedModel } from '../models/registry/registry.js'
import type { Input, ModelVersion } from '../models/runtime.js'
import { notFound as lookupNotFound } from '../serving/lookup-error.js'
import type { ModelServing, ServingOptions } from '../serving/serving.js'
import type { TensorMetadata } from './model-schemas.js'
import { rethrowAsHttp, toHttpError } from './problems.js'

export type ModelRoutesOptions = ServingOptions

export const notFound = (name: string, version: string | undefined): unknown => toHttpError(lookupNotFound(name, version))

const fail = (status: number, code: string, detail: string, extra?: ProblemExtra): HttpError =>
  new HttpError(status, code, detail, { extra: oipExtra(detail, extra) })

export const SERVER_NOT_READY = fail(503, 'SERVER_NOT_READY', 'No model is ready to serve', { ready: false })

/** The model to serve (ModelServing.find), a missing one as its answer: 404, or 503 with `notReadyExtra`. */
export const find = (serving: ModelServing, name: string, version: string | undefined, notReadyExtra?: ProblemExtra): ServedModel => {
  try {
    return serving.find(name, version)
  } catch (error: unknown) {
    throw toHttpError(error, notReadyExtra)
  }
}

/** A successful prediction's reply: its JSON text. */
export const answered = (json: string): Reply => ({ kind: 'json', status: 200, json })

/** A prediction's reply: now, or once an async predictor settles (its error answered as toHttpError makes it). */
export const replyOf = (json: string | Promise<string>): Reply | Promise<Reply> =>
  typeof json === 'string' ? answered(json) : json.then(answered, rethrowAsHttp)

/** An error of ctx.json() or ctx.jsonNow() (HttpError only) with the `error` member added to its 400/413/415, which carry none. */
const withOipError = (error: unknown): HttpError => {
  const cause = error as HttpError
  return new HttpError(cause.status, cause.code, cause.message, { extra: oipExtra(cause.message, cause.extra), cause })
}

/** ctx.json() with the `error` member on its errors. */
export const readJson = (ctx: Ctx): Promise<unknown> =>
  ctx.json().catch((error: unknown) => {
    throw withOipError(error)
  })

/**
 * ctx.jsonNow() with the `error` member on its errors: the body the server read before the pipeline
 * (`ctx.isBodyRead`; the model routes declare `body: 'json'`), so the endpoint answers in this turn.
 */
export const readJsonNow = (ctx: Ctx): unknown => {
  try {
    return ctx.jsonNow()
  } catch (error: unknown) {
    throw withOipError(error)
  }
}

export const inputMetadata = (input: Input): TensorMetadata => ({
  name: input.name,
  datatype: input.type === 'numerical' ? (input.datatype ?? 'FP64') : 'BYTES',
  shape: [-1],
})

export const outputMetadata = (model: ModelVersion): TensorMetadata[] => {
  const classes = model.task === 'classification' ? model.classes.length : 0
  return model.outputs.map((output) =>
    output.type === 'label'
      ? { name: output.name, datatype: 'BYTES', shape: [-1] }
      : output.type === 'probabilities'
        ? { name: output.name, datatype: 'FP64', shape: [-1, classes] }
        : { name: output.name, datatype: 'FP64', shape: [-1] },
  )
}

/** Built once per served version and kept with it: a reload brings a new ServedModel, so a new body. */
export const memo = <T>(build: (served: ServedModel) => T): ((served: ServedModel) => T) => {
  const cache = new WeakMap<ServedModel, T>()
  return (served) => {
    let value = cache.get(served)
    if (value === undefined) cache.set(served, (value = build(served)))
    return value
  }
}
