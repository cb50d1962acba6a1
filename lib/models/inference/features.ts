// Feature encoding: what a request carries, as the Float64Array every runtime reads (runtime.ts).
// Row-major, N rows × F inputs in the model's input order; a numerical input as its value, a
// categorical one as the index of its level. Runtimes never see request shapes, and the drift window
// records these same arrays, so every runtime is fed and watched alike.
//
// Two ways in:
//   encodeRows(inputs, rows)     named rows (`{ sepal_length: 5.1, … }`), /api/v1's `instances` and
//                                what training and benchmarks build; throws InputError listing the
//                                first MAX_PROBLEMS problems by row and feature.
//   encodeInputs(request, model) a checked request (request.ts) against the model it names:
//                                input names, datatype against input type, per-input shapes,
//                                categorical levels; throws RequestError INVALID_INPUT, naming the
//                                input in `input` and the reason in its message.
//
// Which tensors a request sends: a model whose format declares its own (`signature`, an ONNX
// graph's inputs) takes exactly those, by name, each of its shape ([N, F] as declared, with F the
// features it holds; [N] or [N, 1] for a one-column input) and of a datatype it takes, and a refusal
// says which of the three is wrong and what the graph takes ("input X takes shape [-1, 13]; got
// [2, 12]"), as Triton and KServe answer. Any other model takes one tensor per input, named as the
// input, or one [N, F] tensor named otherwise (inference/request.ts).
//
// A numerical input's `datatype` (runtime.ts; an ONNX graph's tensor type) narrows what it takes:
// FP64 (or none) any finite number; FP32 one below 2^128 in magnitude; INT64 and INT32 whole numbers
// in range, from an integer datatype (INT*, UINT*) in a tensor; BOOL true or false (BOOL in a
// tensor), encoded 1 and 0. A request that does not fit is the client's 400, never the runtime's.
//
// Lookups by name are built once per `inputs` array (a version's description holds one, frozen),
// and per `signature` array, and kept in WeakMaps, so a request does one map lookup, not a rebuild.
import { isObject } from '../../core/json.js'
import { invalidInput, shapeText, type InferRequest, type Tensor } from './request.js'
import { InputError, inputProblem, MAX_PROBLEMS, type InputProblem } from './input-error.js'
import type { Input, ModelVersion, NumericalDatatype, TensorSignature } from '../runtime.js'

// Keyed by unknown, so that a tensor's value is looked up as it is, without a cast.
type Levels = Readonly<{ index: ReadonlyMap<unknown, number>; list: string }>

/** What a numerical input takes: min <= x < limit, whole numbers only when `isInteger`. */
type NumberRule = Readonly<{ datatype: NumericalDatatype; isInteger: boolean; isBool: boolean; min: number; limit: number; text: string }>
const RULES: Readonly<Record<NumericalDatatype, NumberRule>> = {
  FP64: { datatype: 'FP64', isInteger: false, isBool: false, min: -Infinity, limit: Infinity, text: 'a finite number' },
  FP32: { datatype: 'FP32', isInteger: false, isBool: false, min: -(2 ** 128), limit: 2 ** 128, text: 'a number below 2^128 in magnitude (FP32)' },
  INT64: { datatype: 'INT64', isInteger: true, isBool: false, min: -(2 ** 63), limit: 2 ** 63, text: 'a whole number from -2^63 to 2^63 - 1 (INT64)' },
  INT32: { datatype: 'INT32', isInteger: true, isBool: false, min: -(2 ** 31), limit: 2 ** 31, text: 'a whole number from -2^31 to 2^31 - 1 (INT32)' },
  BOOL: { datatype: 'BOOL', isInteger: true, isBool: true, min: 0, limit: 2, text: 'true or false (BOOL)' },
}
const INTEGERS = ['INT64', 'INT32', 'INT16', 'INT8', 'UINT64', 'UINT32', 'UINT16', 'UINT8']
/** `A, B or C`, `own` first. */
const listOf = (own: string, others: readonly string[]): string => {
  const all = [own, ...others.filter((other) => other !== own)]
  return `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`
}
/** The request datatypes a numerical input of each datatype takes, its own first: what a refusal lists. */
const DATATYPES_TAKEN: Readonly<Record<NumericalDatatype, string>> = {
  FP64: listOf('FP64', ['FP32', ...INTEGERS]),
  FP32: listOf('FP32', ['FP64', ...INTEGERS]),
  INT64: listOf('INT64', INTEGERS),
  INT32: listOf('INT32', INTEGERS),
  BOOL: 'BOOL',
}
const INTEGER_DATATYPES: ReadonlySet<string> = new Set(INTEGERS)

