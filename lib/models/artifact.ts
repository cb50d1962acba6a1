// The kernel's model artifact (`model.json`): one JSON document per model version, everything
// needed to serve it on the kernel (kernel.ts) and to watch it drift. `parseArtifact` is the only
// way in; it checks the content hash, the schema, every dimension and the reference distributions,
// so nothing downstream re-validates. kernel/runtime.ts describes it for the rest of svc.
//
// Format 1, members in the order the training script writes them:
//   format_version  1
//   name, version   path-safe identifiers (`iris`, `1`)
//   type, task      `logistic_regression` + `classification`, or `linear_regression` + `regression`
//   inputs          [{ name, type: 'numerical' } | { name, type: 'categorical', levels: [...] }]
//   outputs         classification: [{ name, type: 'label' }, { name, type: 'probabilities' }]
//                   regression:     [{ name, type: 'value' }]
//   classes         classification only: the labels, in probability order (at least 2)
//   preprocessing   { standardisation: { mean, scale } }, one entry per numerical input, in input
//                   order; a numerical input x enters the model as (x - mean) / scale
//   parameters      { weights: K rows × D, intercepts: K }. D is the encoded width: inputs in
//                   order, a numerical input one column, a categorical input one 0/1 column per
//                   level (one-hot, in `levels` order). K is 1 for regression and for two classes
//                   (the logit of classes[1] against classes[0]), else one row per class (softmax).
//   reference       { rows, features: [...] }: the distribution of every input over the `rows`
//                   rows of the data set the model was built from, one entry per input in order:
//                   numerical   { name, type, edges, proportions, min?, max? }: bin i holds
//                               values v with edges[i-1] <= v < edges[i], the outer bins open
//                               (see `referenceBin` in lib/drift/psi.ts); edges.length + 1
//                               proportions; min and max (together, or neither) the range the
//                               rows spanned, what a served value is out of range against.
//                   categorical { name, type, levels, proportions }: one proportion per level.
//                   And `predictions`, optional: what the model answered on those rows, shaped as
//                   an entry (a classifier's label output categorical over its classes, a
//                   regressor's value output numerical), for prediction drift.
//   provenance      { dataset: { name, source, rows }, seed, split, method, hyperparameters,
//                   metrics }: how it was trained; metrics are measured on the held-out split.
//   sha256          see `artifactSha256`.
import { createHash } from 'node:crypto'
import { errorMessage, FieldError } from '../core/errors.js'
import { deepFreeze } from '../core/freeze.js'
import { isObject, type JsonObject, parseJson } from '../core/json.js'
import { checkBins, checkProportions, predictionInput, type ReferenceFault } from './profile.js'
import type { Input, Output, Provenance, Reference } from './runtime.js'

export const FORMAT_VERSIONS: readonly number[] = [1]

type Common = Readonly<{
  format_version: number
  name: string
  version: string
  inputs: readonly Input[]
  outputs: readonly Output[]
  preprocessing: Readonly<{ standardisation: Readonly<{ mean: readonly number[]; scale: readonly number[] }> }>
  parameters: Readonly<{ weights: readonly (readonly number[])[]; intercepts: readonly number[] }>
  reference: Reference
  provenance: Provenance
  sha256: string
}>

export type LogisticArtifact = Common & Readonly<{ type: 'logistic_regression'; task: 'classification'; classes: readonly string[] }>
export type LinearArtifact = Common & Readonly<{ type: 'linear_regression'; task: 'regression' }>
export type Artifact = LogisticArtifact | LinearArtifact

type Unsigned<T> = T extends unknown ? Omit<T, 'sha256'> : never
/** An artifact before `signArtifact`: what training builds and what `compile` needs. */
export type UnsignedArtifact = Unsigned<Artifact>

export type ArtifactErrorCode = 'INVALID_JSON' | 'UNSUPPORTED_FORMAT' | 'INVALID_SCHEMA' | 'DIMENSION_MISMATCH' | 'INVALID_REFERENCE' | 'SHA256_MISMATCH'

/** A malformed artifact: `code` is stable, `field` names the member (`parameters.weights[1]`). */
export class ArtifactError extends FieldError<ArtifactErrorCode> {
  override name = 'ArtifactError'
}

/**
 * Parameters beyond this magnitude are refused. Trained ones are many orders smaller; the bound is
 * what lets the kernel prove its sums finite (see `STANDARDISED_LIMIT` in kernel.ts).
 */
export const MAX_PARAMETER = 1e100

