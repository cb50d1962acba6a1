// A reference profile (`profile.json`): the drift reference of a model trained elsewhere, written by
// `svc profile` (command.ts) from its training rows and read beside the model's own files by the
// runtime that serves it. `parseProfile` is the only way in: it checks every member, the shares of
// each entry with the very checks `parseArtifact` gives an artifact's reference (`checkBins`,
// `checkProportions`), so nothing downstream re-validates.
//
// Format 1, members in this order:
//   format_version  1
//   rows            the rows the profile was computed from (a positive integer)
//   features        one reference per profiled column, in column order (at least one), each
//                   exactly an artifact's reference entry (runtime.ts: `FeatureReference`):
//                   numerical   { name, type: 'numerical', edges, proportions }: strictly
//                               increasing finite edges, edges.length + 1 proportions; bin i holds
//                               edges[i-1] <= v < edges[i], the outer bins open (`referenceBin`)
//                   categorical { name, type: 'categorical', levels, proportions }: distinct
//                               non-empty levels, one proportion per level
//                   proportions each in [0, 1], summing to 1 within 1e-9
//   predictions     optional: the reference of what the model answered on those rows, shaped as
//                   a feature: a classifier's label output as categorical over its classes, a
//                   regressor's value output as numerical (`predictionInput`)
//   quality         optional: how well the model answered labelled rows, by metric, as
//                   `svc profile --target` scores it (`accuracy` and `log_loss` for a classifier;
//                   `rmse`, `mae` and `r2` for a regressor) or as written by hand: at least one
//                   member, each a finite number under a name of 1 to 64 lower-case letters,
//                   digits and underscores starting with a letter (QUALITY_METRIC), so it is safe
//                   as the `metric` label of svc_model_reference_quality and as a JSON key
//
// Imports nothing but the model types and lib/core's leaves, so the model runtimes (lib/models/) can use it.
import { errorMessage, FieldError } from '../core/errors.js'
import { deepFreeze } from '../core/freeze.js'
import { isObject, type JsonObject, parseJson } from '../core/json.js'
import type { FeatureReference, Input, ModelVersion } from './runtime.js'

export const PROFILE_FORMAT_VERSION = 1

export type Profile = Readonly<{
  format_version: typeof PROFILE_FORMAT_VERSION
  rows: number
  features: readonly FeatureReference[]
  predictions?: FeatureReference
  quality?: Readonly<Record<string, number>>
}>

export type ProfileErrorCode = 'INVALID_JSON' | 'UNSUPPORTED_FORMAT' | 'INVALID_SCHEMA' | 'DIMENSION_MISMATCH' | 'INVALID_REFERENCE'

/** A malformed profile: `code` is stable, `field` names the member (`features[1].edges[3]`). */
export class ProfileError extends FieldError<ProfileErrorCode> {
  override name = 'ProfileError'
}

/** What a profile must describe: a model's inputs, in order, and how its answers are profiled. */
export type ProfiledModel = Readonly<{ inputs: readonly Input[]; predictions: Input }>

/**
 * The model's answers as a profile describes them: a classifier's label output (its first output)
 * as a categorical input over its classes, a regressor's value output as a numerical one.
 */
export const predictionInput = (
  model: Pick<ModelVersion, 'outputs'> & (Readonly<{ task: 'classification'; classes: readonly string[] }> | Readonly<{ task: 'regression' }>),
): Input => {
  const name = (model.outputs[0] as ModelVersion['outputs'][number]).name
  return model.task === 'classification' ? { name, type: 'categorical', levels: model.classes } : { name, type: 'numerical' }
}

/** The file's bytes: two-space JSON and a final newline, members in the profile's own order. */
export const serialiseProfile = (profile: Profile): string => `${JSON.stringify(profile, null, 2)}\n`

const PROPORTION_TOLERANCE = 1e-9

/** A quality metric's name: what a `metric` label value and a JSON key may safely hold. */
export const QUALITY_METRIC = /^[a-z][a-z0-9_]{0,63}$/

type Json = JsonObject

/**
 * How a reference check fails: a ProfileError here, an ArtifactError in lib/models/artifact.ts, with
 * the same code, field and reason either way.
 */
export type ReferenceFault = (code: 'INVALID_SCHEMA' | 'DIMENSION_MISMATCH' | 'INVALID_REFERENCE', field: string, reason: string) => Error

