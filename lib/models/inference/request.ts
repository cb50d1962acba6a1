// Prediction request bodies (lib/README.md §10), checked for what they can get wrong without the
// model: `readPredictRequest` (POST /api/v1/predict) and `readInferRequest` (Open Inference
// Protocol, POST /v2/models/{name}[/versions/{v}]/infer, where the path names the model) check
// members, `id`, each tensor's name, datatype, shape and values, and the batch size. The endpoint
// then finds the model, and `encodeInputs` (features.ts) checks what needs it and builds the
// features. Every failure is a RequestError (./request-error.ts) whose message names the input and
// the reason, with the input's name as `input`: INVALID_REQUEST (the body's own members),
// INVALID_INPUT (a tensor or instance), BATCH_TOO_LARGE. The model endpoints answer it as a 400
// (lib/endpoints/problems.ts).
//
// Forms of `inputs` (OIP tensors; `data` flat row-major, or for shape [N, F] also N nested rows):
//   one tensor per model input, named as the input, shape [N] or [N, 1], all with the same N;
//     numerical inputs take FP64, FP32, INT8..INT64 or UINT8..UINT64 (JSON numbers; integers in
//     range for the INT and UINT types) or BOOL (true or false), as the input's own datatype allows
//     (features.ts), categorical inputs take BYTES (strings, one of the levels);
//   one tensor [N, F] named otherwise, F = the model's input count, columns in the model's input
//     order: numerical datatypes only, so only for models whose inputs are all numerical.
// A model whose format declares its own tensors (an ONNX graph's, `signature` in runtime.ts) takes
// those instead, by name, shape and datatype, and nothing else (features.ts).
// /api/v1 also takes `instances`: named-feature rows, checked by `encodeRows` (features.ts).
// `outputs` ([{name, parameters?}], OIP's outputs asked for) is read only when present: the names,
// each once (a repeat is INVALID_REQUEST); the response carries those outputs only, in that order
// (response.ts checks them against the model). Absent or empty, it asks for every output, as OIP
// says: all are returned when none is named.
// Unknown members are refused (a misspelt `input` is an error, not an empty request), but OIP's
// `parameters` (of the request, of a tensor and of an output) are accepted for standard clients
// and otherwise ignored.
//
// A request's `outputs` (`[{"name", "parameters"?}]`, on both APIs and with `instances` too) names
// the outputs it wants: the answer carries those only, in that order, and every output when
// `outputs` is absent or empty (OIP: all are returned only when none is named). A name given twice,
// or one the model lacks (checked before predicting), is a 400 INVALID_REQUEST naming it.
// SVC_MAX_BATCH bounds the rows.
import { isObject, type JsonObject } from '../../core/json.js'
import { RequestError } from './request-error.js'

export const NUMERIC_DATATYPES = ['FP64', 'FP32', 'INT64', 'INT32', 'INT16', 'INT8', 'UINT64', 'UINT32', 'UINT16', 'UINT8'] as const
export type NumericDatatype = (typeof NUMERIC_DATATYPES)[number]
export type Datatype = NumericDatatype | 'BOOL' | 'BYTES'

/** Longest `id` echoed back; a correlation id, not a payload. */
export const MAX_ID_LENGTH = 256

/** One checked input tensor; `data` is flat and row-major whatever the request sent. */
export type Tensor =
  /** BOOL data as 1 for true, 0 for false. */
  | Readonly<{ name: string; datatype: NumericDatatype | 'BOOL'; shape: readonly number[]; data: readonly number[] }>
  | Readonly<{ name: string; datatype: 'BYTES'; shape: readonly number[]; data: readonly string[] }>

type Common = Readonly<{
  /** The request's own id, to echo; undefined when it sent none. */
  id: string | undefined
  /** The batch size N: at least 1, at most `maxBatch`. */
  rows: number
  /** The outputs asked for, by name, each once and in the order to answer them; undefined (or absent) for all. */
  outputs?: readonly string[] | undefined
}>

/** A checked OIP request body, not yet matched against a model. */
export type InferRequest =
  | (Common & Readonly<{ kind: 'tensors'; inputs: readonly Tensor[] }>)
  | (Common & Readonly<{ kind: 'instances'; instances: readonly unknown[] }>)

