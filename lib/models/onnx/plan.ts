// How an ONNX graph is served (lib/README.md §10): from what the graph declares (onnx/graph.ts),
// what metadata.json adds (onnx/metadata.ts) and the profile, the version's description and the
// plan its predictor follows (onnx/predictor.ts). Pure; every refusal is an Error whose message
// names the input, output or member, so the registry can show it as the model's reason.
//
// Inputs become features one of two ways:
//   one [N, F] tensor (a numerical element type)  F features named by metadata.json `features`, or,
//                                                 without them, after the input and the column's
//                                                 index: `X_0` … `X_{F−1}` for an input `X`, as
//                                                 Triton and KServe serve such a graph unnamed over
//                                                 OIP. A free F has no count to name: it needs
//                                                 `features`. One [N, 1] input unnamed is one
//                                                 feature of its own name, as below.
//   one [N] or [N, 1] tensor per feature          each named as its input; a string input is a
//                                                 categorical feature over its levels (metadata
//                                                 `levels`, else the profile's), any other a
//                                                 numerical one of the tensor's type
// A fixed batch dimension is refused (export with a dynamic one): requests choose their batch.
//
// Outputs: a classifier answers probabilities, read from one float [N, C] output (the one behind a
// ZipMap when the graph ends in one), over the graph's class labels (integers as text), else
// metadata.json's `classes`, else, for a graph that names none (a network ending in Softmax, with or
// without an integer label output of its own), the column indices `0` … `C−1` of a fixed C;
// a regressor answers one float per row. Only that output is fetched: a classifier's label is the
// most probable class, as the built-in classifiers answer, so the graph's own label output (a
// string tensor, costly to return) is named in responses but never run for.
import { createHash } from 'node:crypto'
import { errorMessage } from '../../core/errors.js'
import { PLATFORM } from '../platform.js'
import { parseProfile, predictionInput, type Profile } from '../profile.js'
import type { GraphSummary, GraphValue } from './graph.js'
import type { OnnxMetadata } from './metadata.js'
import type { Input, ModelVersion, NumericalDatatype, Output, Place, Reference, TensorSignature } from '../runtime.js'

/** onnxruntime's names for the tensor types a request can fill. */
export type ElementKind = 'float32' | 'float64' | 'int64' | 'int32' | 'bool' | 'string'

/** One graph input: which feature columns fill it, and as what. */
export type Feed = Readonly<{
  name: string
  kind: ElementKind
  /** The first feature column it takes, and how many (F for one [N, F] tensor, else 1). */
  first: number
  width: number
  /** 1 for [N], 2 for [N, width]: the dimensions the tensor is built with. */
  rank: 1 | 2
  /** A string input's levels, by level index (what encoding writes); undefined for any other. */
  levels: readonly string[] | undefined
}>

export type OnnxPlan = Readonly<{
  feeds: readonly Feed[]
  /** The one output fetched: a classifier's probabilities, a regressor's values. */
  fetch: string
  /** Values per row of `fetch`: the class count, or 1. */
  width: number
}>

export const ONNX_PLATFORM = PLATFORM.onnx

/** TensorProto.DataType → what svc feeds and how OIP names it; types not here are refused. */
type Element = Readonly<{ kind: Exclude<ElementKind, 'string'>; datatype: NumericalDatatype }> | Readonly<{ kind: 'string'; datatype: 'BYTES' }>
const ELEMENTS: ReadonlyMap<number, Element> = new Map<number, Element>([
  [1, { kind: 'float32', datatype: 'FP32' }],
  [11, { kind: 'float64', datatype: 'FP64' }],
  [7, { kind: 'int64', datatype: 'INT64' }],
  [6, { kind: 'int32', datatype: 'INT32' }],
  [9, { kind: 'bool', datatype: 'BOOL' }],
  [8, { kind: 'string', datatype: 'BYTES' }],
] as const)
const FLOAT_OUTPUTS: ReadonlySet<number> = new Set([1, 11])
const LABEL_OUTPUTS: ReadonlySet<number> = new Set([6, 7, 8])

const fail = (reason: string): Error => new Error(reason)

const shapeText = (value: GraphValue): string => `[${(value.shape ?? []).map((d) => (typeof d === 'number' ? d : (d ?? '?'))).join(', ')}]`

/** The second dimension of a rank-2 tensor: a number when fixed, undefined when free. */
const columns = (value: GraphValue): number | undefined => {
  const dim = value.shape?.[1]
  return typeof dim === 'number' ? dim : undefined
}

const isOneColumn = (value: GraphValue): boolean => value.shape?.length === 1 || (value.shape?.length === 2 && columns(value) === 1)