/**
 * RFC 8785 (JCS) canonical JSON: object members sorted by key (UTF-16 code units, which is what
 * `sort()` compares), no whitespace, strings and numbers exactly as `JSON.stringify` writes them.
 */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const record: object = value
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(Reflect.get(record, key))}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * The hex SHA-256 of the UTF-8 bytes of the artifact's canonical JSON (`canonicalJson`, RFC 8785)
 * with the `sha256` member left out. Whitespace and member order in the file do not matter. `svc
 * sign` (lib/tools/sign/) writes it into an edited file and `svc sign --check` checks it; with
 * Node alone:
 *
 *   node -e '
 *     const c = (v) => Array.isArray(v) ? "[" + v.map(c) + "]" : v && typeof v == "object"
 *       ? "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + c(v[k])) + "}" : JSON.stringify(v)
 *     const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
 *     const s = a.sha256
 *     delete a.sha256
 *     const h = require("crypto").createHash("sha256").update(c(a)).digest("hex")
 *     console.log(h, h === s ? "OK" : "MISMATCH")' model.json
 */
export const artifactSha256 = (artifact: object): string => {
  const { sha256: _, ...rest }: { sha256?: unknown } = artifact
  return createHash('sha256').update(canonicalJson(rest)).digest('hex')
}

export const signArtifact = (artifact: UnsignedArtifact): Artifact => ({ ...artifact, sha256: artifactSha256(artifact) })

/** The file's bytes: two-space JSON and a final newline, members in the artifact's own order. */
export const serialiseArtifact = (artifact: Artifact): string => `${JSON.stringify(artifact, null, 2)}\n`

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/
const MODEL_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const SHA256 = /^[0-9a-f]{64}$/

type Json = JsonObject

const schema = (field: string, reason: string) => new ArtifactError('INVALID_SCHEMA', field, reason)
/** How the reference checks shared with profiles (profile.ts) fail here. */
const fault: ReferenceFault = (code, field, reason) => new ArtifactError(code, field, reason)

const plainObject = (value: unknown, field: string): Json => {
  if (!isObject(value)) throw schema(field, 'must be an object')
  return value
}

/** An object with exactly these members. */
const object = (value: unknown, field: string, members: readonly string[]): Json => {
  const record = plainObject(value, field)
  for (const key of Object.keys(record)) if (!members.includes(key)) throw schema(`${field}.${key}`, 'is not a member of this object')
  for (const key of members) if (!Object.hasOwn(record, key)) throw schema(`${field}.${key}`, 'is missing')
  return record
}

const array = (value: unknown, field: string): readonly unknown[] => {
  if (!Array.isArray(value)) throw schema(field, 'must be an array')
  return value
}

const string = (value: unknown, field: string, pattern?: RegExp): string => {
  if (typeof value !== 'string' || value.length === 0) throw schema(field, 'must be a non-empty string')
  if (pattern !== undefined && !pattern.test(value)) throw schema(field, `must match ${String(pattern)}`)
  return value
}

const finite = (value: unknown, field: string): number => {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw schema(field, 'must be a finite number')
  return value
}

const count = (value: unknown, field: string): number => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw schema(field, 'must be a non-negative integer')
  return value
}

const numbers = (value: unknown, field: string, length: number): readonly number[] => {
  const list = array(value, field)
  if (list.length !== length) throw new ArtifactError('DIMENSION_MISMATCH', field, `must have ${length} entries, has ${list.length}`)
  return list.map((entry, i) => finite(entry, `${field}[${i}]`))
}

const parameter = (value: unknown, field: string): void => {
  if (Math.abs(finite(value, field)) > MAX_PARAMETER) throw schema(field, `must not exceed ${MAX_PARAMETER} in magnitude`)
}

/** Throws naming the first entry that repeats an earlier one. */
const distinct = (list: readonly string[], field: (i: number) => string): void => {
  const i = list.findIndex((entry, j) => list.indexOf(entry) !== j)
  if (i !== -1) throw schema(field(i), `repeats ${JSON.stringify(list[i])}`)
}

/** Distinct non-empty strings (levels, classes); at least `min`. */
const labels = (value: unknown, field: string, min: number): readonly string[] => {
  const list = array(value, field).map((entry, i) => string(entry, `${field}[${i}]`))
  if (list.length < min) throw schema(field, `must have at least ${min} entries`)
  distinct(list, (i) => `${field}[${i}]`)
  return list
}

