// What /api/v1 (api-v1.ts) and the Open Inference Protocol (v2.ts) share: finding the model a
// request names, predicting and counting, the errors of the model routes, and tensor metadata.
//
// Errors are problem+json with an `error` member (what OIP clients read), the detail again
// (oipExtra, lib/core/http/errors.ts): MODEL_NOT_FOUND 404 (`Model iris with version 3 not found`),
// MODEL_NOT_READY 503 (the model is UNAVAILABLE; the reason is safe to show), SERVER_NOT_READY 503,
// the 400s of request.ts and features.ts (problems.ts), and the 400/413/415 of ctx.json(). "Not
// ready" is 503, not the 4xx the OIP text suggests: svc answers 503 for every not-ready state
// (lib/README.md §7), and OIP clients only test for 200.
//
// Outcomes are counted against a served model only (a body refused before the lookup counts against
// the served model it names, on /v2 the one its path names), so a request naming an unknown model
// never creates a series. In flight spans from the version being chosen to the reply being built
// (the server reads the body before, as both routes declare `body: 'json'`); the duration histogram
// times encode + predict of successes only.
//
// Rollouts (lib/models/registry/rollout.ts). A request naming no version is answered by the canary
// for its share, by its routing key (the body's `id`, or the header SVC_ROLLOUT_KEY_HEADER names)
// when it has one; one naming a version bypasses the split. Its outcome, rows and duration count
// against the version that answered, which the answer's `model_version` and the request_completed
// line (`model`, `model_version`) name. Only the default version's rows enter the drift window (what
// svc_drift_psi scores); another version's count in its own bin counters. A share of the answered
// requests is copied to the shadow after the reply (lib/models/shadow/).
//
// hot path: the body is read before the pipeline (route `body: 'json'`) and a predictor that answers
// synchronously (the kernel) is never awaited: the reply is built in the same turn as the body's
// last byte, through every layer, and only a Promise from an async runtime is waited on.
import { performance } from 'node:perf_hooks'
import type { DriftMonitor } from '../drift/monitor.js'
import type { Ctx } from '../core/http/context.js'
import { HttpError, oipExtra, type ProblemExtra } from '../core/http/errors.js'
import type { Reply } from '../core/pipeline.js'
import { encodeInputs } from '../models/inference/features.js'
import type { InferRequest, RequestOptions } from '../models/inference/request.js'
import { inferResponseJson, selectedResponseJson, selectOutputs } from '../models/inference/response.js'
import type { ModelCells, ModelMetrics } from '../models/registry/metrics.js'
import type { ModelEntry, ModelRegistry, ServedModel } from '../models/registry/registry.js'
import { isInShare } from '../models/registry/rollout.js'
import type { Input, ModelVersion, Prediction } from '../models/runtime.js'
import type { ShadowCopies } from '../models/shadow/copies.js'
import type { Feedback } from '../models/feedback/feedback.js'
import type { PayloadLog, Role } from '../models/payload/log.js'
import type { TensorMetadata } from './model-schemas.js'
import { toHttpError } from './problems.js'

export type ModelRoutesOptions = Readonly<{
  models: ModelRegistry
  metrics: ModelMetrics
  maxBatch: number
  /** Records accepted rows and reports drift; undefined when drift monitoring is off. */
  drift: DriftMonitor | undefined
  /** Predicts the shadow's copies after the reply; undefined for none (tests). */
  shadows?: ShadowCopies | undefined
  /** The lower-case header whose value is a request's routing key instead of its `id` (SVC_ROLLOUT_KEY_HEADER). */
  routingHeader?: string | undefined
  /** Signs a feedback token per answered row; undefined when feedback is off. */
  feedback?: Feedback | undefined
  /** Writes a sampled share of the answers after the reply (SVC_PAYLOAD_LOG); undefined when off. */
  payload?: PayloadLog | undefined
}>

const fail = (status: number, code: string, detail: string, extra?: ProblemExtra): HttpError =>
  new HttpError(status, code, detail, { extra: oipExtra(detail, extra) })

export const notFound = (name: string, version: string | undefined): HttpError =>
  fail(404, 'MODEL_NOT_FOUND', version === undefined ? `Model ${name} not found` : `Model ${name} with version ${version} not found`)

// A model is UNAVAILABLE exactly when `reason` is set (ModelEntry).
const notReady = (entry: ModelEntry, extra?: ProblemExtra): HttpError =>
  fail(503, 'MODEL_NOT_READY', `Model ${entry.name} is not ready: ${entry.reason as string}`, extra)

export const SERVER_NOT_READY = fail(503, 'SERVER_NOT_READY', 'No model is ready to serve', { ready: false })

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

/**
 * Counts a failure after the model was found (a deliberate 4xx is the client's, anything else
 * ours) and ends its time in flight; returns what to throw, a domain error as its answer. No
 * try/finally: V8 coverage reports a never-taken branch after a finally whose try and catch both
 * leave the function.
 */
export const counted = (cells: ModelCells, error: unknown): unknown => {
  cells.inFlight.dec()
  const answer = toHttpError(error)
  const isClient = answer instanceof HttpError && answer.status < 500
  ;(isClient ? cells.outcomes.client_error : cells.outcomes.server_error).inc()
  return answer
}

/** Ends a request's time in flight once its reply is built: now, or when an async predictor settles. */
export const settle = (cells: ModelCells, reply: Reply | Promise<Reply>): Reply | Promise<Reply> => {
  if (reply instanceof Promise) {
    return reply.then(
      (settled) => settle(cells, settled),
      (error: unknown) => {
        throw counted(cells, error)
      },
    )
  }
  cells.inFlight.dec()
  return reply
}