const profileFault: ReferenceFault = (code, field, reason) => new ProfileError(code, field, reason)
const schema = (field: string, reason: string): ProfileError => new ProfileError('INVALID_SCHEMA', field, reason)
const invalid = (field: string, reason: string): ProfileError => new ProfileError('INVALID_REFERENCE', field, reason)

/** Throws unless `record` has exactly the members `required` and any of `optional`. */
const members = (record: Json, field: string, required: readonly string[], optional: readonly string[] = []): void => {
  for (const key of Object.keys(record))
    if (!required.includes(key) && !optional.includes(key)) throw schema(`${field}.${key}`, 'is not a member of this object')
  for (const key of required) if (!Object.hasOwn(record, key)) throw schema(`${field}.${key}`, 'is missing')
}

const array = (value: unknown, field: string, fault: ReferenceFault = profileFault): readonly unknown[] => {
  if (!Array.isArray(value)) throw fault('INVALID_SCHEMA', field, 'must be an array')
  return value
}

const string = (value: unknown, field: string): string => {
  if (typeof value !== 'string' || value.length === 0) throw schema(field, 'must be a non-empty string')
  return value
}

const finite = (value: unknown, field: string, fault: ReferenceFault = profileFault): number => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw fault('INVALID_SCHEMA', field, 'must be a finite number')
  return value
}

/**
 * The shares of a reference entry, checked alike wherever a reference gets in (a profile here, an
 * artifact's in lib/models/artifact.ts): `length` proportions, each in [0, 1], summing to 1.
 */
export const checkProportions = (value: unknown, field: string, length: number, fault: ReferenceFault): void => {
  const list = array(value, field, fault)
  if (list.length !== length) throw fault('DIMENSION_MISMATCH', field, `must have ${length} entries, has ${list.length}`)
  let sum = 0
  list.forEach((entry, i) => {
    const p = finite(entry, `${field}[${i}]`, fault)
    if (p < 0 || p > 1) throw fault('INVALID_REFERENCE', `${field}[${i}]`, 'must be between 0 and 1')
    sum += p
  })
  if (Math.abs(sum - 1) > PROPORTION_TOLERANCE) throw fault('INVALID_REFERENCE', field, `must sum to 1 (within ${PROPORTION_TOLERANCE}), sum to ${sum}`)
}

/** Distinct non-empty strings, at least one. */
const levels = (value: unknown, field: string): readonly string[] => {
  const list = array(value, field).map((entry, i) => string(entry, `${field}[${i}]`))
  if (list.length === 0) throw schema(field, 'must have at least 1 entry')
  const seen = new Set<string>()
  list.forEach((level, i) => {
    if (seen.has(level)) throw schema(`${field}[${i}]`, `repeats ${JSON.stringify(level)}`)
    seen.add(level)
  })
  return list
}

/** Why `min` and `max` cannot be the training range of rows binned at `edges`, or undefined when they can. */
const rangeProblem = (min: number, max: number, edges: readonly number[]): string | undefined => {
  if (min > max) return `min (${min}) must not exceed max (${max})`
  // Every edge is a value of the rows (lib/drift/reference.ts), so the range holds them all.
  const first = edges[0]
  const last = edges.at(-1)
  if (first !== undefined && first < min) return `min (${min}) must not exceed the first edge (${first})`
  if (last !== undefined && last > max) return `max (${max}) must not be below the last edge (${last})`
  return undefined
}

/**
 * The bins of a numerical reference entry, checked alike wherever a reference gets in (a profile
 * here, an artifact's in lib/models/artifact.ts): strictly increasing finite edges, one proportion
 * per bin (`checkProportions`), and `min` and `max`, together or not at all, a range holding every
 * edge. The entry's members, name and type are its format's to check, before.
 */
export const checkBins = (entry: Readonly<Json>, field: string, fault: ReferenceFault): void => {
  let previous = -Infinity
  const edges = array(entry['edges'], `${field}.edges`, fault).map((edge, j) => {
    const value = finite(edge, `${field}.edges[${j}]`, fault)
    if (value <= previous) throw fault('INVALID_REFERENCE', `${field}.edges[${j}]`, 'edges must be strictly increasing')
    previous = value
    return value
  })
  checkProportions(entry['proportions'], `${field}.proportions`, edges.length + 1, fault)
  const hasMin = Object.hasOwn(entry, 'min')
  // An artifact's members already hold both or neither; a profile's are checked here.
  if (hasMin !== Object.hasOwn(entry, 'max')) throw fault('INVALID_SCHEMA', `${field}.${hasMin ? 'max' : 'min'}`, 'is missing: min and max come together')
  if (!hasMin) return
  const problem = rangeProblem(finite(entry['min'], `${field}.min`, fault), finite(entry['max'], `${field}.max`, fault), edges)
  if (problem !== undefined) throw fault('INVALID_REFERENCE', field, problem)
}

