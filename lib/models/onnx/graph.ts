// The parts of an ONNX model (onnx.proto's ModelProto, a protobuf) that serving needs, read and
// rewritten without a protobuf library: the graph's inputs and outputs with their types, and the
// ZipMap nodes.
//
// Why rewrite at all: classifiers exported by skl2onnx with its defaults end in ZipMap, whose output
// is a sequence of maps, and onnxruntime-node cannot return one ("Non tensor type is temporarily not
// supported", 1.30.0). The probabilities tensor that feeds ZipMap is an intermediate value, which a
// session returns only when the graph lists it as an output. `exposeZipMapInputs` lists it.
//
// What is read (field numbers from onnx.proto): ModelProto.graph = 7, .opset_import = 8;
// OperatorSetIdProto.domain = 1; GraphProto.node = 1, .initializer = 5, .input = 11, .output = 12;
// NodeProto.input = 1, .output = 2, .op_type = 4, .domain = 7; TensorProto.name = 8;
// ValueInfoProto.name = 1, .type = 2; TypeProto.tensor_type = 1, .sequence_type = 4, .map_type = 5,
// .sparse_tensor_type = 8, .optional_type = 9, with their elem_type, key_type, value_type and shape;
// TensorShapeProto.dim = 1; Dimension.dim_value = 1, .dim_param = 2. Every other field is skipped by
// its wire type and kept byte for byte. A singular field written twice counts as its last (onnx
// writes none twice), except the graph itself, which must be one. Unknown fields are never
// descended into, and types, the only recursive part read, are cut off at MAX_NESTING, so a hostile
// file costs one pass over its bytes and a bounded stack, and is refused with an OnnxGraphError.
//
// Protobuf has no end marker: a file cut between two top-level fields reads as a smaller model. A
// cut inside a field is TRUNCATED. onnx writes the graph (7) before the opset imports (8), and a
// graph whose nodes use a domain without an opset import is refused, so a cut before the last
// opset a node needs is refused too; one that leaves off only unused opsets or trailing metadata
// reads as the same graph (test/models/onnx/graph.test.ts tries every cut of the test graphs).
import { FieldError } from '../../core/errors.js'
import { decodeUtf8 } from '../../core/utf8.js'

export const ONNX_GRAPH_ERROR_CODES = [
  /** The bytes end inside a field: a partial download or a cut file. */
  'TRUNCATED',
  /**
   * Not a protobuf, or not an ONNX model: a bad wire type, a field that overruns its message, no
   * graph, no opset for a domain a node uses (also what a file cut between fields looks like).
   */
  'MALFORMED',
  /** Types nested beyond MAX_NESTING messages. */
  'TOO_DEEP',
] as const
export type OnnxGraphErrorCode = (typeof ONNX_GRAPH_ERROR_CODES)[number]

/** A model that cannot be read: `code` is stable, `field` names where (`model.graph.output[1].type`). */
export class OnnxGraphError extends FieldError<OnnxGraphErrorCode> {
  override name = 'OnnxGraphError'
}

/**
 * Message levels, the model being 0: an input's dimension sits at 6, a dimension of the tensors in
 * seq(map(int64,tensor(float))) at 10. Deeper is refused before it is read.
 */
export const MAX_NESTING = 16

/** A graph input or output. */
export type GraphValue = Readonly<{
  name: string
  /** In onnxruntime's notation: `tensor(float)`, `seq(map(int64,tensor(float)))`; `unknown` when untyped. */
  type: string
  /** A tensor's TensorProto.DataType (1 float, 7 int64, 8 string, 11 double…); undefined for any other type. */
  elemType: number | undefined
  /** A tensor's dimensions, a number when fixed, its name (`N`) or null when free; undefined when its rank is unknown too. */
  shape: readonly (number | string | null)[] | undefined
}>

/** A ZipMap node: the float tensor it reads and the sequence of maps it writes. */
export type ZipMap = Readonly<{ input: string; output: string }>