export type Serving = Readonly<{
  requestOptions: RequestOptions
  /** The model to serve, or why there is none: unknown model or version 404, UNAVAILABLE 503 (with `extra`). */
  find(name: string, version: string | undefined, extra?: ProblemExtra): ServedModel
  /** hot path: the version that answers a checked request: the one it names, else the split's (`id` its routing key); throws as `find`. */
  choose(ctx: Ctx, name: string, version: string | undefined, id: string | undefined): ServedModel
  /** Encodes and predicts one checked request (`isNamed`: it named its version); throws RequestError for inputs the model refuses. */
  infer(ctx: Ctx, served: ServedModel, request: InferRequest, cells: ModelCells, isNamed: boolean): Reply | Promise<Reply>
}>

/** The members `served` adds to its request_completed line. */
const answeredBy = memo(({ name, version }) => `,"model":${JSON.stringify(name)},"model_version":${JSON.stringify(version)}`)

/** Where each API puts an answer's feedback tokens (the JSON array text): /api/v1 at the top, /v2 in OIP `parameters`. */
export const TOKEN_MEMBERS = Object.freeze({
  v1: (tokens: string): string => `,"feedback_tokens":${tokens}`,
  v2: (tokens: string): string => `,"parameters":{"feedback_tokens":${tokens}}`,
})

/** Queues a sampled answer for the payload log once its reply is written: references only, the event is built later; undefined when the log is off. */
const payloadLogger = (payload: PayloadLog | undefined, models: ModelRegistry, routingHeader: string | undefined) =>
  payload === undefined
    ? undefined
    : (
        ctx: Ctx,
        served: ServedModel,
        request: InferRequest,
        features: Float64Array,
        prediction: Prediction,
        tokens: string | undefined,
        seconds: number,
        isNamed: boolean,
      ): void => {
        if (!payload.isSampled(served.name, routingHeader === undefined ? request.id : ctx.header(routingHeader))) return
        const role: Role = isNamed ? 'named' : models.resolve(served.name) === served ? 'default' : 'canary'
        const { rows } = request
        const requestId = request.id ?? ctx.requestId
        payload.prediction(ctx, { served, requestId, role, rows, features, prediction, tokens, durationMs: seconds * 1000, traceId: ctx.traceId })
      }

export const createServing = (
  { models, maxBatch, drift, shadows, routingHeader, feedback, payload }: ModelRoutesOptions,
  api: keyof typeof TOKEN_MEMBERS,
): Serving => {
  const tokenMember = TOKEN_MEMBERS[api]
  const find = (name: string, version: string | undefined, extra?: ProblemExtra): ServedModel => {
    const served = models.resolve(name, version)
    if (served !== undefined) return served
    const entry = models.entry(name)
    if (entry === undefined) throw notFound(name, undefined)
    // A READY model always serves its default, so what is missing here is the version asked for.
    throw entry.state === 'READY' ? notFound(name, version) : notReady(entry, extra)
  }

  /** Copies a share of the requests a model answers to its shadow, unless the shadow answered. */
  const copy =
    shadows === undefined
      ? undefined
      : (ctx: Ctx, served: ServedModel, request: InferRequest, prediction: Prediction): void => {
          const shadow = models.shadowOf(served.name)
          if (shadow === undefined || shadow.served.version === served.version || !isInShare(shadow, undefined)) return
          shadows.copy(ctx, { shadow: shadow.served, primary: served, request, answered: prediction })
        }

  const log = payloadLogger(payload, models, routingHeader)

  /** Records and counts a prediction of `served`, and builds its reply. */
  const answer = (
    ctx: Ctx,
    served: ServedModel,
    request: InferRequest,
    cells: ModelCells,
    features: Float64Array,
    prediction: Prediction,
    start: number,
    selected: readonly number[] | undefined,
    isNamed: boolean,
  ): Reply => {
    if (drift !== undefined) {
      if (models.resolve(served.name) === served) drift.record(served, features, request.rows, prediction)
      else drift.count(served, features, request.rows, prediction)
    }
    copy?.(ctx, served, request, prediction)
    ctx.logMembers = answeredBy(served)
    const seconds = (performance.now() - start) / 1000
    cells.duration.observe(seconds)
    cells.predictions.inc(request.rows)
    cells.batchSize.observe(request.rows)
    cells.outcomes.success.inc()
    const id = request.id ?? ctx.requestId
    const tokens = feedback?.tokens(served, prediction, request.rows)
    // The members an answer adds after its outputs: the rows' feedback tokens when feedback is on.
    const tail = feedback === undefined ? undefined : tokens === undefined ? '' : tokenMember(tokens)
    log?.(ctx, served, request, features, prediction, tokens, seconds, isNamed)
    const json =
      selected === undefined
        ? inferResponseJson(served.model, prediction, request.rows, id, tail)
        : selectedResponseJson(served.model, prediction, request.rows, id, selected, tail)
    return { kind: 'json', status: 200, json }
  }

  return {
    requestOptions: { maxBatch },
    find,
    choose: (ctx, name, version, id) => {
      if (version !== undefined) return find(name, version)
      return models.route(name, routingHeader === undefined ? id : ctx.header(routingHeader)) ?? find(name, undefined)
    },
    infer: (ctx, served, request, cells, isNamed) => {
      const start = performance.now()
      const features = encodeInputs(request, served.model)
      // Checked before predicting: a name the model lacks is the client's 400, and nothing is recorded.
      const selected = request.outputs === undefined ? undefined : selectOutputs(request.outputs, served.model)
      const prediction = served.predictor.predict(features, request.rows)
      if (prediction instanceof Promise) return prediction.then((settled) => answer(ctx, served, request, cells, features, settled, start, selected, isNamed))
      return answer(ctx, served, request, cells, features, prediction, start, selected, isNamed)
    },
  }
}