/** An /api/v1 request body: an InferRequest plus the model it names. */
export type PredictRequest = InferRequest & Readonly<{ model: string; version: string | undefined }>

export type RequestOptions = Readonly<{ maxBatch: number }>

// Integer types: min <= x < limit, so 2 ** 63 (which 2 ** 63 - 1 rounds to) is out of INT64.
// FP32 admits magnitudes below 2 ** 128; finiteness is checked first for every numeric type.
type Range = Readonly<{ datatype: NumericDatatype; isInteger: boolean; min: number; limit: number }>
const integers = (datatype: NumericDatatype, bits: number, isSigned: boolean): Range =>
  isSigned ? { datatype, isInteger: true, min: -(2 ** (bits - 1)), limit: 2 ** (bits - 1) } : { datatype, isInteger: true, min: 0, limit: 2 ** bits }
// Keyed by unknown, so that a request's datatype, whatever it holds, is looked up without a cast.
const RANGES: ReadonlyMap<unknown, Range> = new Map<NumericDatatype, Range>([
  ['FP64', { datatype: 'FP64', isInteger: false, min: -Infinity, limit: Infinity }],
  ['FP32', { datatype: 'FP32', isInteger: false, min: -(2 ** 128), limit: 2 ** 128 }],
  ['INT64', integers('INT64', 64, true)],
  ['INT32', integers('INT32', 32, true)],
  ['INT16', integers('INT16', 16, true)],
  ['INT8', integers('INT8', 8, true)],
  ['UINT64', integers('UINT64', 64, false)],
  ['UINT32', integers('UINT32', 32, false)],
  ['UINT16', integers('UINT16', 16, false)],
  ['UINT8', integers('UINT8', 8, false)],
])
const DATATYPE_LIST = [...NUMERIC_DATATYPES, 'BOOL', 'BYTES'].join(', ')

const V1_MEMBERS: ReadonlySet<string> = new Set(['model', 'version', 'id', 'inputs', 'instances', 'parameters', 'outputs'])
const V2_MEMBERS: ReadonlySet<string> = new Set(['id', 'inputs', 'parameters', 'outputs'])
const TENSOR_MEMBERS: ReadonlySet<string> = new Set(['name', 'datatype', 'shape', 'data', 'parameters'])
const V1_MEMBER_LIST = [...V1_MEMBERS].join(', ')
const V2_MEMBER_LIST = [...V2_MEMBERS].join(', ')
const TENSOR_MEMBER_LIST = [...TENSOR_MEMBERS].join(', ')
const OUTPUT_MEMBERS: ReadonlySet<string> = new Set(['name', 'parameters'])

const invalidRequest = (detail: string): RequestError => new RequestError('INVALID_REQUEST', detail)
/** An INVALID_INPUT naming the input when there is one. */
export const invalidInput = (name: string | undefined, detail: string): RequestError => new RequestError('INVALID_INPUT', detail, name)

export const shapeText = (shape: readonly number[]): string => `[${shape.join(', ')}]`

const checkBatch = (rows: number, maxBatch: number, name?: string): void => {
  if (rows > maxBatch) throw new RequestError('BATCH_TOO_LARGE', `the batch has ${rows} rows; at most ${maxBatch} are allowed per request`, name)
}

const readId = (value: unknown): string | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH)
    throw invalidRequest(`id must be a string of 1 to ${MAX_ID_LENGTH} characters`)
  return value
}

/** Throws unless every row of nested `data` is an array of F values, as its [N, F] `shape` says. */
function checkRows(data: readonly unknown[], shape: readonly number[], name: string): asserts data is readonly (readonly unknown[])[] {
  const width = shape[1] as number
  for (let r = 0; r < data.length; r++) {
    const row = data[r]
    if (!Array.isArray(row) || row.length !== width) {
      throw invalidInput(
        name,
        `input ${name}: data[${r}] must be a row of ${width} values, as shape ${shapeText(shape)} says; nested rows must all have the same length`,
      )
    }
  }
}

/** Nested rows [[…], …] of a [N, F] tensor, flattened; every row must be an array of F values. */
const unnest = (data: readonly unknown[], shape: readonly number[], name: string): readonly unknown[] => {
  checkRows(data, shape, name)
  // The one copy made of request data, and only for nested rows: `predict` reads them flat.
  return data.flat()
}

