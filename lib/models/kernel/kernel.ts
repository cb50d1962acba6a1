// svc's own inference kernel: `compile` turns a checked artifact into typed arrays once, at load;
// `predict` then runs a batch with no allocation per row or per call (one scratch row, made at
// compile, is reused: `predict` is synchronous, so two calls never interleave). kernel/runtime.ts
// serves it behind the runtime seam (runtime.ts).
//
// Features arrive row-major, N rows × F inputs in the artifact's input order, raw (not
// standardised); a categorical input is given as the index of its level, as features.ts encodes.
//
// hot path: change with care. A prediction is never NaN or infinite: inputs are checked as they are
// read, standardised values saturate at ±STANDARDISED_LIMIT, and softmax subtracts the row's
// largest logit.
import type { UnsignedArtifact } from '../artifact.js'
import { InputError, inputProblem } from '../inference/input-error.js'
import type { Input } from '../runtime.js'

// `a[i]` for an index the loop keeps in range, which noUncheckedIndexedAccess cannot see: this
// module's only numeric assertions, one per array type so that each stays monomorphic when inlined.
const f64At = (a: Float64Array, i: number): number => a[i] as number
const i32At = (a: Int32Array, i: number): number => a[i] as number

/**
 * Standardised inputs are clamped to this many standard deviations. With parameters bounded by
 * MAX_PARAMETER (1e100) every product is at most 1e200 and a sum of D of them stays finite for any
 * D below 1e108, so no logit or value can overflow into Infinity or Infinity - Infinity = NaN.
 * No real input is this far out; the clamp only changes the answer for absurd ones (1e300).
 */
export const STANDARDISED_LIMIT = 1e100

export type Classifier = Readonly<{
  task: 'classification'
  classes: readonly string[]
  /**
   * Writes `n` rows of class probabilities (row-major, one per class, summing to 1) to
   * `probabilities` and each row's most probable class index (the first on a tie) to `labels`.
   */
  predict(features: Float64Array, n: number, probabilities: Float64Array, labels: Uint32Array): void
}>

export type Regressor = Readonly<{
  task: 'regression'
  /** Writes `n` predicted values to `values`. */
  predict(features: Float64Array, n: number, values: Float64Array): void
}>

export type CompiledModel = Classifier | Regressor

const checkSize = (what: string, array: ArrayLike<number>, needed: number): void => {
  if (array.length < needed) throw new RangeError(`${what} holds ${array.length} values, ${needed} needed`)
}

const checkCount = (n: number): void => {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`the row count must be a non-negative integer, is ${n}`)
}

/** Per input: its first encoded column, its level count (0 for numerical), its mean and scale; and D, the encoded width. */
type Encoding = Readonly<{ column: Int32Array; levelCount: Int32Array; mean: Float64Array; scale: Float64Array; D: number }>

const encodingOf = (artifact: UnsignedArtifact): Encoding => {
  const { inputs } = artifact
  const F = inputs.length
  const column = new Int32Array(F)
  const levelCount = new Int32Array(F)
  const mean = new Float64Array(F)
  const scale = new Float64Array(F)
  const means = Float64Array.from(artifact.preprocessing.standardisation.mean)
  const scales = Float64Array.from(artifact.preprocessing.standardisation.scale)
  let D = 0
  let numerical = 0
  inputs.forEach((input, j) => {
    column[j] = D
    if (input.type === 'numerical') {
      mean[j] = f64At(means, numerical)
      scale[j] = f64At(scales, numerical)
      numerical++
      D += 1
    } else {
      levelCount[j] = input.levels.length
      D += input.levels.length
    }
  })
  return { column, levelCount, mean, scale, D }
}

/** Row r → `scratch`. */
type Load = (features: Float64Array, r: number) => void
/** Class k (or the one value) → its linear score over `scratch`. */
type Logit = (k: number) => number

/** What reads row r into `scratch`: standardised numerical columns, one-hot categorical ones. */
const rowLoader = (inputs: readonly Input[], { column, levelCount, mean, scale }: Encoding, scratch: Float64Array): Load => {
  const F = inputs.length
  return (features, r) => {
    const base = r * F
    for (let j = 0; j < F; j++) {
      const x = f64At(features, base + j)
      const levels = i32At(levelCount, j)
      const at = i32At(column, j)
      if (levels === 0) {
        if (!Number.isFinite(x)) throw new InputError([inputProblem(r, (inputs[j] as Input).name, 'NON_FINITE_VALUE', 'must be a finite number')])
        let s = (x - f64At(mean, j)) / f64At(scale, j)
        if (s > STANDARDISED_LIMIT) s = STANDARDISED_LIMIT
        else if (s < -STANDARDISED_LIMIT) s = -STANDARDISED_LIMIT
        scratch[at] = s
      } else {
        if (!(x >= 0 && x < levels && Math.floor(x) === x))
          throw new InputError([inputProblem(r, (inputs[j] as Input).name, 'UNKNOWN_LEVEL', `must be a level index from 0 to ${levels - 1}`)])
        scratch.fill(0, at, at + levels)
        scratch[at + x] = 1
      }
    }
  }
}

/** The intercept of class k plus its weights times the encoded row in `scratch`. */
const linearScore = (artifact: UnsignedArtifact, D: number, scratch: Float64Array): Logit => {
  const weights = Float64Array.from(artifact.parameters.weights.flat())
  const intercepts = Float64Array.from(artifact.parameters.intercepts)
  return (k) => {
    let z = f64At(intercepts, k)
    const row = k * D
    for (let d = 0; d < D; d++) z += f64At(weights, row + d) * f64At(scratch, d)
    return z
  }
}

const regressor = (F: number, load: Load, logit: Logit): Regressor => ({
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
})

/** Two classes, one logit: the log-odds of the second. */
const binaryPredict =
  (F: number, load: Load, logit: Logit): Classifier['predict'] =>
  (features, n, probabilities, labels) => {
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

/** C classes, a logit each: softmax after subtracting the row's largest. */
const softmaxPredict =
  (F: number, C: number, load: Load, logit: Logit): Classifier['predict'] =>
  (features, n, probabilities, labels) => {
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
        const e = Math.exp(f64At(probabilities, base + k) - max)
        probabilities[base + k] = e
        sum += e
      }
      for (let k = 0; k < C; k++) probabilities[base + k] = f64At(probabilities, base + k) / sum
      labels[r] = best
    }
  }

/** Typed arrays for one artifact, once, at load. Trusts it: give it what `parseArtifact` returned. */
export const compile = (artifact: UnsignedArtifact): CompiledModel => {
  const F = artifact.inputs.length
  const encoding = encodingOf(artifact)
  const scratch = new Float64Array(encoding.D)
  const load = rowLoader(artifact.inputs, encoding, scratch)
  const logit = linearScore(artifact, encoding.D, scratch)
  if (artifact.type === 'linear_regression') return regressor(F, load, logit)
  const K = artifact.parameters.intercepts.length
  const C = artifact.classes.length
  return { task: 'classification', classes: artifact.classes, predict: K === 1 ? binaryPredict(F, load, logit) : softmaxPredict(F, C, load, logit) }
}
