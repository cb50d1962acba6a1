// The bodies of the model routes (lib/README.md §10), each declared once: the schema goes into
// /openapi.json as it is (components.schemas, under its name), and its type, BodyOf<…>, is what the
// builders of api-v1.ts and v2.ts return. The requests' schemas are here too, so every route can list
// them all; request.ts reads the bodies themselves.
import { Type, type Static } from 'typebox'
import { DRIFT_STATUSES } from '../drift/status.js'
import { SEVERITIES } from '../drift/psi.js'
import { MAX_ID_LENGTH, NUMERIC_DATATYPES } from '../models/inference/request.js'
import { PLATFORMS } from '../models/platform.js'
import { anyObject, named, nullable, openEnum, schemasOf, stringEnum, type BodyOf } from '../core/route-doc.js'

const shape = Type.Array(Type.Integer(), { description: 'Dimensions; -1 is a free one (the batch)' })
/** What a tensor of the metadata may hold: FP64 and BYTES for svc's own models, an ONNX graph's own input types. */
const METADATA_DATATYPES = ['FP64', 'FP32', 'INT64', 'INT32', 'BOOL', 'BYTES'] as const
const platform = openEnum(PLATFORMS, { description: "The runtime that serves it: svc's own kernel, or ONNX Runtime for a model.onnx" })
const nullableReference = Type.Unsafe<object | null>({
  type: ['object', 'null'],
  description:
    'The training distribution drift is measured against: bin `edges` and `proportions` with the training `min` and `max`, or level `proportions`; ' +
    'null without a reference. Bin `i` of the svc_drift_*bin* series is proportion `i`: below edges[0] for i = 0, from edges[i-1] below edges[i] ' +
    "after, the last open; a categorical feature's last bin, one past its levels, holds levels it never saw",
})

export const TENSOR_METADATA = named('TensorMetadata', Type.Object({ name: Type.String(), datatype: openEnum(METADATA_DATATYPES), shape }))
export type TensorMetadata = BodyOf<typeof TENSOR_METADATA.schema>

/** A version with its share, built once for each place it appears. */
const rolloutTarget = () =>
  Type.Object({ version: Type.String(), percent: Type.Number({ minimum: 0, maximum: 100, description: 'Percent of the traffic, 0 to 100' }) })

export const VERSION_STATE = named(
  'VersionState',
  Type.Object(
    {
      version: Type.String(),
      state: stringEnum(['READY', 'FAILED'], { description: 'READY: a build of it is loaded (the latest, or the one before); FAILED: none is' }),
      reason: nullable(
        Type.String({
          description: 'Why its latest files failed to load: always on FAILED; on READY, the build loaded before serves on. Null when they loaded',
        }),
      ),
    },
    { description: 'What the latest load of one version gave' },
  ),
)
export type VersionState = BodyOf<typeof VERSION_STATE.schema>

export const MODEL_SUMMARY = named(
  'ModelSummary',
  Type.Object({
    name: Type.String(),
    versions: Type.Array(Type.String(), { description: 'Versions loaded and servable' }),
    version_states: Type.Array(VERSION_STATE.ref, {
      description: 'Every version the manifest names (and any other still served), sorted, with its state: a version that failed to load shows here',
    }),
    default_version: nullable(Type.String({ description: "The manifest's default version; null when unknown" })),
    platform,
    state: stringEnum(['READY', 'UNAVAILABLE']),
    reason: nullable(Type.String({ description: 'Why it is UNAVAILABLE; null when READY' })),
    rollout: Type.Object(
      { canary: nullable(rolloutTarget()), shadow: nullable(rolloutTarget()) },
      {
        description:
          'The versions taking a share of the traffic, from the manifest: the canary answers `percent` of the requests naming no version ' +
          '(the default the rest), the shadow predicts `percent` of the answered requests again after the reply; null when not declared',
      },
    ),
    rollout_error: nullable(
      Type.String({
        description: "Why the manifest's latest canary or shadow was refused, naming the member; the split served before serves on. Null when accepted",
      }),
    ),
  }),
)
export type ModelSummary = BodyOf<typeof MODEL_SUMMARY.schema>