const fits = (rule: NumberRule, x: number): boolean => x >= rule.min && x < rule.limit && (!rule.isInteger || Number.isInteger(x))

/** A numerical tensor: every datatype but BYTES. */
type NumberTensor = Extract<Tensor, { data: readonly number[] }>
// `data[k]` for an index the loop keeps in range, which noUncheckedIndexedAccess cannot see: this
// module's only numeric assertion.
const numberAt = (data: readonly number[], k: number): number => data[k] as number

/** What encoding looks up by name, made once per inputs array. */
type Schema = Readonly<{
  index: ReadonlyMap<string, number>
  /** Per input: a categorical one's level → index and its levels as text; undefined for a numerical one. */
  levels: readonly (Levels | undefined)[]
  /** Per input: what a numerical one takes; undefined for a categorical one. */
  rules: readonly (NumberRule | undefined)[]
  isNumerical: boolean
  names: string
}>
const schemas = new WeakMap<readonly Input[], Schema>()

const schemaOf = (inputs: readonly Input[]): Schema => {
  let schema = schemas.get(inputs)
  if (schema === undefined) {
    schema = {
      index: new Map(inputs.map((input, j) => [input.name, j])),
      levels: inputs.map((input) =>
        input.type === 'numerical' ? undefined : { index: new Map(input.levels.map((level, i) => [level, i])), list: input.levels.join(', ') },
      ),
      rules: inputs.map((input) => (input.type === 'numerical' ? RULES[input.datatype ?? 'FP64'] : undefined)),
      isNumerical: inputs.every((input) => input.type === 'numerical'),
      names: inputs.map((input) => input.name).join(', '),
    }
    schemas.set(inputs, schema)
  }
  return schema
}

/** One input of a model's signature as a request fills it: which feature columns, and the shapes it takes. */
type GraphInput = Readonly<{
  name: string
  /** The first feature column it holds, and how many: F for one [N, F] tensor of every input, else 1. */
  first: number
  width: number
  /** What a refusal says it takes: `[-1, 4]`; `[-1, 1] or [-1]` for a one-column input, which takes either. */
  shapes: string
}>
type GraphSchema = Readonly<{
  index: ReadonlyMap<string, GraphInput>
  inputs: readonly GraphInput[]
  /** `X (FP32, shape [-1, 4])` for each input: what a tensor of another name is told. */
  list: string
  names: string
}>
const graphs = new WeakMap<readonly TensorSignature[], GraphSchema>()

/**
 * The signature's inputs and the feature columns each holds. runtime.ts: a signature is one tensor
 * per input, named and ordered as the inputs, or one [N, F] tensor of every input in input order.
 * Shapes are shown with F, the features the tensor holds, where the graph may leave it free.
 */
const graphOf = (signature: readonly TensorSignature[], inputs: readonly Input[]): GraphSchema => {
  let graph = graphs.get(signature)
  if (graph === undefined) {
    const isPerInput = signature.length === inputs.length && signature.every((tensor, j) => tensor.name === inputs[j]?.name)
    const width = isPerInput ? 1 : inputs.length
    const declared = (shape: readonly number[]): string => (shape.length === 1 ? '[-1]' : `[-1, ${width}]`)
    const graphInputs: GraphInput[] = signature.map(({ name, shape }, j) => ({
      name,
      first: isPerInput ? j : 0,
      width,
      shapes: width > 1 ? declared(shape) : shape.length === 1 ? '[-1] or [-1, 1]' : '[-1, 1] or [-1]',
    }))
    graph = {
      index: new Map(graphInputs.map((input) => [input.name, input])),
      inputs: graphInputs,
      list: signature.map(({ name, datatype, shape }) => `${name} (${datatype}, shape ${declared(shape)})`).join(', '),
      names: graphInputs.map((input) => input.name).join(', '),
    }
    graphs.set(signature, graph)
  }
  return graph
}

