// Inference: `compile` turns a checked artifact into typed arrays once, at load; `predict` then runs
// a batch with no allocation per row or per call (one scratch row, made at compile, is reused:
// `predict` is synchronous, so two calls never interleave).
//
// Features arrive row-major, N rows × F inputs in the artifact's input order, raw (not
// standardised); a categorical input is given as the index of its level. `encode` builds that
// array from named rows, which is what a JSON request carries.
//
// hot path: change with care. A prediction is never NaN or infinite: inputs are checked as they are
// read, standardised values saturate at ±STANDARDISED_LIMIT, and softmax subtracts the row's
// largest logit.
import type { Input, UnsignedArtifact } from './artifact.js'

/**
 * Standardised inputs are clamped to this many standard deviations. With parameters bounded by
 * MAX_PARAMETER (1e100) every product is at most 1e200 and a sum of D of them stays finite for any
 * D below 1e108, so no logit or value can overflow into Infinity or Infinity - Infinity = NaN.
 * No real input is this far out; the clamp only changes the answer for absurd ones (1e300).
 */
export const STANDARDISED_LIMIT = 1e100

export type InputProblemCode = 'NOT_AN_OBJECT' | 'MISSING_FEATURE' | 'UNKNOWN_FEATURE' | 'WRONG_TYPE' | 'NON_FINITE_VALUE' | 'UNKNOWN_LEVEL'
/** One bad value: `row` is its index in the batch, `feature` the input's name ('' for a whole row). */
export type InputProblem = Readonly<{ row: number; feature: string; code: InputProblemCode; message: string }>

/** Rows a model cannot take. `problems` lists the first MAX_PROBLEMS, each by row and feature name. */
export class InputError extends Error {
  override name = 'InputError'
  readonly code = 'INVALID_INPUT'
  readonly problems: readonly InputProblem[]
  constructor(problems: readonly InputProblem[]) {
    super(problems.map((problem) => problem.message).join('; '))
    this.problems = problems
  }
}

/** Enough to fix a request; a batch of 10 000 bad rows does not need 10 000 messages. */
export const MAX_PROBLEMS = 10

type Base = Readonly<{
  name: string
  version: string
  inputs: readonly Input[]
  /** Builds the feature array for `predict` from named rows; throws InputError. */
  encode(rows: readonly unknown[]): Float64Array
}>

export type Classifier = Base &
  Readonly<{
    task: 'classification'
    classes: readonly string[]
    /**
     * Writes `n` rows of class probabilities (row-major, one per class, summing to 1) to
     * `probabilities` and each row's most probable class index (the first on a tie) to `labels`.
     */
    predict(features: Float64Array, n: number, probabilities: Float64Array, labels: Uint32Array): void
  }>

export type Regressor = Base &
  Readonly<{
    task: 'regression'
    /** Writes `n` predicted values to `values`. */
    predict(features: Float64Array, n: number, values: Float64Array): void
  }>

export type CompiledModel = Classifier | Regressor

const problem = (row: number, feature: string, code: InputProblemCode, what: string): InputProblem => ({
  row,
  feature,
  code,
  message: feature === '' ? `row ${row} ${what}` : `row ${row}: ${feature} ${what}`,
})

const checkSize = (what: string, array: ArrayLike<number>, needed: number): void => {
  if (array.length < needed) throw new RangeError(`${what} holds ${array.length} values, ${needed} needed`)
}

const checkCount = (n: number): void => {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`the row count must be a non-negative integer, is ${n}`)
}

