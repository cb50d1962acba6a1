// Reference distributions: what drift is measured against (runtime.ts: `FeatureReference`). One
// implementation for every producer: training builds the shipped artifacts' references with it
// (test/train/models.ts), and `svc profile` the profiles of models trained elsewhere
// (lib/tools/profile/), so a reference means the same whoever made it. Bins are those `referenceBin`
// (psi.ts) reads back: bin i holds edges[i-1] <= v < edges[i], the outer bins open.
//
// Retraining must reproduce the committed artifacts byte for byte (test/models/artifact.retrain.test.ts),
// so every number here is computed exactly as it was when they were trained: change the method
// only together with the artifacts.
import type { CategoricalReference, NumericalReference } from '../models/runtime.js'
import { f64At, referenceBin } from './psi.js'

/** The first index of ascending `sorted` whose value is at least `value`; `sorted.length` when none is. */
const lowerBound = (sorted: Float64Array, value: number): number => {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (f64At(sorted, middle) < value) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * A numerical reference with at most `bins` equal-frequency bins over finite `values` (at least
 * one). Candidate edge i is the value at sorted position ⌊i·n/bins⌋, so every edge is a data
 * value. A candidate is kept only if the bin it closes holds at least half the target share
 * (n / 2·bins rows); otherwise neighbouring bins merge. That drops the repeated edges ties produce
 * and, for example, the 4-row bin of 3-cylinder cars, on which PSI would hinge on a few rows. The
 * top bin needs no such check: the last candidate sits at position ⌊(bins−1)·n/bins⌋ at most, so
 * at least n/bins rows lie at or above any edge kept. So the edges are strictly increasing, and a
 * constant column has none (one bin). Proportions are the rows' actual shares under
 * `referenceBin`; `min` and `max` the range the values span.
 */
export const numericalReference = (name: string, values: ArrayLike<number>, bins: number): NumericalReference => {
  const sorted = Float64Array.from(values).sort()
  const n = sorted.length
  const minimum = n / (2 * bins)
  const edges: number[] = []
  let start = 0
  for (let i = 1; i < bins; i++) {
    const edge = f64At(sorted, Math.floor((i * n) / bins))
    const below = lowerBound(sorted, edge)
    if (below - start >= minimum) {
      edges.push(edge)
      start = below
    }
  }
  // Counted over `sorted`, the same values: a count does not depend on the order it is made in.
  const counts = new Float64Array(edges.length + 1)
  for (const value of sorted) {
    const bin = referenceBin(edges, value)
    counts[bin] = f64At(counts, bin) + 1
  }
  return { name, type: 'numerical', edges, proportions: Array.from(counts, (c) => c / n), min: f64At(sorted, 0), max: f64At(sorted, n - 1) }
}

/** A categorical reference from the count of each level, in `levels` order; the counts sum to more than 0. */
export const countedReference = (name: string, levels: readonly string[], counts: ArrayLike<number>): CategoricalReference => {
  let total = 0
  for (let i = 0; i < levels.length; i++) total += counts[i] as number
  return { name, type: 'categorical', levels, proportions: levels.map((_, i) => (counts[i] as number) / total) }
}

/** A categorical reference of `values`, each one of `levels` (throws naming the feature otherwise). */
export const categoricalReference = (name: string, values: readonly string[], levels: readonly string[]): CategoricalReference => {
  const index = new Map(levels.map((level, i) => [level, i]))
  const counts = new Float64Array(levels.length)
  for (const value of values) {
    const i = index.get(value)
    if (i === undefined) throw new Error(`${name} has values outside its levels`)
    counts[i] = f64At(counts, i) + 1
  }
  return countedReference(name, levels, counts)
}