/** Named rows as features; throws InputError with every problem found, up to MAX_PROBLEMS. */
export const encodeRows = (inputs: readonly Input[], rows: readonly unknown[]): Float64Array => {
  const schema = schemaOf(inputs)
  const F = inputs.length
  const out = new Float64Array(rows.length * F)
  const problems: InputProblem[] = []
  for (let r = 0; r < rows.length && problems.length < MAX_PROBLEMS; r++) {
    const record = rows[r]
    if (!isObject(record)) {
      problems.push(inputProblem(r, '', 'NOT_AN_OBJECT', 'must be an object of named features'))
      continue
    }
    let j = -1
    for (const input of inputs) {
      j++
      const value = Object.hasOwn(record, input.name) ? record[input.name] : undefined
      const rule = schema.rules[j]
      const levels = schema.levels[j]
      if (value === undefined || value === null) problems.push(inputProblem(r, input.name, 'MISSING_FEATURE', 'is missing'))
      else if (rule?.isBool === true) {
        if (typeof value !== 'boolean') problems.push(inputProblem(r, input.name, 'WRONG_TYPE', 'must be true or false'))
        else out[r * F + j] = value ? 1 : 0
      } else if (rule !== undefined) {
        if (typeof value !== 'number') problems.push(inputProblem(r, input.name, 'WRONG_TYPE', 'must be a number'))
        else if (!Number.isFinite(value)) problems.push(inputProblem(r, input.name, 'NON_FINITE_VALUE', 'must be a finite number'))
        else if (!fits(rule, value)) problems.push(inputProblem(r, input.name, 'OUT_OF_RANGE', `must be ${rule.text}`))
        else out[r * F + j] = value
      } else if (levels !== undefined) {
        if (typeof value !== 'string') problems.push(inputProblem(r, input.name, 'WRONG_TYPE', 'must be a string'))
        else {
          const level = levels.index.get(value)
          if (level === undefined) problems.push(inputProblem(r, input.name, 'UNKNOWN_LEVEL', `must be one of ${levels.list}`))
          else out[r * F + j] = level
        }
      }
    }
    for (const key in record) if (!schema.index.has(key)) problems.push(inputProblem(r, key, 'UNKNOWN_FEATURE', 'is not an input of this model'))
  }
  if (problems.length > 0) throw new InputError(problems.slice(0, MAX_PROBLEMS))
  return out
}

const encodeMatrix = (tensor: Tensor, model: ModelVersion, schema: Schema): Float64Array => {
  const { name, shape } = tensor
  if (!schema.isNumerical) {
    throw invalidInput(
      name,
      `input ${name}: model ${model.name} has categorical inputs, so it takes one input per feature (${schema.names}), not one [N, F] tensor`,
    )
  }
  const F = model.inputs.length
  const rule = schema.rules[0]
  if (shape[1] !== F || rule === undefined) {
    throw invalidInput(
      name,
      `input ${name} is not an input of model ${model.name}; as one tensor its shape ${shapeText(shape)} must be [N, ${F}], columns ${schema.names}`,
    )
  }
  // One tensor for every column: the columns share one datatype.
  checkNumbers(tensor, rule)
  return Float64Array.from(tensor.data)
}

/** Throws unless a tensor's datatype and values fit the numerical input it fills: the datatypes it takes when they do not. */
function checkNumbers(tensor: Tensor, rule: NumberRule): asserts tensor is NumberTensor {
  const { name, datatype } = tensor
  const isFit = rule.isBool ? datatype === 'BOOL' : datatype !== 'BOOL' && datatype !== 'BYTES' && (!rule.isInteger || INTEGER_DATATYPES.has(datatype))
  if (!isFit || tensor.datatype === 'BYTES') throw invalidInput(name, `input ${name} takes ${DATATYPES_TAKEN[rule.datatype]}; got ${datatype}`)
  // FP64 takes every value a request tensor can hold; the others are checked value by value.
  if (rule.limit === Infinity) return
  const { data } = tensor
  for (let k = 0; k < data.length; k++) {
    if (!fits(rule, numberAt(data, k))) throw invalidInput(name, `input ${name}: data[${k}] is ${data[k]}; the model takes ${rule.text}`)
  }
}

/** A BYTES tensor's levels into column `j` of `F`; throws when it is not BYTES or holds another string. */
const writeLevels = (tensor: Tensor, levels: Levels, features: Float64Array, rows: number, j: number, F: number): void => {
  const { name } = tensor
  if (tensor.datatype !== 'BYTES') throw invalidInput(name, `input ${name} takes BYTES, one of ${levels.list}; got ${tensor.datatype}`)
  for (let r = 0; r < rows; r++) {
    const value = tensor.data[r]
    const level = levels.index.get(value)
    if (level === undefined) throw invalidInput(name, `input ${name}: data[${r}] is ${JSON.stringify(value)}, not one of ${levels.list}`)
    features[r * F + j] = level
  }
}