export type GraphSummary = Readonly<{
  /** The inputs a caller feeds, in graph order: initializers listed as inputs (IR < 4) are left out. */
  inputs: readonly GraphValue[]
  outputs: readonly GraphValue[]
  zipMaps: readonly ZipMap[]
  /**
   * The class labels of the graph's classifier, as text, in the order of its probability columns:
   * the `classlabels_strings`, `_int64s` or `_ints` of the first ai.onnx.ml node that has them
   * (LinearClassifier, TreeEnsembleClassifier, SVMClassifier, ZipMap); undefined when none does.
   */
  classLabels: readonly string[] | undefined
}>

/** What one model holds, read without running it. Throws OnnxGraphError. */
export const inspectGraph = (bytes: Uint8Array): GraphSummary => {
  const { graph } = readModel(bytes)
  return {
    inputs: graph.inputs.filter((input) => !graph.initializers.has(input.name)).map(publicValue),
    outputs: graph.outputs.map(publicValue),
    zipMaps: graph.zipMaps.map(({ input, output }) => ({ input, output })),
    classLabels: graph.classLabels,
  }
}

/**
 * The model with every graph output that a ZipMap writes replaced, in place, by the float tensor
 * that ZipMap reads (dropped instead when that tensor is already an output), typed `tensor(float)`
 * of rank 2 with both dimensions free: [rows, classes], as every ai.onnx.ml classifier writes it
 * (onnx.checker wants a shape on a graph output). The ZipMap nodes behind those outputs are removed
 * unless another node reads what they write: onnxruntime runs a node nobody reads from, and a
 * ZipMap costs more than the classifier before it (a 1000-row batch of a 3-class LinearClassifier,
 * one thread: 138 µs of CPU with the ZipMap left in, 25 µs without; onnxruntime-node 1.30.0,
 * Node 20). A graph that reads the ZipMap's output from a subgraph (an If or Loop body) is not
 * looked into: onnxruntime then refuses the model for the missing value. Every other byte is
 * unchanged. A model with no ZipMap output is returned as it is, the same array. Throws
 * OnnxGraphError.
 */
export const exposeZipMapInputs = (bytes: Uint8Array): Uint8Array => {
  const { graphField, graph } = readModel(bytes)
  const byOutput = new Map(graph.zipMaps.map((z) => [z.output, z]))
  const listed = new Set(graph.outputs.filter((o) => !byOutput.has(o.name)).map((o) => o.name))
  const removed = new Set<ReadZipMap>()
  const edits: Edit[] = []
  for (const output of graph.outputs) {
    const zipMap = byOutput.get(output.name)
    if (zipMap === undefined) continue
    const isListed = listed.has(zipMap.input)
    listed.add(zipMap.input)
    const replacement = isListed ? undefined : lengthDelimited(GRAPH_OUTPUT, floatMatrixValueInfo(zipMap.input))
    edits.push({ start: output.fieldStart, end: output.fieldEnd, with: replacement })
    // Once, should the graph list the same output twice.
    if (graph.consumed.has(zipMap.output) || removed.has(zipMap)) continue
    removed.add(zipMap)
    edits.push({ start: zipMap.fieldStart, end: zipMap.fieldEnd, with: undefined })
  }
  if (edits.length === 0) return bytes
  edits.sort((a, b) => a.start - b.start)
  const pieces: Uint8Array[] = []
  let copiedTo = graphField.valueStart
  for (const edit of edits) {
    pieces.push(bytes.subarray(copiedTo, edit.start))
    if (edit.with !== undefined) pieces.push(edit.with)
    copiedTo = edit.end
  }
  pieces.push(bytes.subarray(copiedTo, graphField.end))
  return concat([bytes.subarray(0, graphField.start), lengthDelimited(MODEL_GRAPH, concat(pieces)), bytes.subarray(graphField.end)])
}

/** Bytes `start` to `end` of the model replaced `with` these, or removed. */
type Edit = Readonly<{ start: number; end: number; with: Uint8Array | undefined }>

// ---- reading

const VARINT = 0
const FIXED64 = 1
const LENGTH_DELIMITED = 2
const FIXED32 = 5
const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'group start', 'group end', 'fixed32', 'wire type 6', 'wire type 7']
const MAX_FIELD_NUMBER = 2 ** 29 - 1

const MODEL_GRAPH = 7
const MODEL_OPSET_IMPORT = 8
const GRAPH_NODE = 1
const GRAPH_INITIALIZER = 5
const GRAPH_INPUT = 11
const GRAPH_OUTPUT = 12

