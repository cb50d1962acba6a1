// Model serving over /api/v1 (lib/README.md §10), whatever runtime serves a model (lib/models/runtime.ts):
//
//   POST /api/v1/predict          { model, version?, id?, inputs | instances }: the OIP response
//   GET  /api/v1/models           { models: [summary] }
//   GET  /api/v1/models/{name}    summary + the default version's schema and drift
//
// A summary is { name, versions, version_states, default_version, platform, state, reason, rollout,
// rollout_error } (null where unknown); `version_states` is [{ version, state, reason }], READY or
// FAILED, one per version the manifest names; `rollout` is { canary, shadow }, each
// { version, percent } or null.
// `platform` is the runtime's (the default version's): "svc" for svc's own kernel
// (lib/models/kernel/runtime.ts). Bodies are typed by their schemas (model-schemas.ts); what they
// share with /v2, and the errors, are serving.ts's; a prediction is one call of
// lib/serving/serving.ts. /api/v1 checks the body first (it names the
// model), then finds the model.
import type { Ctx } from '../core/http/context.js'
import { isObject } from '../core/json.js'
import type { FeatureReference, Input, ModelVersion } from '../models/runtime.js'
import type { ModelEntry, ServedModel } from '../models/registry/registry.js'
import { readPredictRequest, type PredictRequest } from '../models/inference/request.js'
import { route, type Endpoint, type Handler, type PathParams, type Reply, type RouteDef } from '../core/pipeline.js'
import * as docs from './model-docs.js'
import type { DriftReport, ModelDetail, ModelInput, ModelList, ModelOutput, ModelSummary, ServedVersion, VersionState } from './model-schemas.js'
import { toHttpError } from './problems.js'
import { createModelServing, type ModelServing } from '../serving/serving.js'
import { inputMetadata, memo, notFound, outputMetadata, readJson, readJsonNow, replyOf, type ModelRoutesOptions } from './serving.js'

const versionState = ({ version, state, reason }: ModelEntry['versionStates'][number]): VersionState => ({ version, state, reason: reason ?? null })

const summary = (entry: ModelEntry): ModelSummary => ({
  name: entry.name,
  versions: entry.versions,
  version_states: entry.versionStates.map(versionState),
  default_version: entry.defaultVersion ?? null,
  platform: entry.platform,
  state: entry.state,
  reason: entry.reason ?? null,
  rollout: { canary: entry.canary ?? null, shadow: entry.shadow ?? null },
  rollout_error: entry.rolloutError ?? null,
})

/** A reference without its name and type (the input or output beside it says them); null when there is none. */
const referenceOf = (feature: FeatureReference | undefined): object | null => {
  if (feature === undefined) return null
  const { name: _, type: __, ...reference } = feature
  return reference
}

/**
 * One input as /api/v1/models/{name} shows it: its tensor metadata, its reference distribution
 * (what drift is measured against) and, for a numerical input, the training mean and standard
 * deviation the model standardises with. Enough for a client to draw realistic inputs.
 */
const describeInput = (model: ModelVersion, input: Input, j: number): ModelInput => {
  const reference = referenceOf(model.reference?.features[j])
  if (input.type === 'categorical' || model.standardisation === undefined) return { ...inputMetadata(input), ...input, reference }
  const k = model.inputs.slice(0, j).filter((other) => other.type === 'numerical').length
  const { mean, scale } = model.standardisation
  // One mean and one scale per numerical input (ModelVersion.standardisation), so k is in range.
  return { ...inputMetadata(input), ...input, reference, standardisation: { mean: mean[k] as number, scale: scale[k] as number } }
}

/** The outputs, the one whose answers are profiled (label or value) with its reference. */
const describeOutputs = (model: ModelVersion): ModelOutput[] =>
  outputMetadata(model).map((output, i) => (i === 0 ? { ...output, reference: referenceOf(model.reference?.predictions) } : output))

/** What /api/v1/models/{name} adds for a served version: its schema and how it was trained. */
const servedVersion = ({ model }: ServedModel): ServedVersion => ({
  version: model.version,
  type: model.type,
  task: model.task,
  inputs: model.inputs.map((input, j) => describeInput(model, input, j)),
  reference_rows: model.reference?.rows ?? null,
  outputs: describeOutputs(model),
  ...(model.task === 'classification' ? { classes: model.classes } : {}),
  metrics: model.quality ?? null,
  dataset: model.provenance?.dataset ?? null,
  sha256: model.sha256,
})

/** The drift block when monitoring is off. */
const DRIFT_DISABLED: DriftReport = Object.freeze({ status: 'disabled' })

/** A refused body still counts against the served model it names, if it names one (ModelServing.refused). */
const countRefused = (serving: ModelServing, body: unknown): void => {
  if (!isObject(body)) return
  const model = body['model']
  const version = body['version']
  if (typeof model === 'string' && (version === undefined || typeof version === 'string')) serving.refused(model, version)
}

const predictEndpoint = (options: ModelRoutesOptions): Handler => {
  const serving = createModelServing(options, 'v1')
  const { requestOptions } = serving
  const predict = (ctx: Ctx, body: unknown): Reply | Promise<Reply> => {
    let request: PredictRequest
    try {
      request = readPredictRequest(body, requestOptions)
    } catch (error: unknown) {
      // readPredictRequest throws RequestError only, a 400: always the client's.
      countRefused(serving, body)
      throw toHttpError(error)
    }
    let json: string | Promise<string>
    try {
      json = serving.predict(ctx, request.model, request.version, request)
    } catch (error: unknown) {
      throw toHttpError(error)
    }
    return replyOf(json)
  }
  return (ctx) => (ctx.isBodyRead ? predict(ctx, readJsonNow(ctx)) : readJson(ctx).then((body) => predict(ctx, body)))
}

const getModelEndpoint = ({ models, drift }: ModelRoutesOptions): Endpoint<PathParams<'/api/v1/models/{name}'>> => {
  const detail = memo(servedVersion)
  return (ctx) => {
    const { name } = ctx.params
    const entry = models.entry(name)
    if (entry === undefined) throw notFound(name, undefined)
    const served = models.resolve(name)
    if (served === undefined) return { kind: 'json', status: 200, body: summary(entry) satisfies ModelDetail }
    const body: ModelDetail = { ...summary(entry), ...detail(served), drift: drift === undefined ? DRIFT_DISABLED : drift.status(served) }
    return { kind: 'json', status: 200, body }
  }
}

/** The /api/v1 routes, in the order the document lists them. */
export const apiV1Routes = (options: ModelRoutesOptions): RouteDef[] => {
  const { models } = options
  const listModels: Handler = () => ({ kind: 'json', status: 200, body: { models: models.entries().map(summary) } satisfies ModelList })
  return [
    { method: 'POST', path: '/api/v1/predict', auth: 'api', body: 'json', handler: predictEndpoint(options), doc: docs.PREDICT_DOC },
    { method: 'GET', path: '/api/v1/models', auth: 'api', handler: listModels, doc: docs.LIST_MODELS_DOC },
    route({ method: 'GET', path: '/api/v1/models/{name}', auth: 'api', handler: getModelEndpoint(options), doc: docs.GET_MODEL_DOC }),
  ]
}
