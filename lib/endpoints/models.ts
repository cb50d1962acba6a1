// Model serving (lib/README.md §10): /api/v1 and the Open Inference Protocol (OIP, KServe v2 REST)
// over the same code, whatever runtime serves a model (lib/models/runtime.ts).
//
//   POST /api/v1/predict                                   { model, version?, id?, inputs | instances }
//   GET  /api/v1/models                                    { models: [summary] }
//   GET  /api/v1/models/{name}                             summary + the default version's schema and drift
//   POST /v2/models/{name}[/versions/{version}]/infer      OIP inference
//   GET  /v2/models/{name}[/versions/{version}]            OIP model metadata
//   GET  /v2/models/{name}[/versions/{version}]/ready      200 { name, ready: true }
//   GET  /v2/health/live                                   200 { live: true }
//   GET  /v2/health/ready                                  200 { ready: true } once a model is READY
//   GET  /v2                                               OIP server metadata { name, version, extensions }
//
// A summary is { name, versions, default_version, platform, state, reason } (null where unknown).
// `platform` is the runtime's (the default version's for a summary): "svc" for svc's own kernel
// (lib/models/kernel/runtime.ts). Metadata shapes use -1 for the batch dimension, as OIP does.
//
// Errors are problem+json with an `error` member (what OIP clients read), the detail again:
// MODEL_NOT_FOUND 404 (`Model iris with version 3 not found`), MODEL_NOT_READY 503 (the model is
// UNAVAILABLE; the reason is safe to show), SERVER_NOT_READY 503, the 400s of inference-request.ts
// and features.ts, and the 400/413/415 of ctx.json(). "Not ready" is 503, not the 4xx the OIP text
// suggests: svc answers 503 for every not-ready state (lib/README.md §7), and OIP clients only test
// for 200. The ready probes' problem bodies also carry `ready: false`.
//
// Order of checks: /api/v1 checks the body first (it names the model), /v2 finds the model first
// (the path names it). Outcomes are counted against a served model only (a body refused before the
// lookup counts against the served model it names), so a request naming an unknown model never
// creates a series. In flight spans from the model being found to the reply being built (for /v2,
// reading the body included); the duration histogram times encode + predict of successes only.
//
// hot path: a predictor that answers synchronously (the kernel) is never awaited: its reply is built
// in the same turn, and only a Promise from an async runtime is waited on.
import { performance } from 'node:perf_hooks'
import type { DriftMonitor } from '../drift/monitor.js'
import type { Ctx } from '../core/http/context.js'
import { HttpError } from '../core/http/errors.js'
import * as docs from './model-docs.js'
import { encodeInputs } from '../models/inference/features.js'
import { readInferRequest, readPredictRequest, type InferRequest, type PredictRequest } from '../models/inference/request.js'
import { inferResponseJson } from '../models/inference/response.js'
import type { ModelCells, ModelMetrics } from '../models/registry/metrics.js'
import type { ModelEntry, ModelRegistry, ServedModel } from '../models/registry/registry.js'
import type { FeatureReference, Input, ModelVersion, Prediction } from '../models/runtime.js'
import type { Handler, Reply, RouteDef } from '../core/pipeline.js'
import { VERSION } from '../process/version.js'

export const SERVER_NAME = 'svc'

export type ModelRoutesOptions = Readonly<{
  models: ModelRegistry
  metrics: ModelMetrics
  maxBatch: number
  /** Records accepted rows and reports drift; undefined when drift monitoring is off. */
  drift: DriftMonitor | undefined
}>

type TensorMetadata = Readonly<{ name: string; datatype: string; shape: readonly number[] }>

const fail = (status: number, code: string, detail: string, extra?: Readonly<Record<string, unknown>>): HttpError =>
  new HttpError(status, code, detail, { extra: { error: detail, ...extra } })

const notFound = (name: string, version: string | undefined): HttpError =>
  fail(404, 'MODEL_NOT_FOUND', version === undefined ? `Model ${name} not found` : `Model ${name} with version ${version} not found`)

