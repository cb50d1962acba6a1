// `metadata.json`, beside an ONNX version's `model.onnx` (lib/README.md §10): what the graph cannot
// say. Optional, as is every member; a graph that says it all needs none.
//
//   features  the names of the columns of the graph's one [N, F] input, in column order; without
//             them a fixed F's columns are named after the input, `X_0` … `X_{F−1}` (onnx/plan.ts),
//             and a free F is refused; with one tensor per feature, the inputs' own names are the
//             features, and this is refused
//   classes   the class labels, in the order of the probability columns, for a classifier whose
//             graph names none (a network ending in Softmax), which otherwise answers `0` … `C−1`;
//             refused when the graph names its own and they differ
//   levels    per string input, the strings it takes, in order: what a categorical input is
//             checked against and its drift binned by; a profile's levels serve when this is absent
//   task      "classification" or "regression", for a graph whose outputs do not tell (one float
//             output [N, 1] is a regressor unless this says otherwise)
//   type      the model family shown on /api/v1/models/{name} (`GradientBoostingClassifier`);
//             "onnx" when absent
//   batch     this version's batching in the worker pool (onnx/pool.ts): `max_rows` (≥ 1) and
//             `max_delay_us` (≥ 0), each in place of SVC_BATCH_MAX_ROWS and SVC_BATCH_MAX_DELAY_US
//
// Checked as strictly as a manifest: an unknown member is refused, so a misspelt `clases` stops the
// version with a reason instead of serving a model without its labels.
import { errorMessage, SvcError } from '../../core/errors.js'
import { isObject, parseJson } from '../../core/json.js'
import type { Task } from '../runtime.js'

export type OnnxMetadata = Readonly<{
  features: readonly string[] | undefined
  classes: readonly string[] | undefined
  levels: Readonly<Record<string, readonly string[]>>
  task: Task | undefined
  type: string
  /** This version's own batch limits, where set. */
  batch: Readonly<{ maxRows?: number; maxDelayUs?: number }>
}>

// Levels are looked up by input name: no prototype, so an input named `constructor` has none.
export const NO_METADATA: OnnxMetadata = Object.freeze({
  features: undefined,
  classes: undefined,
  levels: Object.freeze<Record<string, readonly string[]>>(Object.create(null)),
  task: undefined,
  type: 'onnx',
  batch: Object.freeze({}),
})

const MEMBERS: readonly string[] = ['features', 'classes', 'levels', 'task', 'type', 'batch']
const BATCH_MEMBERS: Readonly<Record<string, readonly [key: 'maxRows' | 'maxDelayUs', min: number, max: number]>> = {
  max_rows: ['maxRows', 1, 100_000],
  max_delay_us: ['maxDelayUs', 0, 1_000_000],
}
const TASKS: readonly Task[] = ['classification', 'regression']
/** Longer names and labels are a mistake, and would fill every log line and response they appear in. */
const MAX_NAME_LENGTH = 256

/** A malformed metadata.json; the message names the member (`levels.colour[2]: …`). */
export class OnnxMetadataError extends SvcError {
  override name = 'OnnxMetadataError'
  readonly code = 'INVALID_METADATA'
}

const fail = (field: string, reason: string): OnnxMetadataError => new OnnxMetadataError(`${field}: ${reason}`)

const name = (value: unknown, field: string): string => {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_LENGTH)
    throw fail(field, `must be a string of 1 to ${MAX_NAME_LENGTH} characters`)
  return value
}

/** A non-empty array of distinct names, frozen. */
const names = (value: unknown, field: string): readonly string[] => {
  if (!Array.isArray(value) || value.length === 0) throw fail(field, 'must be a non-empty array of strings')
  const seen = new Set<string>()
  value.forEach((entry, i) => {
    const text = name(entry, `${field}[${i}]`)
    if (seen.has(text)) throw fail(`${field}[${i}]`, `repeats ${JSON.stringify(entry)}`)
    seen.add(text)
  })
  return Object.freeze([...seen])
}

/** The task, if the member is given: one of TASKS. */
const task = (value: unknown): Task | undefined => {
  const found = TASKS.find((known) => known === value)
  if (value !== undefined && found === undefined) throw fail('task', `must be one of ${TASKS.join(', ')}`)
  return found
}

const levels = (value: unknown): OnnxMetadata['levels'] => {
  if (!isObject(value)) throw fail('levels', 'must be an object of input name to its strings')
  const out: Record<string, readonly string[]> = Object.create(null)
  for (const [input, list] of Object.entries(value)) out[input] = names(list, `levels.${input}`)
  return Object.freeze(out)
}

const batch = (value: unknown): OnnxMetadata['batch'] => {
  if (!isObject(value)) throw fail('batch', 'must be an object with max_rows and/or max_delay_us')
  const out: { maxRows?: number; maxDelayUs?: number } = {}
  for (const [member, given] of Object.entries(value)) {
    const known = BATCH_MEMBERS[member]
    if (known === undefined) throw fail(`batch.${member}`, `is not a member of batch (${Object.keys(BATCH_MEMBERS).join(', ')})`)
    const [key, min, max] = known
    if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < min || given > max) {
      throw fail(`batch.${member}`, `must be an integer from ${min} to ${max}`)
    }
    out[key] = given
  }
  return Object.freeze(out)
}

/** Parses and checks metadata.json; undefined bytes (no file) is NO_METADATA. Throws OnnxMetadataError. */
export const parseOnnxMetadata = (bytes: Buffer | undefined): OnnxMetadata => {
  if (bytes === undefined) return NO_METADATA
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw fail('(document)', `is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  if (!isObject(value)) throw fail('(document)', 'must be a JSON object')
  for (const key of Object.keys(value)) if (!MEMBERS.includes(key)) throw fail(key, `is not a member of metadata.json (${MEMBERS.join(', ')})`)
  const checkedTask = task(value['task'])
  return Object.freeze({
    features: value['features'] === undefined ? undefined : names(value['features'], 'features'),
    classes: value['classes'] === undefined ? undefined : names(value['classes'], 'classes'),
    levels: value['levels'] === undefined ? NO_METADATA.levels : levels(value['levels']),
    task: checkedTask,
    type: value['type'] === undefined ? NO_METADATA.type : name(value['type'], 'type'),
    batch: value['batch'] === undefined ? NO_METADATA.batch : batch(value['batch']),
  })
}