const checkInput = (value: unknown, field: string): Input => {
  const type = isObject(value) ? value['type'] : undefined
  if (type === 'numerical') {
    const input = object(value, field, ['name', 'type'])
    return { name: string(input['name'], `${field}.name`, NAME), type }
  }
  if (type === 'categorical') {
    const input = object(value, field, ['name', 'type', 'levels'])
    return { name: string(input['name'], `${field}.name`, NAME), type, levels: labels(input['levels'], `${field}.levels`, 1) }
  }
  throw schema(`${field}.type`, "must be 'numerical' or 'categorical'")
}

const OUTPUTS = { classification: ['label', 'probabilities'], regression: ['value'] } as const

const checkOutputs = (value: unknown, task: 'classification' | 'regression'): Output[] => {
  const expected = OUTPUTS[task]
  const outputs = array(value, 'outputs')
  if (outputs.length !== expected.length) throw schema('outputs', `a ${task} model has ${expected.length} output(s): ${expected.join(', ')}`)
  const checked = outputs.map((entry, i): Output => {
    const output = object(entry, `outputs[${i}]`, ['name', 'type'])
    const type = expected.find((name) => name === output['type'])
    if (type === undefined || type !== expected[i]) throw schema(`outputs[${i}].type`, `must be '${expected[i]}'`)
    return { name: string(output['name'], `outputs[${i}].name`, NAME), type }
  })
  distinct(
    checked.map((output) => output.name),
    (i) => `outputs[${i}].name`,
  )
  return checked
}

/** One entry of a reference, describing `input`: what it holds, then its shares as a profile's are checked. */
const checkEntry = (value: unknown, field: string, input: Input): void => {
  const hasRange = typeof value === 'object' && value !== null && (Object.hasOwn(value, 'min') || Object.hasOwn(value, 'max'))
  const members =
    input.type === 'numerical' ? ['name', 'type', 'edges', 'proportions', ...(hasRange ? ['min', 'max'] : [])] : ['name', 'type', 'levels', 'proportions']
  const feature = object(value, field, members)
  if (feature['name'] !== input.name || feature['type'] !== input.type)
    throw new ArtifactError('INVALID_REFERENCE', field, `must describe input ${input.name} (${input.type})`)
  if (input.type === 'numerical') checkBins(feature, field, fault)
  else {
    const levels = array(feature['levels'], `${field}.levels`)
    if (levels.length !== input.levels.length || levels.some((level, j) => level !== input.levels[j]))
      throw new ArtifactError('INVALID_REFERENCE', `${field}.levels`, `must equal the input's levels`)
    checkProportions(feature['proportions'], `${field}.proportions`, levels.length, fault)
  }
}

const checkReference = (value: unknown, inputs: readonly Input[], answers: Input): void => {
  const hasPredictions = typeof value === 'object' && value !== null && Object.hasOwn(value, 'predictions')
  const reference = object(value, 'reference', hasPredictions ? ['rows', 'features', 'predictions'] : ['rows', 'features'])
  if (count(reference['rows'], 'reference.rows') === 0) throw schema('reference.rows', 'must be positive')
  const features = array(reference['features'], 'reference.features')
  if (features.length !== inputs.length)
    throw new ArtifactError('DIMENSION_MISMATCH', 'reference.features', `must have one entry per input (${inputs.length}), has ${features.length}`)
  inputs.forEach((input, i) => {
    checkEntry(features[i], `reference.features[${i}]`, input)
  })
  if (hasPredictions) checkEntry(reference['predictions'], 'reference.predictions', answers)
}

const checkProvenance = (value: unknown): void => {
  const provenance = object(value, 'provenance', ['dataset', 'seed', 'split', 'method', 'hyperparameters', 'metrics'])
  const dataset = object(provenance['dataset'], 'provenance.dataset', ['name', 'source', 'rows'])
  string(dataset['name'], 'provenance.dataset.name')
  string(dataset['source'], 'provenance.dataset.source')
  count(dataset['rows'], 'provenance.dataset.rows')
  if (count(provenance['seed'], 'provenance.seed') > 0xffffffff) throw schema('provenance.seed', 'must fit in 32 bits')
  const split = object(provenance['split'], 'provenance.split', ['test_fraction', 'stratified', 'train_rows', 'test_rows'])
  const fraction = finite(split['test_fraction'], 'provenance.split.test_fraction')
  if (fraction < 0 || fraction >= 1) throw schema('provenance.split.test_fraction', 'must be in [0, 1)')
  if (typeof split['stratified'] !== 'boolean') throw schema('provenance.split.stratified', 'must be a boolean')
  count(split['train_rows'], 'provenance.split.train_rows')
  count(split['test_rows'], 'provenance.split.test_rows')
  string(provenance['method'], 'provenance.method')
  for (const member of ['hyperparameters', 'metrics']) {
    for (const [key, entry] of Object.entries(plainObject(provenance[member], `provenance.${member}`))) finite(entry, `provenance.${member}.${key}`)
  }
}

