// A prediction, one call for /api/v1 and /v2 alike (lib/README.md §10): the model lookup, the
// rollout's routing, encoding, the run, the drift window or bin counters, the shadow copy, the
// feedback tokens, the payload log and the series (metrics.ts). The endpoints only translate HTTP
// to this call and back: the body read and checked, the answer's JSON text put in a reply, and a
// thrown error (ModelLookupError, RequestError, or a runtime's) answered through
// lib/endpoints/problems.ts.
//
// Outcomes are counted against a served model only (a body refused before the lookup counts against
// the served model it names, `refused`), so a request naming an unknown model never creates a
// series. In flight spans from the version being chosen to the answer being built; the duration
// histogram times encode + predict of successes only.
//
// Rollouts (lib/models/registry/rollout.ts). A request naming no version is answered by the canary
// for its share, by its routing key (the body's `id`, or the header SVC_ROLLOUT_KEY_HEADER names)
// when it has one; one naming a version bypasses the split. Its outcome, rows and duration count
// against the version that answered, which the answer's `model_version` and the request_completed
// line (`model`, `model_version`) name. Only the default version's rows enter the drift window (what
// svc_drift_psi scores); another version's count in its own bin counters. A share of the answered
// requests is copied to the shadow after the reply (lib/serving/shadow/).
//
// hot path: a predictor that answers synchronously (the kernel) is never awaited: the answer is
// built in the same turn as the call, and only a Promise from an async runtime is waited on.
import { performance } from 'node:perf_hooks'
import type { Ctx } from '../core/http/context.js'
import type { DriftMonitor } from '../drift/monitor.js'
import type { Feedback } from './feedback/feedback.js'
import { encodeInputs } from '../models/inference/features.js'
import { RequestError } from '../models/inference/request-error.js'
import { PredictionBusyError } from '../models/onnx/pool/busy-error.js'
import type { InferRequest, RequestOptions } from '../models/inference/request.js'
import { inferResponseJson, selectedResponseJson, selectOutputs } from '../models/inference/response.js'
import type { PayloadLog, Role } from './payload/log.js'
import type { ModelRegistry, ModelSlot, ServedModel } from '../models/registry/registry.js'
import { isInShare, routeOf } from '../models/registry/rollout.js'
import type { Prediction } from '../models/runtime.js'
import type { ShadowCopies } from './shadow/copies.js'
import { notFound, notReady } from './lookup-error.js'
import type { ModelCells, ModelMetrics } from './metrics.js'