// A model is UNAVAILABLE exactly when `reason` is set (ModelEntry).
const notReady = (entry: ModelEntry, extra?: Readonly<Record<string, unknown>>): HttpError =>
  fail(503, 'MODEL_NOT_READY', `Model ${entry.name} is not ready: ${entry.reason as string}`, extra)

const SERVER_NOT_READY = fail(503, 'SERVER_NOT_READY', 'No model is ready to serve', { ready: false })

/** ctx.json() with the `error` member added to its 400/413/415, which carry none. */
const readJson = async (ctx: Ctx): Promise<unknown> => {
  try {
    return await ctx.json()
  } catch (error: unknown) {
    const cause = error as HttpError // ctx.json() rejects with HttpError only
    throw new HttpError(cause.status, cause.code, cause.message, { extra: { ...cause.extra, error: cause.message }, cause })
  }
}

const inputMetadata = (input: Input): TensorMetadata => ({
  name: input.name,
  datatype: input.type === 'numerical' ? (input.datatype ?? 'FP64') : 'BYTES',
  shape: [-1],
})

const outputMetadata = (model: ModelVersion): TensorMetadata[] => {
  const classes = model.task === 'classification' ? model.classes.length : 0
  return model.outputs.map((output) =>
    output.type === 'label'
      ? { name: output.name, datatype: 'BYTES', shape: [-1] }
      : output.type === 'probabilities'
        ? { name: output.name, datatype: 'FP64', shape: [-1, classes] }
        : { name: output.name, datatype: 'FP64', shape: [-1] },
  )
}

const summary = (entry: ModelEntry): Record<string, unknown> => ({
  name: entry.name,
  versions: entry.versions,
  default_version: entry.defaultVersion ?? null,
  platform: entry.platform,
  state: entry.state,
  reason: entry.reason ?? null,
})

/**
 * One input as /api/v1/models/{name} shows it: its tensor metadata, its reference distribution
 * (what drift is measured against) and, for a numerical input, the training mean and standard
 * deviation the model standardises with. Enough for a client to draw realistic inputs.
 */
const describeInput = (model: ModelVersion, input: Input, j: number): Record<string, unknown> => {
  const reference = referenceOf(model.reference?.features[j])
  if (input.type === 'categorical' || model.standardisation === undefined) return { ...inputMetadata(input), ...input, reference }
  const k = model.inputs.slice(0, j).filter((other) => other.type === 'numerical').length
  const { mean, scale } = model.standardisation
  return { ...inputMetadata(input), ...input, reference, standardisation: { mean: mean[k], scale: scale[k] } }
}

/** A reference without its name and type (the input or output beside it says them); null when there is none. */
const referenceOf = (feature: FeatureReference | undefined): Record<string, unknown> | null => {
  if (feature === undefined) return null
  const { name: _, type: __, ...reference } = feature
  return reference
}

/** The outputs, the one whose answers are profiled (label or value) with its reference. */
const describeOutputs = (model: ModelVersion): Record<string, unknown>[] =>
  outputMetadata(model).map((output, i) => (i === 0 ? { ...output, reference: referenceOf(model.reference?.predictions) } : output))

/** What /api/v1/models/{name} adds for a served version: its schema and how it was trained. */
const schema = ({ model }: ServedModel): Record<string, unknown> => ({
  version: model.version,
  type: model.type,
  task: model.task,
  inputs: model.inputs.map((input, j) => describeInput(model, input, j)),
  reference_rows: model.reference?.rows ?? null,
  outputs: describeOutputs(model),
  ...(model.task === 'classification' ? { classes: model.classes } : {}),
  metrics: model.provenance?.metrics ?? null,
  dataset: model.provenance?.dataset ?? null,
  sha256: model.sha256,
})

/** Built once per served version and kept with it: a reload brings a new ServedModel, so a new body. */
const memo = <T>(build: (served: ServedModel) => T): ((served: ServedModel) => T) => {
  const cache = new WeakMap<ServedModel, T>()
  return (served) => {
    let value = cache.get(served)
    if (value === undefined) cache.set(served, (value = build(served)))
    return value
  }
}