/**
 * Parses and checks an artifact file, in this order: UTF-8 JSON, `format_version`, `sha256`, then
 * the schema, dimensions and reference. Throws `ArtifactError`; returns the artifact deep-frozen.
 */
export const parseArtifact = (bytes: Buffer | string): Artifact => {
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw new ArtifactError('INVALID_JSON', '(document)', `is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  if (!isObject(value)) throw schema('(document)', 'must be a JSON object')
  const raw = value
  if (!FORMAT_VERSIONS.some((version) => version === raw['format_version'])) {
    throw new ArtifactError('UNSUPPORTED_FORMAT', 'format_version', `${JSON.stringify(raw['format_version'])} is not one of ${FORMAT_VERSIONS.join(', ')}`)
  }
  const sha256 = string(raw['sha256'], 'sha256', SHA256)
  if (artifactSha256(raw) !== sha256)
    throw new ArtifactError('SHA256_MISMATCH', 'sha256', 'does not match the content: the file was changed or damaged after training')

  const type = raw['type']
  const isLogistic = type === 'logistic_regression'
  if (!isLogistic && type !== 'linear_regression') throw schema('type', "must be 'logistic_regression' or 'linear_regression'")
  const task = isLogistic ? 'classification' : 'regression'
  const members = ['format_version', 'name', 'version', 'type', 'task', 'inputs', 'outputs', 'preprocessing', 'parameters', 'reference', 'provenance', 'sha256']
  const artifact = object(raw, '(document)', isLogistic ? [...members, 'classes'] : members)
  if (artifact['task'] !== task) throw schema('task', `must be '${task}' for ${type}`)
  string(artifact['name'], 'name', MODEL_NAME)
  string(artifact['version'], 'version', VERSION)

  const inputs = array(artifact['inputs'], 'inputs').map((input, i) => checkInput(input, `inputs[${i}]`))
  if (inputs.length === 0) throw schema('inputs', 'must have at least 1 entry')
  distinct(
    inputs.map((input) => input.name),
    (i) => `inputs[${i}].name`,
  )
  const outputs = checkOutputs(artifact['outputs'], task)
  const classes = isLogistic ? labels(artifact['classes'], 'classes', 2) : []

  const numerical = inputs.filter((input) => input.type === 'numerical').length
  const preprocessing = object(artifact['preprocessing'], 'preprocessing', ['standardisation'])
  const standardisation = object(preprocessing['standardisation'], 'preprocessing.standardisation', ['mean', 'scale'])
  numbers(standardisation['mean'], 'preprocessing.standardisation.mean', numerical)
  numbers(standardisation['scale'], 'preprocessing.standardisation.scale', numerical).forEach((scale, i) => {
    if (scale <= 0) throw schema(`preprocessing.standardisation.scale[${i}]`, 'must be positive')
  })

  const width = inputs.reduce((sum, input) => sum + (input.type === 'numerical' ? 1 : input.levels.length), 0)
  const rows = classes.length > 2 ? classes.length : 1
  const parameters = object(artifact['parameters'], 'parameters', ['weights', 'intercepts'])
  const weights = array(parameters['weights'], 'parameters.weights')
  if (weights.length !== rows)
    throw new ArtifactError(
      'DIMENSION_MISMATCH',
      'parameters.weights',
      `must have ${rows} row(s) (${isLogistic ? `${classes.length} classes` : 'regression'}), has ${weights.length}`,
    )
  weights.forEach((row, k) => {
    numbers(row, `parameters.weights[${k}]`, width).forEach((w, d) => {
      parameter(w, `parameters.weights[${k}][${d}]`)
    })
  })
  numbers(parameters['intercepts'], 'parameters.intercepts', rows).forEach((b, k) => {
    parameter(b, `parameters.intercepts[${k}]`)
  })

  // The answers are described as a profile describes them, one rule for artifacts and profiles.
  const answered = predictionInput(isLogistic ? { task: 'classification', classes, outputs } : { task: 'regression', outputs })
  checkReference(artifact['reference'], inputs, answered)
  checkProvenance(artifact['provenance'])
  // Every member is checked above, each as its type says: the one assertion of this module.
  return deepFreeze(artifact) as Artifact
}