export const MODEL_LIST = named('ModelList', Type.Object({ models: Type.Array(MODEL_SUMMARY.ref) }))
export type ModelList = BodyOf<typeof MODEL_LIST.schema>

export const FEATURE_DRIFT = named(
  'FeatureDrift',
  Type.Object({
    name: Type.String(),
    psi: Type.Number({ minimum: 0 }),
    severity: stringEnum(SEVERITIES),
    samples: Type.Optional(Type.Integer({ minimum: 0 })),
    missing: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
)

const count = Type.Integer({ minimum: 0 })
const THRESHOLDS = Type.Object(
  {
    moderate: Type.Number({ minimum: 0 }),
    severe: Type.Number({ minimum: 0 }),
    spike: Type.Number({ minimum: 0, description: 'A rise since the previous check at least this large, at or above `moderate`, is a spike' }),
  },
  {
    description: 'PSI at or above which drift is moderate, and severe (SVC_DRIFT_MODERATE, SVC_DRIFT_SEVERE), and the rise that is a spike (SVC_DRIFT_SPIKE)',
  },
)

export const DRIFT_REPORT = named(
  'DriftReport',
  Type.Object(
    {
      status: stringEnum(DRIFT_STATUSES),
      checked_at: Type.Optional(nullable(Type.String({ format: 'date-time', description: 'The last check of any result; null before the first' }))),
      scored_at: Type.Optional(nullable(Type.String({ format: 'date-time', description: 'The last check that computed PSI; null before the first' }))),
      version: Type.Optional(nullable(Type.String({ description: 'The version the scores were computed for' }))),
      window: Type.Optional(Type.Object({ samples: count, capacity: count })),
      min_samples: Type.Optional(Type.Integer({ minimum: 0, description: 'Rows the window needs before PSI is computed' })),
      thresholds: Type.Optional(THRESHOLDS),
      features: Type.Optional(Type.Array(FEATURE_DRIFT.ref, { description: 'The scores of the last check that computed PSI' })),
      predictions: Type.Optional(
        Type.Unsafe<Static<typeof FEATURE_DRIFT.schema> | null>({
          description: "The answers' score (`name` is the label or value output) at the last check that scored them; null when not scored",
          oneOf: [FEATURE_DRIFT.ref, Type.Null()],
        }),
      ),
    },
    {
      description:
        'Drift of the live inputs and answers from the training distribution: the population stability index (PSI) of each feature, ' +
        'and of what the model answered, over a window of recent rows, as of the last scheduled check. Only `status` when monitoring is ' +
        'off (`disabled`); `no_reference` for a model served without a reference (an ONNX model without profile.json).',
    },
  ),
)
export type DriftReport = BodyOf<typeof DRIFT_REPORT.schema>

const MODEL_INPUT = Type.Object({
  name: Type.String(),
  datatype: openEnum(METADATA_DATATYPES, { description: 'What the input takes: FP64, an ONNX graph’s own type, or BYTES' }),
  shape,
  type: stringEnum(['numerical', 'categorical']),
  levels: Type.Optional(Type.Array(Type.String(), { description: 'A categorical input: its values' })),
  reference: Type.Optional(nullableReference),
  standardisation: Type.Optional(
    Type.Object(
      { mean: Type.Optional(Type.Number()), scale: Type.Optional(Type.Number()) },
      { description: "A numerical input of svc's own models: the training mean and standard deviation the model standardises with" },
    ),
  ),
})
/** One input as /api/v1/models/{name} shows it. */
export type ModelInput = BodyOf<typeof MODEL_INPUT>

const MODEL_OUTPUT = Type.Intersect([TENSOR_METADATA.ref, Type.Object({ reference: Type.Optional(nullableReference) })])
export type ModelOutput = BodyOf<typeof MODEL_OUTPUT>

/** What /api/v1/models/{name} adds to the summary for a version it serves. */
const SERVED_VERSION = Type.Object({
  version: Type.Optional(Type.String({ description: 'The version described' })),
  type: Type.Optional(
    Type.String({
      description: "The model family: `logistic_regression` or `linear_regression` for svc's own, metadata.json's `type` (else `onnx`) for an ONNX model",
    }),
  ),
  task: Type.Optional(stringEnum(['classification', 'regression'])),
  inputs: Type.Optional(Type.Array(MODEL_INPUT)),
  reference_rows: Type.Optional(nullable(Type.Integer({ minimum: 1, description: 'Training rows the reference distributions were taken from' }))),
  outputs: Type.Optional(
    Type.Array(MODEL_OUTPUT, { description: 'The response tensors; the first (label or value) with the reference of the answers, or null' }),
  ),
  classes: Type.Optional(Type.Array(Type.String(), { description: 'A classifier: the class names, in probability column order' })),
  metrics: Type.Optional(
    Type.Unsafe<Readonly<Record<string, number>> | null>({
      type: ['object', 'null'],
      additionalProperties: { type: 'number' },
      description:
        "Quality measured on labelled held-out rows, by metric: svc's own models' from their held-out split, " +
        "an ONNX model's from its profile's `quality` (`svc profile --target`); null when none was recorded",
    }),
  ),
  dataset: Type.Optional(nullable(Type.Object({ name: Type.String(), source: Type.String(), rows: count }))),
  sha256: Type.Optional(
    Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: "Of the artifact (RFC 8785 canonical JSON, without this member), or of an ONNX version's files",
    }),
  ),
  drift: Type.Optional(DRIFT_REPORT.ref),
})
export type ServedVersion = BodyOf<typeof SERVED_VERSION>