const LIVE: Reply = Object.freeze({ kind: 'json', status: 200, body: Object.freeze({ live: true }) })
const READY: Reply = Object.freeze({ kind: 'json', status: 200, body: Object.freeze({ ready: true }) })
const SERVER_METADATA: Reply = Object.freeze({
  kind: 'json',
  status: 200,
  body: Object.freeze({ name: SERVER_NAME, version: VERSION, extensions: Object.freeze([]) }),
})

/** The drift block when monitoring is off. */
const DRIFT_DISABLED = Object.freeze({ status: 'disabled' })

export const modelRoutes = ({ models, metrics, maxBatch, drift }: ModelRoutesOptions): RouteDef[] => {
  const requestOptions = { maxBatch }

  /** The model to serve, or why there is none: unknown model or version 404, UNAVAILABLE 503. */
  const find = (name: string, version: string | undefined, extra?: Readonly<Record<string, unknown>>): ServedModel => {
    const served = models.resolve(name, version)
    if (served !== undefined) return served
    const entry = models.entry(name)
    if (entry === undefined) throw notFound(name, undefined)
    // A READY model always serves its default, so what is missing here is the version asked for.
    throw entry.state === 'READY' ? notFound(name, version) : notReady(entry, extra)
  }

  /** Records and counts a prediction of `served`, and builds its reply. */
  const answer = (
    ctx: Ctx,
    served: ServedModel,
    request: InferRequest,
    cells: ModelCells,
    features: Float64Array,
    prediction: Prediction,
    start: number,
  ): Reply => {
    drift?.record(served, features, request.rows, prediction)
    cells.duration.observe((performance.now() - start) / 1000)
    cells.predictions.inc(request.rows)
    cells.batchSize.observe(request.rows)
    cells.outcomes.success.inc()
    return { kind: 'json', status: 200, json: inferResponseJson(served.model, prediction, request.rows, request.id ?? ctx.requestId) }
  }

  /** Encodes and predicts one checked request; throws HttpError 400 for inputs the model refuses. */
  const infer = (ctx: Ctx, served: ServedModel, request: InferRequest, cells: ModelCells): Reply | Promise<Reply> => {
    const start = performance.now()
    const features = encodeInputs(request, served.model)
    const prediction = served.predictor.predict(features, request.rows)
    if (prediction instanceof Promise) return prediction.then((settled) => answer(ctx, served, request, cells, features, settled, start))
    return answer(ctx, served, request, cells, features, prediction, start)
  }

  /**
   * Counts a failure after the model was found (a deliberate 4xx is the client's, anything else
   * ours) and ends its time in flight. No try/finally: V8 coverage reports a never-taken branch
   * after a finally whose try and catch both leave the function.
   */
  const counted = (cells: ModelCells, error: unknown): unknown => {
    cells.inFlight.dec()
    const isClient = error instanceof HttpError && error.status < 500
    ;(isClient ? cells.outcomes.client_error : cells.outcomes.server_error).inc()
    return error
  }

  /** Ends a request's time in flight once its reply is built: now, or when an async predictor settles. */
  const settle = (cells: ModelCells, reply: Reply | Promise<Reply>): Reply | Promise<Reply> => {
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

  /** The served model a body names, if any: a body refused before the lookup still counts against it. */
  const namedIn = (body: unknown): ServedModel | undefined => {
    if (typeof body !== 'object' || body === null) return undefined
    const { model, version } = body as Readonly<Record<string, unknown>>
    return typeof model === 'string' && (version === undefined || typeof version === 'string') ? models.resolve(model, version) : undefined
  }

  const predict: Handler = async (ctx) => {
    const body = await readJson(ctx)
    let request: PredictRequest
    try {
      request = readPredictRequest(body, requestOptions)
    } catch (error: unknown) {
      // readPredictRequest throws HttpError 400 only: always the client's.
      const served = namedIn(body)
      if (served !== undefined) metrics.cellsFor(served).outcomes.client_error.inc()
      throw error
    }
    const served = find(request.model, request.version)
    const cells = metrics.cellsFor(served)
    cells.inFlight.inc()
    let reply: Reply | Promise<Reply>
    try {
      reply = infer(ctx, served, request, cells)
    } catch (error: unknown) {
      throw counted(cells, error)
    }
    return settle(cells, reply)
  }

  const inferV2: Handler = async (ctx) => {
    const name = ctx.params['name'] as string
    const version = ctx.params['version']
    const cells = metrics.cellsFor(find(name, version))
    cells.inFlight.inc()
    let reply: Reply | Promise<Reply>
    try {
      const request = readInferRequest(await readJson(ctx), requestOptions)
      // Found again once the body is read: a reload may have swapped (and released) the build found
      // before, and the one served now predicts in this same turn, before any release can run.
      reply = infer(ctx, find(name, version), request, cells)
    } catch (error: unknown) {
      throw counted(cells, error)
    }
    return settle(cells, reply)
  }

  const listModels: Handler = () => ({ kind: 'json', status: 200, body: { models: models.entries().map(summary) } })

  const detail = memo(schema)
  const getModel: Handler = (ctx) => {
    const name = ctx.params['name'] as string
    const entry = models.entry(name)
    if (entry === undefined) throw notFound(name, undefined)
    const served = models.resolve(name)
    if (served === undefined) return { kind: 'json', status: 200, body: summary(entry) }
    return { kind: 'json', status: 200, body: { ...summary(entry), ...detail(served), drift: drift === undefined ? DRIFT_DISABLED : drift.status(served) } }
  }

  // An ONNX graph's own inputs when it has a signature; otherwise one tensor per input.
  const metadata = memo(({ model }) => ({ inputs: model.signature ?? model.inputs.map(inputMetadata), outputs: outputMetadata(model) }))
  const getModelMetadata: Handler = (ctx) => {
    const served = find(ctx.params['name'] as string, ctx.params['version'])
    const { versions } = models.entry(served.name) as ModelEntry
    return { kind: 'json', status: 200, body: { name: served.name, versions, platform: served.model.platform, ...metadata(served) } }
  }

  const getModelReady: Handler = (ctx) => {
    const name = ctx.params['name'] as string
    find(name, ctx.params['version'], { name, ready: false })
    return { kind: 'json', status: 200, body: { name, ready: true } }
  }

  const getServerReady: Handler = () => {
    if (!models.isReady()) throw SERVER_NOT_READY
    return READY
  }

  const probe = { requestLogLevel: 'debug' } as const
  return [
    { method: 'POST', path: '/api/v1/predict', auth: 'api', handler: predict, doc: docs.PREDICT_DOC },
    { method: 'GET', path: '/api/v1/models', auth: 'api', handler: listModels, doc: docs.LIST_MODELS_DOC },
    { method: 'GET', path: '/api/v1/models/{name}', auth: 'api', handler: getModel, doc: docs.GET_MODEL_DOC },
    { method: 'POST', path: '/v2/models/{name}/infer', auth: 'api', handler: inferV2, doc: docs.INFER_DOC },
    { method: 'POST', path: '/v2/models/{name}/versions/{version}/infer', auth: 'api', handler: inferV2, doc: docs.INFER_VERSION_DOC },
    { method: 'GET', path: '/v2/models/{name}', auth: 'api', handler: getModelMetadata, doc: docs.MODEL_METADATA_DOC },
    { method: 'GET', path: '/v2/models/{name}/versions/{version}', auth: 'api', handler: getModelMetadata, doc: docs.MODEL_VERSION_METADATA_DOC },
    { method: 'GET', path: '/v2/models/{name}/ready', auth: 'api', handler: getModelReady, doc: docs.MODEL_READY_DOC },
    { method: 'GET', path: '/v2/models/{name}/versions/{version}/ready', auth: 'api', handler: getModelReady, doc: docs.MODEL_VERSION_READY_DOC },
    { method: 'GET', path: '/v2/health/live', auth: 'api', handler: () => LIVE, ...probe, doc: docs.SERVER_LIVE_DOC },
    { method: 'GET', path: '/v2/health/ready', auth: 'api', handler: getServerReady, ...probe, doc: docs.SERVER_READY_DOC },
    { method: 'GET', path: '/v2', auth: 'api', handler: () => SERVER_METADATA, doc: docs.SERVER_METADATA_DOC },
  ]
}