/** The byte range of one field: its tag at `start`, its value from `valueStart` to `end`. */
type FieldSpan = Readonly<{ start: number; valueStart: number; end: number }>
type ReadValue = GraphValue & Readonly<{ fieldStart: number; fieldEnd: number }>
type ReadZipMap = ZipMap & Readonly<{ fieldStart: number; fieldEnd: number }>
type ReadGraph = Readonly<{
  inputs: ReadValue[]
  outputs: ReadValue[]
  initializers: Set<string>
  zipMaps: ReadZipMap[]
  /** Every name a node reads. */
  consumed: Set<string>
  /** Every domain a node uses, with the first such node (`model.graph.node[1] (ZipMap)`). */
  domains: Map<string, string>
}> & { classLabels: string[] | undefined }

/** Reads the fields of one message, between `start` and `end`, one `next()` at a time. */
class Fields {
  readonly bytes: Uint8Array
  readonly end: number
  readonly where: string
  pos: number
  number = 0
  wire = 0
  start = 0
  valueStart = 0
  /** The value of a varint field. */
  value = 0

  constructor(bytes: Uint8Array, start: number, end: number, where: string, depth: number) {
    if (depth > MAX_NESTING) throw new OnnxGraphError('TOO_DEEP', where, `nested deeper than ${MAX_NESTING} messages`)
    this.bytes = bytes
    this.pos = start
    this.end = end
    this.where = where
  }

  /** Moves past the next field; false at the end of the message. */
  next(): boolean {
    if (this.pos >= this.end) return false
    this.start = this.pos
    const tag = this.varint()
    this.number = Math.floor(tag / 8)
    this.wire = tag % 8
    if (this.number === 0 || this.number > MAX_FIELD_NUMBER) throw this.malformed(`field number ${this.number} at byte ${this.start}`)
    this.valueStart = this.pos
    if (this.wire === VARINT) this.value = this.varint()
    else if (this.wire === FIXED64) this.skip(8)
    else if (this.wire === LENGTH_DELIMITED) {
      const length = this.varint()
      this.valueStart = this.pos
      this.skip(length)
    } else if (this.wire === FIXED32) this.skip(4)
    else throw this.malformed(`field ${this.number} at byte ${this.start} has ${WIRE_NAMES[this.wire]}, which onnx.proto does not use`)
    return true
  }

  /** Throws unless the current field has this wire type. */
  expect(wire: number): void {
    if (this.wire !== wire) throw this.malformed(`field ${this.number} at byte ${this.start} is ${WIRE_NAMES[this.wire]}, expected ${WIRE_NAMES[wire]}`)
  }

  string(): string {
    this.expect(LENGTH_DELIMITED)
    try {
      return decodeUtf8(this.bytes.subarray(this.valueStart, this.pos))
    } catch {
      throw this.malformed(`field ${this.number} at byte ${this.start} is not UTF-8`)
    }
  }

  varintField(): number {
    this.expect(VARINT)
    return this.value
  }

  /** The current field's value as a message of its own. */
  message(where: string, depth: number): Fields {
    this.expect(LENGTH_DELIMITED)
    return new Fields(this.bytes, this.valueStart, this.pos, where, depth)
  }

  malformed(reason: string): OnnxGraphError {
    return new OnnxGraphError('MALFORMED', this.where, reason)
  }

  /** The current varint field's value as an int64, exact (a double is not past 2^53). */
  int64Field(): bigint {
    this.expect(VARINT)
    return exactInt64(this.bytes, this.valueStart, this.pos)
  }

  /** The next varint of a packed repeated int64 field (this message being the field's bytes), exact. */
  packedInt64(): bigint {
    const at = this.pos
    this.varint()
    return exactInt64(this.bytes, at, this.pos)
  }

