// Population Stability Index of one feature: how far the live window's distribution has moved from
// the reference the artifact carries (the rows the model was built from).
//
// Bins. A numerical feature uses the reference's own quantile edges, the outer bins open, so a live
// value below the lowest or above the highest reference value is counted in an outer bin, never
// dropped. A categorical feature has one bin per reference level plus one for levels the
// reference never saw (reference share 0). A missing value (NaN) is counted apart and binned
// nowhere: it says nothing about where the distribution sits.
//
// Score. With c and r the live and reference shares of a bin, each floored at PROPORTION_FLOOR so
// an empty bin on either side stays finite:  PSI = Σ (c − r) · ln(c / r).  Every term is ≥ 0.
//
// Why the thresholds hold on small samples. With both samples from one distribution, n reference
// and m live rows and B bins, PSI ≈ (1/n + 1/m) · χ²(B − 1) (PSI is the symmetrised Kullback–Leibler
// divergence; its second-order term is the two-sample chi-square statistic). The chance that a
// feature crosses 0.1 by sampling alone is P(χ²(B − 1) > 0.1 / (1/n + 1/m)). The iris reference
// has n = 150 and B = 3: at m = 500 (SVC_DRIFT_MIN_SAMPLES) the bound is 11.5 and
// P(χ²(2) > 11.5) = e^−5.77 = 0.3 % per feature, 1.2 % for its four features together; at m = 150
// it would be 2.4 %, and four bins would already give 5.8 % there.
import type { FeatureReference, Input } from '../models/runtime.js'

/** The smallest share a bin counts with, on both sides. */
export const PROPORTION_FLOOR = 1e-4

export const SEVERITIES = ['none', 'moderate', 'severe'] as const
export type Severity = (typeof SEVERITIES)[number]

export type Thresholds = Readonly<{
  /** PSI at or above which drift is moderate. */
  moderate: number
  /** PSI at or above which drift is severe; above `moderate`. */
  severe: number
  /** A rise since the previous check at least this large, at or above `moderate`, is a spike. */
  spike: number
}>

/**
 * `a[i]` for an index the loop keeps in range, which noUncheckedIndexedAccess cannot see: drift's
 * numeric reads of its Float64Arrays go through this one assertion (small enough to be inlined).
 */
export const f64At = (a: Float64Array, i: number): number => a[i] as number

/**
 * The bin of `value` against a numerical reference's `edges`: the number of edges <= value, so 0
 * below the first edge and `edges.length` at or above the last. Binary search; `value` is finite.
 * References are built with it (lib/drift/reference.ts: training and `svc profile`), so both sides bin alike.
 */
export const referenceBin = (edges: ArrayLike<number>, value: number): number => {
  let low = 0
  let high = edges.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((edges[middle] as number) <= value) low = middle + 1
    else high = middle
  }
  return low
}

/** How one feature's live values are binned, and the reference shares of those bins, floored. */
export type FeatureBins = Readonly<{
  name: string
  type: 'numerical' | 'categorical'
  /** Numerical: the reference's edges; categorical: empty. */
  edges: Float64Array
  /** Categorical: the level count (the unseen-level bin is the last); numerical: 0. */
  levels: number
  /** Floored reference share per bin. */
  reference: Float64Array
  /** ln of each floored reference share, computed once. */
  logReference: Float64Array
}>

/** A feature's score over a window, and what it was computed from. */
export type FeatureScore = Readonly<{ psi: number; samples: number; missing: number }>

const floored = (share: number): number => Math.max(share, PROPORTION_FLOOR)

const featureBins = (input: Input, reference: FeatureReference): FeatureBins => {
  const shares = reference.type === 'numerical' ? reference.proportions : [...reference.proportions, 0]
  const referenceShares = Float64Array.from(shares, floored)
  return Object.freeze({
    name: input.name,
    type: input.type,
    edges: Float64Array.from(reference.type === 'numerical' ? reference.edges : []),
    levels: input.type === 'categorical' ? input.levels.length : 0,
    reference: referenceShares,
    logReference: referenceShares.map(Math.log),
  })
}

/**
 * The bins of every input, in input order. Trusts what the runtime's `read` checked: one reference
 * entry per input, categorical reference levels equal to the input's.
 */
export const compileBins = (inputs: readonly Input[], features: readonly FeatureReference[]): readonly FeatureBins[] =>
  Object.freeze(inputs.map((input, j) => featureBins(input, features[j] as FeatureReference)))

/** The bin of a non-missing value: a level index outside the reference's levels is the unseen bin. */
export const binOf = (bins: FeatureBins, value: number): number => {
  if (bins.type === 'numerical') return referenceBin(bins.edges, value)
  return value >= 0 && value < bins.levels && Math.floor(value) === value ? value : bins.levels
}

/** PSI of live bin `counts` (over `samples` values) against the floored reference; samples > 0. */
export const psi = (bins: FeatureBins, counts: ArrayLike<number>, samples: number): number => {
  let sum = 0
  for (let b = 0; b < bins.reference.length; b++) {
    const share = floored((counts[b] as number) / samples)
    sum += (share - f64At(bins.reference, b)) * (Math.log(share) - f64At(bins.logReference, b))
  }
  return sum
}

/**
 * Scores column `column` of a row-major table (`width` values a row, its first `rows` rows) with
 * `counts` as scratch (at least as long as the feature's bin count). `psi` is NaN when every value
 * is missing.
 */
export const scoreColumn = (bins: FeatureBins, values: Float64Array, width: number, rows: number, column: number, counts: Float64Array): FeatureScore => {
  counts.fill(0, 0, bins.reference.length)
  let missing = 0
  for (let r = 0; r < rows; r++) {
    const value = f64At(values, r * width + column)
    if (Number.isNaN(value)) missing++
    else {
      const bin = binOf(bins, value)
      counts[bin] = f64At(counts, bin) + 1
    }
  }
  const samples = rows - missing
  return { psi: samples === 0 ? Number.NaN : psi(bins, counts, samples), samples, missing }
}

export const severityOf = (score: number, thresholds: Thresholds): Severity =>
  score >= thresholds.severe ? 'severe' : score >= thresholds.moderate ? 'moderate' : 'none'

/** A spike: the score rose by at least `spike` since `previous` and reached `moderate`. */
export const isSpike = (score: number, previous: number | undefined, thresholds: Thresholds): boolean =>
  previous !== undefined && score - previous >= thresholds.spike && score >= thresholds.moderate
