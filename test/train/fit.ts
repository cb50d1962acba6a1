// The numerical pieces of training. Everything is deterministic: one seeded PRNG for the split,
// fixed iteration counts, and every sum taken in row order, so a retrain reproduces the committed
// artifacts bit for bit.
import { mulberry32, shuffle } from '../../lib/tools/loadgen/random.js'

// References are built by lib/drift/reference.ts, shared with `svc profile`; re-exported here for
// the tests that build one the way training does (test/drift/psi.test.ts).
export { numericalReference } from '../../lib/drift/reference.js'

export type Split = Readonly<{ train: readonly number[]; test: readonly number[] }>

/**
 * Row indices into a training and a held-out set, `testFraction` of each group held out. `groups`
 * gives each row's group (its class, for a stratified split; all zero otherwise). Both sets come
 * back in ascending row order, so later sums do not depend on the shuffle.
 */
export const split = (groups: readonly number[], testFraction: number, seed: number): Split => {
  const random = mulberry32(seed)
  const train: number[] = []
  const test: number[] = []
  const groupCount = Math.max(...groups) + 1
  for (let g = 0; g < groupCount; g++) {
    const members = shuffle(
      groups.flatMap((group, i) => (group === g ? [i] : [])),
      random,
    )
    const held = Math.round(members.length * testFraction)
    test.push(...members.slice(0, held))
    train.push(...members.slice(held))
  }
  return { train: train.sort((a, b) => a - b), test: test.sort((a, b) => a - b) }
}

/** Mean and population standard deviation of each column over `rows`. */
export const standardisation = (x: readonly (readonly number[])[], rows: readonly number[], columns: number) => {
  const mean: number[] = []
  const scale: number[] = []
  for (let j = 0; j < columns; j++) {
    let sum = 0
    for (const i of rows) sum += (x[i] as readonly number[])[j] as number
    const m = sum / rows.length
    let squares = 0
    for (const i of rows) squares += (((x[i] as readonly number[])[j] as number) - m) ** 2
    const s = Math.sqrt(squares / rows.length)
    if (!(s > 0)) throw new Error(`column ${j} is constant in the training rows`)
    mean.push(m)
    scale.push(s)
  }
  return { mean, scale }
}

export type SoftmaxOptions = Readonly<{ iterations: number; learningRate: number; l2: number }>

/**
 * Multinomial logistic regression by full-batch gradient descent on the mean cross-entropy plus
 * (l2 / 2)·‖W‖² (intercepts unpenalised), from zero weights. `x` rows are already encoded.
 */
export const fitSoftmax = (x: readonly (readonly number[])[], y: readonly number[], classes: number, options: SoftmaxOptions) => {
  const n = x.length
  const D = (x[0] as readonly number[]).length
  const weights = Array.from({ length: classes }, () => new Array<number>(D).fill(0))
  const intercepts = new Array<number>(classes).fill(0)
  const p = new Array<number>(classes).fill(0)
  for (let iteration = 0; iteration < options.iterations; iteration++) {
    const gradW = Array.from({ length: classes }, () => new Array<number>(D).fill(0))
    const gradB = new Array<number>(classes).fill(0)
    for (let i = 0; i < n; i++) {
      const row = x[i] as readonly number[]
      let max = -Infinity
      for (let k = 0; k < classes; k++) {
        let z = intercepts[k] as number
        for (let d = 0; d < D; d++) z += (weights[k] as number[])[d]! * (row[d] as number)
        p[k] = z
        max = Math.max(max, z)
      }
      let sum = 0
      for (let k = 0; k < classes; k++) {
        p[k] = Math.exp((p[k] as number) - max)
        sum += p[k] as number
      }
      for (let k = 0; k < classes; k++) {
        const g = (p[k] as number) / sum - (y[i] === k ? 1 : 0)
        gradB[k] = (gradB[k] as number) + g
        for (let d = 0; d < D; d++) (gradW[k] as number[])[d] = (gradW[k] as number[])[d]! + g * (row[d] as number)
      }
    }
    for (let k = 0; k < classes; k++) {
      const w = weights[k] as number[]
      for (let d = 0; d < D; d++) w[d] = w[d]! - options.learningRate * ((gradW[k] as number[])[d]! / n + options.l2 * w[d]!)
      intercepts[k] = (intercepts[k] as number) - (options.learningRate * (gradB[k] as number)) / n
    }
  }
  return { weights, intercepts }
}

/**
 * Least squares with a small ridge, λ·‖w‖² (intercept unpenalised), solved exactly from the normal
 * equations by Cholesky. The ridge also settles the one-hot columns, which sum to the intercept's.
 */
export const fitLinear = (x: readonly (readonly number[])[], y: readonly number[], ridge: number) => {
  const n = x.length
  const P = (x[0] as readonly number[]).length + 1
  const a = (i: number, c: number): number => (c === 0 ? 1 : ((x[i] as readonly number[])[c - 1] as number))
  const M = Array.from({ length: P }, () => new Array<number>(P).fill(0))
  const v = new Array<number>(P).fill(0)
  for (let i = 0; i < n; i++) {
    for (let r = 0; r < P; r++) {
      v[r] = v[r]! + a(i, r) * (y[i] as number)
      for (let c = 0; c < P; c++) (M[r] as number[])[c] = (M[r] as number[])[c]! + a(i, r) * a(i, c)
    }
  }
  for (let r = 1; r < P; r++) (M[r] as number[])[r] = (M[r] as number[])[r]! + ridge
  // M = L·Lᵀ, then L·u = v and Lᵀ·θ = u.
  const L = Array.from({ length: P }, () => new Array<number>(P).fill(0))
  for (let r = 0; r < P; r++) {
    for (let c = 0; c <= r; c++) {
      let s = (M[r] as number[])[c]!
      for (let k = 0; k < c; k++) s -= (L[r] as number[])[k]! * (L[c] as number[])[k]!
      ;(L[r] as number[])[c] = r === c ? Math.sqrt(s) : s / (L[c] as number[])[c]!
    }
  }
  const u = new Array<number>(P).fill(0)
  for (let r = 0; r < P; r++) {
    let s = v[r]!
    for (let k = 0; k < r; k++) s -= (L[r] as number[])[k]! * u[k]!
    u[r] = s / (L[r] as number[])[r]!
  }
  const theta = new Array<number>(P).fill(0)
  for (let r = P - 1; r >= 0; r--) {
    let s = u[r]!
    for (let k = r + 1; k < P; k++) s -= (L[k] as number[])[r]! * theta[k]!
    theta[r] = s / (L[r] as number[])[r]!
  }
  return { weights: [theta.slice(1)], intercepts: [theta[0] as number] }
}