  /** Up to 10 bytes, as a number: exact to 2^53, which covers every length and field number. */
  private varint(): number {
    const at = this.pos
    let value = 0
    let scale = 1
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw this.overrun(`the varint at byte ${at} runs past the end`)
      const byte = this.bytes[this.pos++] as number
      value += (byte & 0x7f) * scale
      if (byte < 0x80) return value
      scale *= 128
    }
    throw this.malformed(`the varint at byte ${at} is longer than 10 bytes`)
  }

  private skip(length: number): void {
    if (length > this.end - this.pos) throw this.overrun(`field ${this.number} at byte ${this.start} holds ${length} bytes, ${this.end - this.pos} remain`)
    this.pos += length
  }

  /** Past the end of the bytes, the file is cut short; past the end of a message only, it is malformed. */
  private overrun(reason: string): OnnxGraphError {
    return new OnnxGraphError(this.end === this.bytes.length ? 'TRUNCATED' : 'MALFORMED', this.where, reason)
  }
}

const readModel = (bytes: Uint8Array): { graphField: FieldSpan; graph: ReadGraph } => {
  const model = new Fields(bytes, 0, bytes.length, 'model', 0)
  let graphField: FieldSpan | undefined
  const opsets = new Set<string>()
  let opsetImports = 0
  while (model.next()) {
    if (model.number === MODEL_OPSET_IMPORT) opsets.add(readOpsetDomain(model.message(`model.opset_import[${opsetImports++}]`, 1)))
    if (model.number !== MODEL_GRAPH) continue
    model.expect(LENGTH_DELIMITED)
    if (graphField !== undefined) throw model.malformed(`a second graph (field 7) at byte ${model.start}`)
    graphField = { start: model.start, valueStart: model.valueStart, end: model.pos }
  }
  if (graphField === undefined) throw model.malformed('no graph (field 7): not an ONNX model')
  const graph = readGraph(new Fields(bytes, graphField.valueStart, graphField.end, 'model.graph', 1))
  for (const [domain, node] of graph.domains)
    if (!opsets.has(domain)) throw new OnnxGraphError('MALFORMED', 'model.opset_import', `no opset for domain "${domain}", which ${node} uses (a cut file?)`)
  return { graphField, graph }
}

/** The default domain is spelled "" or "ai.onnx". */
const defaultDomain = (domain: string): string => (domain === 'ai.onnx' ? '' : domain)

const readOpsetDomain = (opset: Fields): string => {
  let domain = ''
  while (opset.next()) if (opset.number === 1) domain = opset.string()
  return defaultDomain(domain)
}

const readGraph = (graph: Fields): ReadGraph => {
  const read: ReadGraph = {
    inputs: [],
    outputs: [],
    initializers: new Set(),
    zipMaps: [],
    consumed: new Set(),
    domains: new Map(),
    classLabels: undefined,
  }
  let nodes = 0
  while (graph.next()) {
    if (graph.number === GRAPH_NODE) readNode(graph, `model.graph.node[${nodes++}]`, read)
    else if (graph.number === GRAPH_INITIALIZER) read.initializers.add(readTensorName(graph.message(`model.graph.initializer[${read.initializers.size}]`, 2)))
    else if (graph.number === GRAPH_INPUT) read.inputs.push(readValueInfo(graph, `model.graph.input[${read.inputs.length}]`))
    else if (graph.number === GRAPH_OUTPUT) read.outputs.push(readValueInfo(graph, `model.graph.output[${read.outputs.length}]`))
  }
  return read
}

const readNode = (graph: Fields, where: string, read: ReadGraph): void => {
  const fieldStart = graph.start
  const fieldEnd = graph.pos
  const node = graph.message(where, 2)
  const inputs: string[] = []
  const outputs: string[] = []
  let opType = ''
  let domain = ''
  let labels: string[] | undefined
  let attributes = 0
  while (node.next()) {
    if (node.number === 1) {
      const input = node.string()
      inputs.push(input)
      read.consumed.add(input)
    } else if (node.number === 2) outputs.push(node.string())
    else if (node.number === 4) opType = node.string()
    else if (node.number === 7) domain = node.string()
    else if (node.number === NODE_ATTRIBUTE) labels = readClassLabels(node.message(`${where}.attribute[${attributes++}]`, 3)) ?? labels
  }
  const opsetDomain = defaultDomain(domain)
  if (!read.domains.has(opsetDomain)) read.domains.set(opsetDomain, `${where} (${opType})`)
  if (domain !== 'ai.onnx.ml') return
  if (LABELLED_OPS.has(opType)) read.classLabels ??= labels
  if (opType !== 'ZipMap') return
  const [input] = inputs
  const [output] = outputs
  if (input === undefined || output === undefined || inputs.length !== 1 || outputs.length !== 1 || input === '' || output === '')
    throw node.malformed(`ZipMap takes one input and writes one output, not ${JSON.stringify(inputs)} → ${JSON.stringify(outputs)}`)
  read.zipMaps.push({ input, output, fieldStart, fieldEnd })
}