/**
 * One reference entry; when `input` is given, it must describe that input (name, type, levels). A
 * profile's entries, and the references a tool reads from the service (`svc loadgen`'s draws).
 */
export const checkFeature = (value: unknown, field: string, input: Input | undefined): FeatureReference => {
  if (!isObject(value)) throw schema(field, 'must be an object')
  const type = value['type']
  if (type !== 'numerical' && type !== 'categorical') throw schema(`${field}.type`, "must be 'numerical' or 'categorical'")
  members(value, field, ['name', 'type', type === 'numerical' ? 'edges' : 'levels', 'proportions'], type === 'numerical' ? ['min', 'max'] : [])
  const name = string(value['name'], `${field}.name`)
  if (input !== undefined && (name !== input.name || type !== input.type))
    throw invalid(field, `must describe ${input.name} (${input.type}), describes ${name} (${type})`)
  if (type === 'numerical') checkBins(value, field, profileFault)
  else {
    const list = levels(value['levels'], `${field}.levels`)
    if (input?.type === 'categorical' && (list.length !== input.levels.length || list.some((level, j) => level !== input.levels[j])))
      throw invalid(`${field}.levels`, `must equal the levels of ${input.name}: ${input.levels.join(', ')}`)
    checkProportions(value['proportions'], `${field}.proportions`, list.length, profileFault)
  }
  return value as FeatureReference
}

/** The quality member: at least one metric, each named by QUALITY_METRIC, each a finite number. */
const checkQuality = (value: unknown): void => {
  if (!isObject(value)) throw schema('quality', 'must be an object of metric names to numbers')
  const entries = Object.entries(value)
  if (entries.length === 0) throw schema('quality', 'must have at least 1 metric (leave quality out when none was measured)')
  for (const [metric, number] of entries) {
    if (!QUALITY_METRIC.test(metric))
      throw schema(`quality.${JSON.stringify(metric)}`, 'a metric name is 1 to 64 lower-case letters, digits and underscores, starting with a letter')
    finite(number, `quality.${metric}`)
  }
}

/**
 * Parses and checks a profile: UTF-8 JSON, `format_version`, then every member. With `model`, the
 * features must be one per input in input order (names, types, a categorical input's levels in
 * order), and `predictions`, when present, must describe `model.predictions`. Throws ProfileError;
 * returns the profile deep-frozen.
 */
export const parseProfile = (bytes: Buffer | string, model?: ProfiledModel): Profile => {
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw new ProfileError('INVALID_JSON', '(document)', `is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  if (!isObject(value)) throw schema('(document)', 'must be a JSON object')
  if (value['format_version'] !== PROFILE_FORMAT_VERSION)
    throw new ProfileError('UNSUPPORTED_FORMAT', 'format_version', `${JSON.stringify(value['format_version'])} is not ${PROFILE_FORMAT_VERSION}`)
  members(value, '(document)', ['format_version', 'rows', 'features'], ['predictions', 'quality'])
  const rows = value['rows']
  if (typeof rows !== 'number' || !Number.isSafeInteger(rows) || rows < 1) throw schema('rows', 'must be a positive integer')
  const features = array(value['features'], 'features')
  if (features.length === 0) throw schema('features', 'must have at least 1 entry')
  if (model !== undefined && features.length !== model.inputs.length)
    throw new ProfileError('DIMENSION_MISMATCH', 'features', `must have one entry per input (${model.inputs.length}), has ${features.length}`)
  const names = new Set<string>()
  features.forEach((feature, i) => {
    const { name } = checkFeature(feature, `features[${i}]`, model?.inputs[i])
    if (names.has(name)) throw schema(`features[${i}].name`, `repeats ${JSON.stringify(name)}`)
    names.add(name)
  })
  if (Object.hasOwn(value, 'predictions')) checkFeature(value['predictions'], 'predictions', model?.predictions)
  if (Object.hasOwn(value, 'quality')) checkQuality(value['quality'])
  return deepFreeze(value) as Profile
}
