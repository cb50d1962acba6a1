// The Open Inference Protocol (OIP, KServe v2 REST) over the models /api/v1 serves (lib/README.md §10):
//
//   POST /v2/models/{name}[/versions/{version}]/infer      OIP inference
//   GET  /v2/models/{name}[/versions/{version}]            OIP model metadata
//   GET  /v2/models/{name}[/versions/{version}]/ready      200 { name, ready: true }
//   GET  /v2/health/live                                   200 { live: true }
//   GET  /v2/health/ready                                  200 { ready: true } once a model is READY
//   GET  /v2                                               OIP server metadata { name, version, extensions }
//
// Metadata shapes use -1 for the batch dimension, as OIP does; `platform` is the runtime's. The
// ready probes' problem bodies also carry `ready: false`. The path's model answers first (404, 503),
// then the body (400, 413, 415). Bodies are typed by their schemas (model-schemas.ts); what /v2
// shares with /api/v1, and the errors, are serving.ts's; a prediction is one call of
// lib/serving/serving.ts, and every /v2 route shares one serving.
//
// A request naming no version is routed (canary or default) once its body is read, where its model
// is found for the prediction; a body still arriving is read only for a model the path finds, and
// the model is found again once it is, so a build a reload replaced (and released) meanwhile is never
// predicted with.
import type { Ctx } from '../core/http/context.js'
import { readInferRequest, type InferRequest } from '../models/inference/request.js'
import type { ModelEntry } from '../models/registry/registry.js'
import { createModelServing, type ModelServing } from '../serving/serving.js'
import { route, type Endpoint, type Handler, type Reply, type RouteDef } from '../core/pipeline.js'
import { VERSION } from '../config/version.js'
import * as docs from './model-docs.js'
import type { ModelMetadata, ModelReady, ServerLive, ServerMetadata, ServerReady } from './model-schemas.js'
import { find, inputMetadata, memo, outputMetadata, readJson, readJsonNow, replyOf, SERVER_NOT_READY, type ModelRoutesOptions } from './serving.js'
import { toHttpError } from './problems.js'

export const SERVER_NAME = 'svc'

/** The parameters of every model path of /v2: the version only where the path names one. */
type ModelPath = Readonly<{ name: string; version?: string }>

const LIVE: Reply = Object.freeze({ kind: 'json', status: 200, body: Object.freeze({ live: true } satisfies ServerLive) })
const READY: Reply = Object.freeze({ kind: 'json', status: 200, body: Object.freeze({ ready: true } satisfies ServerReady) })
const SERVER_METADATA: Reply = Object.freeze({
  kind: 'json',
  status: 200,
  body: Object.freeze({ name: SERVER_NAME, version: VERSION, extensions: Object.freeze([]) } satisfies ServerMetadata),
})

/**
 * A body read in the request's turn (the route's `body: 'json'`) is answered with one lookup, in
 * predict. A body still on its way is read only for a model the path finds, which predict then finds
 * again: a reload may have swapped (and released) that build meanwhile. A body refused, unread or
 * unparsed, is the path's model's to answer first (404, 503), then counts against it.
 */
const inferEndpoint = (serving: ModelServing): Endpoint<ModelPath> => {
  const { requestOptions } = serving
  /** A body that could not be read, parsed or checked (400, 413, 415): the client's, after the path's model is found. */
  const refused = ({ name, version }: ModelPath, error: unknown): never => {
    find(serving, name, version)
    serving.refused(name, version)
    throw error
  }
  // The version is chosen once the body is read: the split reads its `id`; the one chosen predicts
  // in this same turn, before any release can run.
  const inferBody = (ctx: Ctx & { readonly params: ModelPath }, body: unknown): Reply | Promise<Reply> => {
    let request: InferRequest
    try {
      request = readInferRequest(body, requestOptions)
    } catch (error: unknown) {
      // readInferRequest throws RequestError only, a 400: always the client's.
      return refused(ctx.params, toHttpError(error))
    }
    let json: string | Promise<string>
    try {
      json = serving.predict(ctx, ctx.params.name, ctx.params.version, request)
    } catch (error: unknown) {
      throw toHttpError(error)
    }
    return replyOf(json)
  }
  return (ctx) => {
    if (!ctx.isBodyRead) {
      find(serving, ctx.params.name, ctx.params.version)
      return readJson(ctx).then(
        (body) => inferBody(ctx, body),
        (error: unknown) => refused(ctx.params, error),
      )
    }
    let body: unknown
    try {
      body = readJsonNow(ctx)
    } catch (error: unknown) {
      return refused(ctx.params, error)
    }
    return inferBody(ctx, body)
  }
}