/** The ai.onnx.ml operators whose class labels name a classifier's probability columns. */
const LABELLED_OPS: ReadonlySet<string> = new Set(['LinearClassifier', 'TreeEnsembleClassifier', 'SVMClassifier', 'ZipMap'])
const NODE_ATTRIBUTE = 5

/** The varint in bytes `from` to `to` (already checked) as a 64-bit two's complement integer. */
const exactInt64 = (bytes: Uint8Array, from: number, to: number): bigint => {
  let value = 0n
  for (let i = to - 1; i >= from; i--) value = (value << 7n) | BigInt((bytes[i] as number) & 0x7f)
  return BigInt.asIntN(64, value)
}

/**
 * An AttributeProto (name = 1, ints = 8, strings = 9): its values as text when it is
 * `classlabels_strings`, `classlabels_int64s` (trees, ZipMap) or `classlabels_ints` (LinearClassifier,
 * SVMClassifier), else undefined. Int64 labels are read exactly, packed or not, negative ones
 * included (ten bytes of two's complement), and written in decimal.
 */
const readClassLabels = (attribute: Fields): string[] | undefined => {
  let name = ''
  const strings: string[] = []
  const ints: bigint[] = []
  while (attribute.next()) {
    if (attribute.number === 1) name = attribute.string()
    else if (attribute.number === 9) strings.push(attribute.string())
    else if (attribute.number === 8 && attribute.wire === VARINT) ints.push(attribute.int64Field())
    else if (attribute.number === 8) {
      const packed = attribute.message(`${attribute.where}.ints`, 0)
      while (packed.pos < packed.end) ints.push(packed.packedInt64())
    }
  }
  if (name === 'classlabels_strings') return strings
  if (name !== 'classlabels_int64s' && name !== 'classlabels_ints') return undefined
  return ints.map(String)
}

const readTensorName = (tensor: Fields): string => {
  let name = ''
  while (tensor.next()) if (tensor.number === 8) name = tensor.string()
  return name
}

const readValueInfo = (graph: Fields, where: string): ReadValue => {
  const fieldStart = graph.start
  const fieldEnd = graph.pos
  const info = graph.message(where, 2)
  let name = ''
  let type: TypeRead = UNTYPED
  while (info.next()) {
    if (info.number === 1) name = info.string()
    else if (info.number === 2) type = readType(info.message(`${where}.type`, 3), 3)
  }
  return { name, ...type, fieldStart, fieldEnd }
}

type TypeRead = Pick<GraphValue, 'type' | 'elemType' | 'shape'>
const UNTYPED: TypeRead = { type: 'unknown', elemType: undefined, shape: undefined }

/** A TypeProto; `depth` is its own level. */
const readType = (type: Fields, depth: number): TypeRead => {
  let read = UNTYPED
  while (type.next()) {
    const where = type.where
    if (type.number === 1) read = readTensorType(type.message(`${where}.tensor_type`, depth + 1), 'tensor', depth + 1)
    else if (type.number === 8) read = readTensorType(type.message(`${where}.sparse_tensor_type`, depth + 1), 'sparse_tensor', depth + 1)
    else if (type.number === 4) read = nonTensor(`seq(${readElemType(type.message(`${where}.sequence_type`, depth + 1), depth + 1)})`)
    else if (type.number === 9) read = nonTensor(`optional(${readElemType(type.message(`${where}.optional_type`, depth + 1), depth + 1)})`)
    else if (type.number === 5) read = nonTensor(readMapType(type.message(`${where}.map_type`, depth + 1), depth + 1))
  }
  return read
}

const nonTensor = (type: string): TypeRead => ({ type, elemType: undefined, shape: undefined })