/** Checks what every input must be; returns its element and its dimensions. */
const element = (input: GraphValue): Element & Readonly<{ dims: NonNullable<GraphValue['shape']> }> => {
  const found = ELEMENTS.get(input.elemType ?? -1)
  if (found === undefined || !input.type.startsWith('tensor(')) {
    throw fail(`input ${input.name}: ${input.type} is not a type svc can feed (float, double, int64, int32, bool or string tensors)`)
  }
  const dims = input.shape
  if (dims === undefined || (dims.length !== 1 && dims.length !== 2)) throw fail(`input ${input.name}: shape ${shapeText(input)} must be [N] or [N, F]`)
  if (typeof dims[0] === 'number') {
    throw fail(`input ${input.name}: shape ${shapeText(input)} fixes the batch dimension; export the model with a dynamic first dimension`)
  }
  return { ...found, dims }
}

const numerical = (name: string, datatype: NumericalDatatype): Input => ({ name, type: 'numerical', datatype })

type PlannedInputs = Readonly<{ inputs: readonly Input[]; feeds: readonly Feed[] }>

/** `count` names: `${prefix}0` … `${prefix}${count − 1}`. */
const indexed = (prefix: string, count: number): readonly string[] => Array.from({ length: count }, (_, j) => `${prefix}${j}`)

/** One [N, F] numerical tensor holds every feature. */
const planMatrix = (input: GraphValue, metadata: OnnxMetadata): PlannedInputs => {
  const { kind, datatype } = element(input)
  if (kind === 'string') throw fail(`input ${input.name}: a [N, F] string tensor is not supported; export one [N, 1] input per string column`)
  const width = columns(input)
  let names = metadata.features
  if (names === undefined) {
    if (width === undefined) {
      throw fail(`metadata.json features: required, to name the columns of input ${input.name} ${shapeText(input)}, whose number the graph leaves free`)
    }
    names = indexed(`${input.name}_`, width)
  }
  if (width !== undefined && names.length !== width) throw fail(`metadata.json features: names ${names.length} columns; input ${input.name} has ${width}`)
  return {
    inputs: names.map((name) => numerical(name, datatype)),
    feeds: [{ name: input.name, kind, first: 0, width: names.length, rank: 2, levels: undefined }],
  }
}

/** One [N] or [N, 1] tensor per feature. */
const planColumns = (graphInputs: readonly GraphValue[], metadata: OnnxMetadata, profile: Profile | undefined): PlannedInputs => {
  if (metadata.features !== undefined) {
    throw fail(
      `metadata.json features: names the columns of one [N, F] input; this graph takes one input per feature (${graphInputs.map((i) => i.name).join(', ')})`,
    )
  }
  const inputs: Input[] = []
  const feeds: Feed[] = []
  graphInputs.forEach((graphInput, first) => {
    const { kind, datatype } = element(graphInput)
    const { name } = graphInput
    if (!isOneColumn(graphInput))
      throw fail(`input ${name}: shape ${shapeText(graphInput)}: a graph with several inputs must take one column in each ([N] or [N, 1])`)
    let levels: readonly string[] | undefined
    if (kind === 'string') {
      const profiled = profile?.features.find((feature) => feature.name === name)
      levels = metadata.levels[name] ?? (profiled?.type === 'categorical' ? profiled.levels : undefined)
      if (levels === undefined) throw fail(`input ${name} takes strings: list them in metadata.json levels.${name}, or profile the column with svc profile`)
      inputs.push({ name, type: 'categorical', levels })
    } else inputs.push(numerical(name, datatype))
    feeds.push({ name, kind, first, width: 1, rank: graphInput.shape?.length as 1 | 2, levels })
  })
  return { inputs, feeds }
}

const planInputs = (graph: GraphSummary, metadata: OnnxMetadata, profile: Profile | undefined): PlannedInputs => {
  const [first] = graph.inputs
  if (first === undefined) throw fail('the graph takes no input')
  // One [N, 1] input is a matrix of one column when metadata.json names it, else a feature by its own name.
  const isMatrix = graph.inputs.length === 1 && first.shape?.length === 2 && (columns(first) !== 1 || metadata.features !== undefined)
  const planned = isMatrix ? planMatrix(first, metadata) : planColumns(graph.inputs, metadata, profile)
  for (const name of Object.keys(metadata.levels)) {
    const feed = planned.feeds.find((f) => f.name === name)
    if (feed?.kind !== 'string') throw fail(`metadata.json levels.${name}: ${name} is not a string input of the graph`)
  }
  return planned
}

type PlannedOutputs = Readonly<
  ({ task: 'classification'; classes: readonly string[] } | { task: 'regression'; classes: undefined }) & {
    outputs: readonly Output[]
    fetch: string
    width: number
  }
>

/** The output a client sees for the tensor `fetch`: the ZipMap's, when the graph ended in one. */
const shownName = (original: GraphSummary, fetch: string): string => original.zipMaps.find((z) => z.input === fetch)?.output ?? fetch