export const MODEL_DETAIL = named(
  'ModelDetail',
  Type.Intersect([MODEL_SUMMARY.ref, SERVED_VERSION], {
    description: 'The summary, plus the default version as served (absent while the model is UNAVAILABLE)',
  }),
)
export type ModelDetail = BodyOf<typeof MODEL_DETAIL.schema>

const DATATYPES = [...NUMERIC_DATATYPES, 'BOOL', 'BYTES'] as const

export const INPUT_TENSOR = named(
  'InputTensor',
  Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'A model input, or any other name for one [N, F] tensor of every input in model order' }),
      datatype: stringEnum(DATATYPES, {
        description:
          "Numerical inputs take the numeric types (an ONNX graph's INT64 or INT32 input an integer type, its BOOL input BOOL); categorical ones BYTES",
      }),
      shape: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 2, description: '[N] or [N, F]' }),
      data: Type.Unsafe<unknown[]>({
        type: 'array',
        description: 'Row-major, flat or (for [N, F]) N nested rows; numbers, true or false for BOOL, strings for BYTES',
      }),
      parameters: Type.Optional(anyObject({ description: 'Accepted and ignored' })),
    },
    { additionalProperties: false },
  ),
)

const ID = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, description: 'Echoed in the response; a new UUID when absent' })
export const REQUEST_OUTPUT = named(
  'RequestOutput',
  Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'One of the model’s outputs' }),
      parameters: Type.Optional(anyObject({ description: 'Accepted and ignored' })),
    },
    { additionalProperties: false },
  ),
)
const COMMON = {
  parameters: Type.Optional(anyObject({ description: 'Accepted for standard clients and ignored' })),
  outputs: Type.Optional(
    Type.Array(REQUEST_OUTPUT.ref, {
      description:
        'The outputs wanted: the response carries those only, in this order; every output when absent or empty. ' +
        'A name the model lacks, or one given twice, is a 400',
    }),
  ),
}
const inputs = Type.Array(INPUT_TENSOR.ref, { minItems: 1 })

export const INFER_REQUEST = named('InferRequest', Type.Object({ id: Type.Optional(ID), inputs, ...COMMON }, { additionalProperties: false }))