/** Throws unless every value of BYTES `data` is a string. */
function checkStrings(data: readonly unknown[], name: string): asserts data is readonly string[] {
  for (let k = 0; k < data.length; k++) {
    if (typeof data[k] !== 'string') throw invalidInput(name, `input ${name}: data[${k}] must be a string (datatype BYTES)`)
  }
}

/** Throws unless every value of `data` is a finite number of the range's datatype. */
function checkNumbers(data: readonly unknown[], name: string, range: Range): asserts data is readonly number[] {
  const { datatype } = range
  for (let k = 0; k < data.length; k++) {
    const x = data[k]
    if (typeof x !== 'number') throw invalidInput(name, `input ${name}: data[${k}] must be a number (datatype ${datatype})`)
    if (!Number.isFinite(x)) throw invalidInput(name, `input ${name}: data[${k}] must be a finite number`)
    if ((range.isInteger && !Number.isInteger(x)) || x < range.min || x >= range.limit) {
      throw invalidInput(name, `input ${name}: data[${k}] is ${x}, not a value of datatype ${datatype}`)
    }
  }
}

/** BOOL data as numbers, 1 for true: the features are numbers. */
const readBooleans = (data: readonly unknown[], name: string): number[] => {
  const out = new Array<number>(data.length)
  for (let k = 0; k < data.length; k++) {
    const x = data[k]
    if (typeof x !== 'boolean') throw invalidInput(name, `input ${name}: data[${k}] must be true or false (datatype BOOL)`)
    out[k] = x ? 1 : 0
  }
  return out
}

const readTensor = (value: unknown, i: number, maxBatch: number): Tensor => {
  if (!isObject(value)) throw invalidInput(undefined, `inputs[${i}] must be an object with name, datatype, shape and data`)
  for (const key of Object.keys(value)) {
    if (!TENSOR_MEMBERS.has(key)) throw invalidInput(undefined, `inputs[${i}].${key} is not a member of an input tensor; its members are ${TENSOR_MEMBER_LIST}`)
  }
  const name = value['name']
  if (typeof name !== 'string' || name.length === 0) throw invalidInput(undefined, `inputs[${i}].name must be a non-empty string`)
  const datatype = value['datatype']
  const range = RANGES.get(datatype)
  if (datatype !== 'BYTES' && datatype !== 'BOOL' && range === undefined) throw invalidInput(name, `input ${name}: datatype must be one of ${DATATYPE_LIST}`)

  const shape = value['shape']
  if (!Array.isArray(shape) || (shape.length !== 1 && shape.length !== 2) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw invalidInput(name, `input ${name}: shape must be [N] or [N, F], of non-negative integers`)
  }
  const rows = shape[0] as number
  if (rows === 0) throw invalidInput(name, `input ${name}: shape ${shapeText(shape)} has no rows; a batch has at least one`)
  checkBatch(rows, maxBatch, name)

  const raw = value['data']
  if (!Array.isArray(raw)) throw invalidInput(name, `input ${name}: data must be an array`)
  const data = shape.length === 2 && Array.isArray(raw[0]) ? unnest(raw, shape, name) : raw
  const size = rows * (shape[1] ?? 1)
  if (data.length !== size) throw invalidInput(name, `input ${name}: shape ${shapeText(shape)} holds ${size} values, data has ${data.length}`)

  if (datatype === 'BOOL') return { name, datatype, shape, data: readBooleans(data, name) }
  if (range === undefined) {
    checkStrings(data, name)
    return { name, datatype: 'BYTES', shape, data }
  }
  checkNumbers(data, name, range)
  return { name, datatype: range.datatype, shape, data }
}