const metadataEndpoint = (serving: ModelServing, { models }: ModelRoutesOptions): Endpoint<ModelPath> => {
  // An ONNX graph's own inputs when it has a signature; otherwise one tensor per input.
  const tensors = memo(({ model }) => ({ inputs: model.signature ?? model.inputs.map(inputMetadata), outputs: outputMetadata(model) }))
  return (ctx) => {
    const served = find(serving, ctx.params.name, ctx.params.version)
    const { versions } = models.entry(served.name) as ModelEntry
    const body: ModelMetadata = { name: served.name, versions, platform: served.model.platform, ...tensors(served) }
    return { kind: 'json', status: 200, body }
  }
}

const readyEndpoint =
  (serving: ModelServing): Endpoint<ModelPath> =>
  (ctx) => {
    const { name, version } = ctx.params
    find(serving, name, version, { name, ready: false })
    return { kind: 'json', status: 200, body: { name, ready: true } satisfies ModelReady }
  }

/** The /v2 routes, in the order the document lists them. */
export const v2Routes = (options: ModelRoutesOptions): RouteDef[] => {
  const { models } = options
  const getServerReady: Handler = () => {
    if (!models.isReady()) throw SERVER_NOT_READY
    return READY
  }
  // One serving for every /v2 route: a prediction, and the model lookup metadata and readiness share.
  const serving = createModelServing(options, 'v2')
  const inferV2 = inferEndpoint(serving)
  const getModelMetadata = metadataEndpoint(serving, options)
  const getModelReady = readyEndpoint(serving)
  const probe = { requestLogLevel: 'debug' } as const
  return [
    route({ method: 'POST', path: '/v2/models/{name}/infer', auth: 'api', body: 'json', handler: inferV2, doc: docs.INFER_DOC }),
    route({ method: 'POST', path: '/v2/models/{name}/versions/{version}/infer', auth: 'api', body: 'json', handler: inferV2, doc: docs.INFER_VERSION_DOC }),
    route({ method: 'GET', path: '/v2/models/{name}', auth: 'api', handler: getModelMetadata, doc: docs.MODEL_METADATA_DOC }),
    route({ method: 'GET', path: '/v2/models/{name}/versions/{version}', auth: 'api', handler: getModelMetadata, doc: docs.MODEL_VERSION_METADATA_DOC }),
    route({ method: 'GET', path: '/v2/models/{name}/ready', auth: 'api', handler: getModelReady, doc: docs.MODEL_READY_DOC }),
    route({ method: 'GET', path: '/v2/models/{name}/versions/{version}/ready', auth: 'api', handler: getModelReady, doc: docs.MODEL_VERSION_READY_DOC }),
    { method: 'GET', path: '/v2/health/live', auth: 'api', handler: () => LIVE, ...probe, doc: docs.SERVER_LIVE_DOC },
    { method: 'GET', path: '/v2/health/ready', auth: 'api', handler: getServerReady, ...probe, doc: docs.SERVER_READY_DOC },
    { method: 'GET', path: '/v2', auth: 'api', handler: () => SERVER_METADATA, doc: docs.SERVER_METADATA_DOC },
  ]
}