/** TypeProto.Sequence or .Optional: elem_type = 1, a TypeProto. */
const readElemType = (container: Fields, depth: number): string => {
  let elem = UNTYPED.type
  while (container.next()) if (container.number === 1) elem = readType(container.message(`${container.where}.elem_type`, depth + 1), depth + 1).type
  return elem
}

/** TypeProto.Map: key_type = 1 (a DataType), value_type = 2 (a TypeProto). */
const readMapType = (map: Fields, depth: number): string => {
  let key = 0
  let value = UNTYPED.type
  while (map.next()) {
    if (map.number === 1) key = map.varintField()
    else if (map.number === 2) value = readType(map.message(`${map.where}.value_type`, depth + 1), depth + 1).type
  }
  return `map(${elemTypeName(key)},${value})`
}

/** TypeProto.Tensor or .SparseTensor: elem_type = 1, shape = 2. */
const readTensorType = (tensor: Fields, kind: string, depth: number): TypeRead => {
  let elemType = 0
  let shape: (number | string | null)[] | undefined
  while (tensor.next()) {
    if (tensor.number === 1) elemType = tensor.varintField()
    else if (tensor.number === 2) shape = readShape(tensor.message(`${tensor.where}.shape`, depth + 1), depth + 1)
  }
  return { type: `${kind}(${elemTypeName(elemType)})`, elemType, shape }
}

/** TensorShapeProto: dim = 1, each a Dimension with dim_value = 1 or dim_param = 2. */
const readShape = (shape: Fields, depth: number): (number | string | null)[] => {
  const dims: (number | string | null)[] = []
  while (shape.next()) {
    if (shape.number !== 1) continue
    const dim = shape.message(`${shape.where}.dim[${dims.length}]`, depth + 1)
    let value: number | string | null = null
    while (dim.next()) {
      if (dim.number === 1) value = dim.varintField()
      else if (dim.number === 2) value = dim.string()
    }
    dims.push(value)
  }
  return dims
}

/** TensorProto.DataType, in onnxruntime's spelling. */
const ELEM_TYPES = [
  'undefined',
  'float',
  'uint8',
  'int8',
  'uint16',
  'int16',
  'int32',
  'int64',
  'string',
  'bool',
  'float16',
  'double',
  'uint32',
  'uint64',
  'complex64',
  'complex128',
  'bfloat16',
  'float8e4m3fn',
  'float8e4m3fnuz',
  'float8e5m2',
  'float8e5m2fnuz',
  'uint4',
  'int4',
  'float4e2m1',
]

const elemTypeName = (elemType: number): string => ELEM_TYPES[elemType] ?? `elem_type ${elemType}`

const publicValue = ({ name, type, elemType, shape }: ReadValue): GraphValue => ({ name, type, elemType, shape })

// ---- writing

const concat = (pieces: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(pieces.reduce((n, piece) => n + piece.length, 0))
  let at = 0
  for (const piece of pieces) {
    out.set(piece, at)
    at += piece.length
  }
  return out
}

const varintBytes = (value: number): number[] => {
  const out: number[] = []
  let rest = value
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  out.push(rest)
  return out
}

const lengthDelimited = (field: number, payload: Uint8Array): Uint8Array =>
  concat([Uint8Array.from([...varintBytes(field * 8 + LENGTH_DELIMITED), ...varintBytes(payload.length)]), payload])

const TENSOR_FLOAT = 1
/** Tensor.shape = 2: TensorShapeProto { dim = 1: {}, dim = 1: {} }, rank 2 with both dimensions free. */
const FREE_MATRIX = lengthDelimited(2, concat([lengthDelimited(1, new Uint8Array()), lengthDelimited(1, new Uint8Array())]))
/** ValueInfoProto.type = 2: TypeProto { tensor_type = 1: Tensor { elem_type = 1: FLOAT, shape } }. */
const FLOAT_MATRIX_TYPE = lengthDelimited(2, lengthDelimited(1, concat([Uint8Array.from([...varintBytes(1 * 8 + VARINT), TENSOR_FLOAT]), FREE_MATRIX])))

/** ValueInfoProto { name = 1, type = 2 }, typed tensor(float) [?, ?]. */
const floatMatrixValueInfo = (name: string): Uint8Array => concat([lengthDelimited(1, new TextEncoder().encode(name)), FLOAT_MATRIX_TYPE])