/** The names `outputs` asks for, each once; undefined when it names none (absent or empty): every output then. */
const readOutputs = (value: unknown): readonly string[] | undefined => {
  if (!Array.isArray(value)) throw invalidRequest('outputs must be an array of {"name": …} objects naming the outputs wanted')
  if (value.length === 0) return undefined
  const names = new Set<string>()
  for (let i = 0; i < value.length; i++) {
    const output: unknown = value[i]
    if (!isObject(output)) throw invalidRequest(`outputs[${i}] must be an object {"name": …} naming an output`)
    for (const key of Object.keys(output)) {
      if (!OUTPUT_MEMBERS.has(key)) throw invalidRequest(`outputs[${i}].${key} is not a member of a requested output; its members are name, parameters`)
    }
    const name = output['name']
    if (typeof name !== 'string' || name.length === 0) throw invalidRequest(`outputs[${i}].name must be a non-empty string`)
    if (output['parameters'] !== undefined && !isObject(output['parameters'])) throw invalidRequest(`outputs[${i}].parameters must be an object`)
    if (names.has(name)) throw invalidRequest(`output ${name} is asked for more than once`)
    names.add(name)
  }
  return [...names]
}

const readTensors = (value: unknown, id: string | undefined, outputs: readonly string[] | undefined, maxBatch: number): InferRequest => {
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest('inputs must be a non-empty array of input tensors')
  const inputs: Tensor[] = []
  for (let i = 0; i < value.length; i++) {
    const tensor = readTensor(value[i], i, maxBatch)
    const first = inputs[0]
    if (inputs.some((earlier) => earlier.name === tensor.name)) throw invalidInput(tensor.name, `input ${tensor.name} is given more than once`)
    if (first !== undefined && tensor.shape[0] !== first.shape[0]) {
      throw invalidInput(
        tensor.name,
        `input ${tensor.name} has ${tensor.shape[0]} rows, input ${first.name} has ${first.shape[0]}; every input needs one value per row`,
      )
    }
    inputs.push(tensor)
  }
  return { kind: 'tensors', id, rows: (inputs[0] as Tensor).shape[0] as number, outputs, inputs }
}

const readInstances = (value: unknown, id: string | undefined, outputs: readonly string[] | undefined, maxBatch: number): InferRequest => {
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest('instances must be a non-empty array of rows, each an object of named features')
  checkBatch(value.length, maxBatch)
  return { kind: 'instances', id, rows: value.length, outputs, instances: value }
}

const readBody = (body: JsonObject, members: ReadonlySet<string>, memberList: string, maxBatch: number): InferRequest => {
  for (const key of Object.keys(body)) {
    if (!members.has(key)) throw invalidRequest(`${key} is not a member of a prediction request; its members are ${memberList}`)
  }
  const id = readId(body['id'])
  if (body['parameters'] !== undefined && !isObject(body['parameters'])) throw invalidRequest('parameters must be an object')
  const outputs = body['outputs'] === undefined ? undefined : readOutputs(body['outputs'])
  const hasInstances = body['instances'] !== undefined
  if (hasInstances && body['inputs'] !== undefined) throw invalidRequest('give inputs or instances, not both')
  return hasInstances ? readInstances(body['instances'], id, outputs, maxBatch) : readTensors(body['inputs'], id, outputs, maxBatch)
}

const checkObject = (body: unknown): JsonObject => {
  if (!isObject(body)) throw invalidRequest('the request body must be a JSON object')
  return body
}

/** An OIP infer body (`id`, `inputs`, `parameters`, `outputs`); the path names the model. */
export const readInferRequest = (body: unknown, options: RequestOptions): InferRequest =>
  readBody(checkObject(body), V2_MEMBERS, V2_MEMBER_LIST, options.maxBatch)

/** An /api/v1/predict body: an OIP body plus `model`, optional `version`, or `instances` for `inputs`. */
export const readPredictRequest = (body: unknown, options: RequestOptions): PredictRequest => {
  const record = checkObject(body)
  const model = record['model']
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest('model must be a non-empty string naming the model')
  const version = record['version']
  if (version !== undefined && (typeof version !== 'string' || version.length === 0)) throw invalidRequest('version must be a non-empty string')
  const request = readBody(record, V1_MEMBERS, V1_MEMBER_LIST, options.maxBatch)
  // Members named one by one: on Node 20, `{ ...request, model, version }` takes ~1.5 µs (V8
  // leaves its fast clone path when members follow the spread), two-thirds of the whole check.
  return request.kind === 'instances'
    ? { kind: request.kind, id: request.id, rows: request.rows, outputs: request.outputs, instances: request.instances, model, version }
    : { kind: request.kind, id: request.id, rows: request.rows, outputs: request.outputs, inputs: request.inputs, model, version }
}