/** The tensors of a model with a signature: each one of its inputs, of that input's shape and datatype. */
const encodeGraphInputs = (tensors: readonly Tensor[], rows: number, model: ModelVersion, schema: Schema, graph: GraphSchema): Float64Array => {
  const F = model.inputs.length
  const features = new Float64Array(rows * F)
  for (const tensor of tensors) {
    const { name, shape } = tensor
    const input = graph.index.get(name)
    if (input === undefined) throw invalidInput(name, `input ${name} is not an input of model ${model.name}; its inputs are ${graph.list}`)
    const { first, width } = input
    const isShaped = width === 1 ? shape.length === 1 || shape[1] === 1 : shape.length === 2 && shape[1] === width
    if (!isShaped) throw invalidInput(name, `input ${name} takes shape ${input.shapes}; got ${shapeText(shape)}`)
    const levels = schema.levels[first]
    const rule = schema.rules[first]
    if (levels !== undefined) writeLevels(tensor, levels, features, rows, first, F)
    else if (rule !== undefined) {
      checkNumbers(tensor, rule)
      // One tensor of every column is the features as they are; a column of several is strided.
      if (width === F) features.set(tensor.data)
      else for (let r = 0; r < rows; r++) features[r * F + first] = numberAt(tensor.data, r)
    }
  }
  if (tensors.length < graph.inputs.length) {
    // Names are distinct and the graph's (checked above), so fewer tensors than inputs means one is absent.
    const missing = graph.inputs.find((input) => !tensors.some((tensor) => tensor.name === input.name))
    if (missing !== undefined) throw invalidInput(missing.name, `input ${missing.name} is missing; model ${model.name} takes ${graph.names}`)
  }
  return features
}

const encodeInstances = (instances: readonly unknown[], model: ModelVersion): Float64Array => {
  try {
    return encodeRows(model.inputs, instances)
  } catch (error: unknown) {
    if (!(error instanceof InputError)) throw error
    const feature = error.problems[0]?.feature
    throw invalidInput(feature === '' ? undefined : feature, `instances: ${error.message}`)
  }
}

/**
 * The features for `predict`: `request.rows` rows × the model's inputs, row-major, in input order, a
 * categorical input as its level index. Throws RequestError INVALID_INPUT.
 */
export const encodeInputs = (request: InferRequest, model: ModelVersion): Float64Array => {
  if (request.kind === 'instances') return encodeInstances(request.instances, model)
  const { inputs, rows } = request
  const schema = schemaOf(model.inputs)
  if (model.signature !== undefined) return encodeGraphInputs(inputs, rows, model, schema, graphOf(model.signature, model.inputs))
  const first = inputs[0]
  if (inputs.length === 1 && first?.shape.length === 2 && !schema.index.has(first.name)) return encodeMatrix(first, model, schema)

  const F = model.inputs.length
  const features = new Float64Array(rows * F)
  for (const tensor of inputs) {
    const { name, shape } = tensor
    const j = schema.index.get(name)
    if (j === undefined) throw invalidInput(name, `input ${name} is not an input of model ${model.name}; its inputs are ${schema.names}`)
    if (shape.length === 2 && shape[1] !== 1) throw invalidInput(name, `input ${name}: shape ${shapeText(shape)} must be [N] or [N, 1], one value per row`)
    const levels = schema.levels[j]
    const rule = schema.rules[j]
    if (levels !== undefined) writeLevels(tensor, levels, features, rows, j, F)
    else if (rule !== undefined) {
      checkNumbers(tensor, rule)
      for (let r = 0; r < rows; r++) features[r * F + j] = numberAt(tensor.data, r)
    }
  }
  if (inputs.length < F) {
    // Names are distinct and known (checked above), so fewer tensors than inputs means one is absent.
    const missing = model.inputs.find((input) => !inputs.some((tensor) => tensor.name === input.name))
    if (missing !== undefined) throw invalidInput(missing.name, `input ${missing.name} is missing; model ${model.name} takes ${schema.names}`)
  }
  return features
}