export type ServingOptions = Readonly<{
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

/** Where each API puts an answer's feedback tokens (the JSON array text): /api/v1 at the top, /v2 in OIP `parameters`. */
export const TOKEN_MEMBERS = Object.freeze({
  v1: (tokens: string): string => `,"feedback_tokens":${tokens}`,
  v2: (tokens: string): string => `,"parameters":{"feedback_tokens":${tokens}}`,
})

export type Api = keyof typeof TOKEN_MEMBERS

export type ModelServing = Readonly<{
  requestOptions: RequestOptions
  /** The model to serve, or why there is none: throws ModelLookupError (unknown model or version, or UNAVAILABLE). */
  find(name: string, version: string | undefined): ServedModel
  /** A body refused before the lookup: the client's error, against the served model it names, if any. */
  refused(name: string, version: string | undefined): void
  /**
   * hot path: answers a checked request, the answer's JSON text: the version it names, else the
   * split's (`id` its routing key), counted, recorded and logged; throws as `find`, RequestError
   * for inputs the model refuses, or what the runtime threw.
   */
  predict(ctx: Ctx, name: string, version: string | undefined, request: InferRequest): string | Promise<string>
}>

/** The members `served` adds to its request_completed line, built once per served version. */
const answeredBy = new WeakMap<ServedModel, string>()
const logMembersOf = (served: ServedModel): string => {
  let members = answeredBy.get(served)
  if (members === undefined) {
    members = `,"model":${JSON.stringify(served.name)},"model_version":${JSON.stringify(served.version)}`
    answeredBy.set(served, members)
  }
  return members
}

/**
 * What the client got wrong is a RequestError (a 400); the worker pool too busy to answer in time a
 * PredictionBusyError (a 503, the service's overload, never the version's error); anything else a
 * runtime threw is ours.
 */
const outcomeOf = (cells: ModelCells, error: unknown) =>
  error instanceof RequestError ? cells.outcomes.client_error : error instanceof PredictionBusyError ? cells.outcomes.overloaded : cells.outcomes.server_error

/**
 * Counts a failure after the model was found; returns what to throw. No try/finally: V8 coverage
 * reports a never-taken branch after a finally whose try and catch both leave the function.
 */
const counted = (cells: ModelCells, error: unknown): unknown => {
  outcomeOf(cells, error).inc()
  return error
}

/** An answer built now, or one an async predictor settles later, whose failure is counted then. */
const settle = (cells: ModelCells, answer: string | Promise<string>): string | Promise<string> =>
  typeof answer === 'string'
    ? answer
    : answer.catch((error: unknown) => {
        throw counted(cells, error)
      })

/** A request's model as one publish holds it (ModelRegistry.published), and the build chosen to answer. */
type Chosen = Readonly<{ slot: ModelSlot; served: ServedModel }>

/** The build of `slot` for `version` (undefined: the default), or why there is none, a ModelLookupError. */
const servedIn = (slot: ModelSlot, version: string | undefined): ServedModel => {
  const served = version === undefined ? slot.defaultModel : slot.served.get(version)
  if (served !== undefined) return served
  const { entry } = slot
  // A READY model always serves its default, so what is missing here is the version asked for.
  throw entry.state === 'READY' ? notFound(entry.name, version) : notReady(entry.name, entry.reason as string)
}

/**
 * Finds the version that answers: the one named, else the split's; what is missing is a
 * ModelLookupError. The model is looked up once per request: the split, the drift window, the
 * shadow and the payload log read the same publish.
 */
const lookup = ({ models, routingHeader }: ServingOptions) => {
  const publishedAs = (name: string): ModelSlot => {
    const slot = models.published(name)
    if (slot === undefined) throw notFound(name, undefined)
    return slot
  }
  const find = (name: string, version: string | undefined): ServedModel => servedIn(publishedAs(name), version)
  const choose = (ctx: Ctx, name: string, version: string | undefined, id: string | undefined): Chosen => {
    const slot = publishedAs(name)
    if (version !== undefined) return { slot, served: servedIn(slot, version) }
    return { slot, served: routeOf(slot, routingHeader === undefined ? id : ctx.header(routingHeader)) ?? servedIn(slot, undefined) }
  }
  const refused = (name: string, version: string | undefined): ServedModel | undefined => {
    const slot = models.published(name)
    return slot === undefined ? undefined : version === undefined ? slot.defaultModel : slot.served.get(version)
  }
  return { find, choose, refused }
}

/** Queues a sampled answer for the payload log once its reply is written: references only, the event is built later; undefined when the log is off. */
const payloadLogger = ({ payload, routingHeader }: ServingOptions) =>
  payload === undefined
    ? undefined
    : (
        ctx: Ctx,
        { slot, served }: Chosen,
        request: InferRequest,
        features: Float64Array,
        prediction: Prediction,
        tokens: string | undefined,
        seconds: number,
        isNamed: boolean,
      ): void => {
        if (!payload.isSampled(slot.rollout.logPercent, routingHeader === undefined ? request.id : ctx.header(routingHeader))) return
        const role: Role = isNamed ? 'named' : slot.defaultModel === served ? 'default' : 'canary'
        const { rows } = request
        const requestId = request.id ?? ctx.requestId
        payload.prediction(ctx, { served, requestId, role, rows, features, prediction, tokens, durationMs: seconds * 1000, traceId: ctx.traceId })
      }

/** Copies a share of the requests a model answers to its shadow, unless the shadow answered; undefined without shadows. */
const shadowCopier = ({ shadows }: ServingOptions) =>
  shadows === undefined
    ? undefined
    : (ctx: Ctx, { slot, served }: Chosen, request: InferRequest, prediction: Prediction): void => {
        const { shadow } = slot.rollout
        if (shadow === undefined || shadow.served.version === served.version || !isInShare(shadow, undefined)) return
        shadows.copy(ctx, { shadow: shadow.served, primary: served, request, answered: prediction })
      }

/** The default version's rows enter the drift window, another's its bin counters; undefined when drift is off. */
const driftRecorder = ({ drift }: ServingOptions) =>
  drift === undefined
    ? undefined
    : ({ slot, served }: Chosen, features: Float64Array, rows: number, prediction: Prediction): void => {
        if (slot.defaultModel === served) drift.record(served, features, rows, prediction)
        else drift.count(served, features, rows, prediction)
      }

/** Counts a success of `served` in its series; the seconds it took, less any wait for an ONNX worker (the pool's own series). */
const countSuccess = (cells: ModelCells, rows: number, start: number, prediction: Prediction): number => {
  const seconds = (performance.now() - start) / 1000 - (prediction.waitedS ?? 0)
  cells.duration.observe(seconds)
  cells.predictions.inc(rows)
  cells.batchSize.observe(rows)
  cells.outcomes.success.inc()
  return seconds
}

export const createModelServing = (options: ServingOptions, api: Api): ModelServing => {
  const { metrics, maxBatch, feedback } = options
  const tokenMember = TOKEN_MEMBERS[api]
  const { find, choose, refused } = lookup(options)
  const record = driftRecorder(options)
  const copy = shadowCopier(options)
  const log = payloadLogger(options)

  /** Records and counts a prediction of `served`, and builds its answer's JSON text. */
  const answer = (
    ctx: Ctx,
    chosen: Chosen,
    request: InferRequest,
    cells: ModelCells,
    features: Float64Array,
    prediction: Prediction,
    start: number,
    selected: readonly number[] | undefined,
    isNamed: boolean,
  ): string => {
    const { served } = chosen
    record?.(chosen, features, request.rows, prediction)
    copy?.(ctx, chosen, request, prediction)
    ctx.logMembers = logMembersOf(served)
    const seconds = countSuccess(cells, request.rows, start, prediction)
    const id = request.id ?? ctx.requestId
    const tokens = feedback?.tokens(served, prediction, request.rows)
    // The members an answer adds after its outputs: the rows' feedback tokens when feedback is on.
    const tail = feedback === undefined ? undefined : tokens === undefined ? '' : tokenMember(tokens)
    log?.(ctx, chosen, request, features, prediction, tokens, seconds, isNamed)
    return selected === undefined
      ? inferResponseJson(served.model, prediction, request.rows, id, tail)
      : selectedResponseJson(served.model, prediction, request.rows, id, selected, tail)
  }

  /** Encodes and predicts one checked request; throws RequestError for inputs the model refuses. */
  const infer = (ctx: Ctx, chosen: Chosen, request: InferRequest, cells: ModelCells, isNamed: boolean): string | Promise<string> => {
    const { served } = chosen
    const start = performance.now()
    const features = encodeInputs(request, served.model)
    // Checked before predicting: a name the model lacks is the client's 400, and nothing is recorded.
    const selected = request.outputs === undefined ? undefined : selectOutputs(request.outputs, served.model)
    const prediction = served.predictor.predict(features, request.rows)
    if (prediction instanceof Promise) return prediction.then((settled) => answer(ctx, chosen, request, cells, features, settled, start, selected, isNamed))
    return answer(ctx, chosen, request, cells, features, prediction, start, selected, isNamed)
  }

  return {
    requestOptions: { maxBatch },
    find,
    refused: (name, version) => {
      const served = refused(name, version)
      if (served !== undefined) metrics.cellsFor(served).outcomes.client_error.inc()
    },
    // hot path: change with care
    predict: (ctx, name, version, request) => {
      const chosen = choose(ctx, name, version, request.id)
      const cells = metrics.cellsFor(chosen.served)
      let json: string | Promise<string>
      try {
        json = infer(ctx, chosen, request, cells, version !== undefined)
      } catch (error: unknown) {
        throw counted(cells, error)
      }
      return settle(cells, json)
    },
  }
}