const planOutputs = (graph: GraphSummary, original: GraphSummary, metadata: OnnxMetadata): PlannedOutputs => {
  const tensors = graph.outputs.filter((o) => o.type.startsWith('tensor(') && (o.shape?.length === 1 || o.shape?.length === 2))
  const floats = tensors.filter((o) => FLOAT_OUTPUTS.has(o.elemType ?? -1))
  const label = tensors.find((o) => LABEL_OUTPUTS.has(o.elemType ?? -1) && isOneColumn(o))
  const zipped = floats.find((o) => original.zipMaps.some((z) => z.input === o.name))
  const wide = floats.find((o) => !isOneColumn(o))
  const task = metadata.task ?? (label !== undefined || wide !== undefined ? 'classification' : 'regression')
  if (task === 'regression') {
    const value = floats.find(isOneColumn)
    if (value === undefined) throw fail(`the graph has no float output of one value per row ([N] or [N, 1]) to answer a regression with`)
    return { task, classes: undefined, outputs: [{ name: value.name, type: 'value' }], fetch: value.name, width: 1 }
  }
  const probabilities = zipped ?? wide ?? floats[0]
  if (probabilities === undefined) throw fail('the graph has no float output of class probabilities ([N, C])')
  const width = probabilities.shape?.length === 2 ? columns(probabilities) : undefined
  // Unnamed, a class is its column: what an argmax over the probabilities answers.
  const classes = original.classLabels ?? metadata.classes ?? (width === undefined ? undefined : indexed('', width))
  if (classes === undefined) {
    throw fail(
      'metadata.json classes: required: the graph names no class labels, ' +
        `and output ${probabilities.name} ${shapeText(probabilities)} does not fix their number`,
    )
  }
  const isSame = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((label, i) => label === b[i])
  if (original.classLabels !== undefined && metadata.classes !== undefined && !isSame(metadata.classes, original.classLabels)) {
    throw fail(`metadata.json classes: the graph names its classes (${original.classLabels.join(', ')}); leave classes out or repeat them`)
  }
  if (classes.length < 2) {
    const source =
      original.classLabels !== undefined
        ? 'the graph names'
        : metadata.classes !== undefined
          ? 'metadata.json names'
          : `output ${probabilities.name} ${shapeText(probabilities)} has`
    throw fail(`a classifier needs at least two classes, ${source} ${classes.length}`)
  }
  if (width !== undefined && width !== classes.length) {
    throw fail(`output ${probabilities.name}: shape ${shapeText(probabilities)} has ${width} columns for ${classes.length} classes`)
  }
  return {
    task,
    classes,
    outputs: [
      { name: label?.name ?? 'label', type: 'label' },
      { name: shownName(original, probabilities.name), type: 'probabilities' },
    ],
    fetch: probabilities.name,
    width: classes.length,
  }
}

/** The graph's inputs as a client sends them: OIP datatypes, -1 for a free dimension. */
const signatureOf = (graph: GraphSummary): readonly TensorSignature[] =>
  graph.inputs.map((input) => {
    // Checked as the inputs were planned, so this never throws.
    const { datatype, dims } = element(input)
    return { name: input.name, datatype, shape: dims.map((d) => (typeof d === 'number' ? d : -1)) }
  })

/** A digest of every file of the version: a change to any of them is a new build. */
const digest = (files: readonly (Buffer | undefined)[]): string => {
  const hash = createHash('sha256')
  for (const file of files) hash.update(file === undefined ? '-' : `${file.length}:`).update(file ?? '')
  return hash.digest('hex')
}

export type OnnxFiles = Readonly<{ model: Buffer; metadata: Buffer | undefined; profile: Buffer | undefined }>

/**
 * The description and plan of a graph: `graph` as served (ZipMap outputs exposed), `original` as
 * stored (for output names and class labels). Throws an Error naming what is wrong.
 */
export const planOnnx = (
  graph: GraphSummary,
  original: GraphSummary,
  metadata: OnnxMetadata,
  files: OnnxFiles,
  place: Place,
): Readonly<{ model: ModelVersion; plan: OnnxPlan }> => {
  let loose: Profile | undefined
  try {
    loose = files.profile === undefined ? undefined : parseProfile(files.profile)
  } catch (error: unknown) {
    throw fail(`profile.json ${errorMessage(error)}`)
  }
  const { inputs, feeds } = planInputs(graph, metadata, loose)
  const { task, classes, outputs, fetch, width } = planOutputs(graph, original, metadata)
  const described = task === 'classification' ? { task, classes, outputs } : { task, outputs }
  let reference: Reference | undefined
  let quality: ModelVersion['quality']
  if (files.profile !== undefined) {
    try {
      const profile = parseProfile(files.profile, { inputs, predictions: predictionInput(described) })
      const { rows, features, predictions } = profile
      reference = predictions === undefined ? { rows, features } : { rows, features, predictions }
      quality = profile.quality
    } catch (error: unknown) {
      throw fail(`profile.json ${errorMessage(error)}`)
    }
  }
  const model: ModelVersion = Object.freeze({
    name: place.name,
    version: place.version,
    platform: ONNX_PLATFORM,
    type: metadata.type,
    inputs: Object.freeze(inputs),
    standardisation: undefined,
    reference,
    provenance: undefined,
    quality,
    signature: Object.freeze(signatureOf(graph)),
    sha256: digest([files.model, files.metadata, files.profile]),
    ...described,
  })
  return { model, plan: Object.freeze({ feeds: Object.freeze(feeds), fetch, width }) }
}