/** Typed arrays for one artifact, once, at load. Trusts it: give it what `parseArtifact` returned. */
export const compile = (artifact: UnsignedArtifact): CompiledModel => {
  const { inputs } = artifact
  const F = inputs.length
  // Per input: its first encoded column, its level count (0 for numerical), its mean and scale.
  const column = new Int32Array(F)
  const levelCount = new Int32Array(F)
  const mean = new Float64Array(F)
  const scale = new Float64Array(F)
  const levelIndex: (ReadonlyMap<string, number> | undefined)[] = []
  let D = 0
  let numerical = 0
  inputs.forEach((input, j) => {
    column[j] = D
    if (input.type === 'numerical') {
      mean[j] = artifact.preprocessing.standardisation.mean[numerical] as number
      scale[j] = artifact.preprocessing.standardisation.scale[numerical] as number
      numerical++
      levelIndex.push(undefined)
      D += 1
    } else {
      levelCount[j] = input.levels.length
      levelIndex.push(new Map(input.levels.map((level, i) => [level, i])))
      D += input.levels.length
    }
  })
  const K = artifact.parameters.intercepts.length
  const weights = Float64Array.from(artifact.parameters.weights.flat())
  const intercepts = Float64Array.from(artifact.parameters.intercepts)
  const scratch = new Float64Array(D)
  const names = new Set(inputs.map((input) => input.name))

  // Reads row r into `scratch`: standardised numerical columns, one-hot categorical ones.
  const load = (features: Float64Array, r: number): void => {
    const base = r * F
    for (let j = 0; j < F; j++) {
      const x = features[base + j] as number
      const levels = levelCount[j] as number
      const at = column[j] as number
      if (levels === 0) {
        if (!Number.isFinite(x)) throw new InputError([problem(r, (inputs[j] as Input).name, 'NON_FINITE_VALUE', 'must be a finite number')])
        let s = (x - (mean[j] as number)) / (scale[j] as number)
        if (s > STANDARDISED_LIMIT) s = STANDARDISED_LIMIT
        else if (s < -STANDARDISED_LIMIT) s = -STANDARDISED_LIMIT
        scratch[at] = s
      } else {
        if (!(x >= 0 && x < levels && Math.floor(x) === x))
          throw new InputError([problem(r, (inputs[j] as Input).name, 'UNKNOWN_LEVEL', `must be a level index from 0 to ${levels - 1}`)])
        scratch.fill(0, at, at + levels)
        scratch[at + x] = 1
      }
    }
  }
  const logit = (k: number): number => {
    let z = intercepts[k] as number
    const row = k * D
    for (let d = 0; d < D; d++) z += (weights[row + d] as number) * (scratch[d] as number)
    return z
  }

  const encode = (rows: readonly unknown[]): Float64Array => {
    const out = new Float64Array(rows.length * F)
    const problems: InputProblem[] = []
    for (let r = 0; r < rows.length && problems.length < MAX_PROBLEMS; r++) {
      const row = rows[r]
      if (typeof row !== 'object' || row === null || Array.isArray(row)) {
        problems.push(problem(r, '', 'NOT_AN_OBJECT', 'must be an object of named features'))
        continue
      }
      const record = row as Readonly<Record<string, unknown>>
      for (let j = 0; j < F; j++) {
        const input = inputs[j] as Input
        const value = Object.hasOwn(record, input.name) ? record[input.name] : undefined
        if (value === undefined || value === null) problems.push(problem(r, input.name, 'MISSING_FEATURE', 'is missing'))
        else if (input.type === 'numerical') {
          if (typeof value !== 'number') problems.push(problem(r, input.name, 'WRONG_TYPE', 'must be a number'))
          else if (!Number.isFinite(value)) problems.push(problem(r, input.name, 'NON_FINITE_VALUE', 'must be a finite number'))
          else out[r * F + j] = value
        } else {
          if (typeof value !== 'string') problems.push(problem(r, input.name, 'WRONG_TYPE', 'must be a string'))
          else {
            const level = (levelIndex[j] as ReadonlyMap<string, number>).get(value)
            if (level === undefined) problems.push(problem(r, input.name, 'UNKNOWN_LEVEL', `must be one of ${input.levels.join(', ')}`))
            else out[r * F + j] = level
          }
        }
      }
      for (const key in record) if (!names.has(key)) problems.push(problem(r, key, 'UNKNOWN_FEATURE', 'is not an input of this model'))
    }
    if (problems.length > 0) throw new InputError(problems.slice(0, MAX_PROBLEMS))
    return out
  }

  const common = { name: artifact.name, version: artifact.version, inputs, encode }
  if (artifact.type === 'linear_regression') {
    return {
      ...common,
      task: 'regression',
      predict(features, n, values) {
        checkCount(n)
        checkSize('features', features, n * F)
        checkSize('values', values, n)
        for (let r = 0; r < n; r++) {
          load(features, r)
          values[r] = logit(0)
        }
      },
    }
  }
  const C = artifact.classes.length
  return {
    ...common,
    task: 'classification',
    classes: artifact.classes,
    predict:
      K === 1
        ? (features, n, probabilities, labels) => {
            checkCount(n)
            checkSize('features', features, n * F)
            checkSize('probabilities', probabilities, n * 2)
            checkSize('labels', labels, n)
            for (let r = 0; r < n; r++) {
              load(features, r)
              // z is the log-odds of classes[1]; each side computed directly, not as 1 - p.
              const z = logit(0)
              probabilities[2 * r] = 1 / (1 + Math.exp(z))
              probabilities[2 * r + 1] = 1 / (1 + Math.exp(-z))
              labels[r] = z > 0 ? 1 : 0
            }
          }
        : (features, n, probabilities, labels) => {
            checkCount(n)
            checkSize('features', features, n * F)
            checkSize('probabilities', probabilities, n * C)
            checkSize('labels', labels, n)
            for (let r = 0; r < n; r++) {
              load(features, r)
              const base = r * C
              let best = 0
              let max = -Infinity
              for (let k = 0; k < C; k++) {
                const z = logit(k)
                probabilities[base + k] = z
                if (z > max) {
                  max = z
                  best = k
                }
              }
              let sum = 0
              for (let k = 0; k < C; k++) {
                const e = Math.exp((probabilities[base + k] as number) - max)
                probabilities[base + k] = e
                sum += e
              }
              for (let k = 0; k < C; k++) probabilities[base + k] = (probabilities[base + k] as number) / sum
              labels[r] = best
            }
          },
  }
}