export const PREDICT_REQUEST = named(
  'PredictRequest',
  Type.Object(
    {
      model: Type.String(),
      version: Type.Optional(Type.String({ description: "Default: the manifest's default version" })),
      id: Type.Optional(ID),
      inputs: Type.Optional(inputs),
      instances: Type.Optional(
        Type.Array(Type.Unsafe<Readonly<Record<string, number | string>>>({ type: 'object', additionalProperties: { type: ['number', 'string'] } }), {
          minItems: 1,
        }),
      ),
      ...COMMON,
    },
    {
      additionalProperties: false,
      description: 'An Open Inference Protocol body plus `model`; `instances` (named-feature rows) may stand for `inputs`. One of the two, not both.',
      oneOf: [{ required: ['inputs'] }, { required: ['instances'] }],
    },
  ),
)

export const OUTPUT_TENSOR = named(
  'OutputTensor',
  Type.Object({
    name: Type.String(),
    datatype: stringEnum(['BYTES', 'FP64']),
    shape: Type.Array(Type.Integer({ minimum: 0 })),
    data: Type.Array(Type.Unsafe<number | string>({ type: ['number', 'string'] }), {
      description: 'Flat, row-major; probabilities rows sum to 1, columns in `classes` order',
    }),
  }),
)

/** Written as JSON text from the prediction's typed arrays (lib/models/inference/response.ts). */
export const INFER_RESPONSE = named(
  'InferResponse',
  Type.Object({
    model_name: Type.String(),
    model_version: Type.String(),
    id: Type.String(),
    outputs: Type.Array(OUTPUT_TENSOR.ref),
    feedback_tokens: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'POST /api/v1/predict with SVC_FEEDBACK_SECRET set: one token per row, in row order, ' +
          'to send back with the label of that row to POST /api/v1/feedback',
      }),
    ),
    parameters: Type.Optional(
      Type.Object(
        { feedback_tokens: Type.Array(Type.String()) },
        { description: 'POST /v2/…/infer with SVC_FEEDBACK_SECRET set: the feedback tokens, one per row, as /api/v1 gives them' },
      ),
    ),
  }),
)
export type InferResponse = BodyOf<typeof INFER_RESPONSE.schema>

export const MODEL_METADATA = named(
  'ModelMetadata',
  Type.Object({
    name: Type.String(),
    versions: Type.Array(Type.String()),
    platform,
    inputs: Type.Array(TENSOR_METADATA.ref),
    outputs: Type.Array(TENSOR_METADATA.ref),
  }),
)
export type ModelMetadata = BodyOf<typeof MODEL_METADATA.schema>

export const MODEL_READY = named('ModelReady', Type.Object({ name: Type.String(), ready: Type.Literal(true) }))
export type ModelReady = BodyOf<typeof MODEL_READY.schema>

export const SERVER_LIVE = named('ServerLive', Type.Object({ live: Type.Literal(true) }))
export type ServerLive = BodyOf<typeof SERVER_LIVE.schema>

export const SERVER_READY = named('ServerReady', Type.Object({ ready: Type.Literal(true) }))
export type ServerReady = BodyOf<typeof SERVER_READY.schema>

export const SERVER_METADATA = named('ServerMetadata', Type.Object({ name: Type.String(), version: Type.String(), extensions: Type.Array(Type.String()) }))
export type ServerMetadata = BodyOf<typeof SERVER_METADATA.schema>

/** Every schema the model routes use; each route lists them all, so any of them can move alone. */
export const MODEL_SCHEMAS = schemasOf([
  VERSION_STATE,
  MODEL_SUMMARY,
  MODEL_LIST,
  MODEL_DETAIL,
  DRIFT_REPORT,
  FEATURE_DRIFT,
  TENSOR_METADATA,
  INPUT_TENSOR,
  REQUEST_OUTPUT,
  INFER_REQUEST,
  PREDICT_REQUEST,
  OUTPUT_TENSOR,
  INFER_RESPONSE,
  MODEL_METADATA,
  MODEL_READY,
  SERVER_LIVE,
  SERVER_READY,
  SERVER_METADATA,
])
