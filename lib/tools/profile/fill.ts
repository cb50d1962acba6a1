// The inputs a payload log left out, and how a tool fills them. The service writes every input of
// a row but those SVC_PAYLOAD_LOG_EXCLUDE names (lib/serving/payload/events.ts), a missing value as
// null: so an input absent from a logged row was excluded, never missing. `svc profile --model` and
// `svc loadgen --rows` read such a log whole: each row's value of an excluded input is drawn from
// the model's reference distribution of that input (seeded, so a run repeats), and both say so.
// `svc profile` keeps the model's reference of that input as it was: drawn values are no evidence.
import { itemAt } from '../../core/items.js'
import type { FeatureReference, Input } from '../../models/runtime.js'

/** A draw of one value of an input. */
export type Draw = () => number | string

/** Seeds the draws: a run of a tool draws the same values each time. */
export const FILL_SEED = 0x6669_6c6c

const uniform = (low: number, high: number, random: () => number): number => low + (high - low) * random()

/** The bin drawn by its proportion. */
const binOf = (proportions: readonly number[], random: () => number): number => {
  let point = random() * proportions.reduce((sum, p) => sum + p, 0)
  let bin = 0
  for (const proportion of proportions) {
    point -= proportion
    if (point < 0) return bin
    bin++
  }
  return proportions.length - 1
}

/**
 * Draws of `input` from `reference`: a level by its proportion; a number uniform within a bin drawn
 * by its proportion, the outer bins bounded by the range the rows spanned (by the nearest edge when
 * the reference predates it), rounded for an integer datatype.
 */
export const referenceDraw = (input: Input, reference: FeatureReference, random: () => number): Draw => {
  if (reference.type === 'categorical') return () => itemAt(reference.levels, binOf(reference.proportions, random))
  const { edges, min, max } = reference
  const first = edges[0] ?? min ?? max ?? 0
  const last = edges[edges.length - 1] ?? first
  const isInteger = input.type === 'numerical' && input.datatype !== undefined && input.datatype !== 'FP64' && input.datatype !== 'FP32'
  return () => {
    const bin = binOf(reference.proportions, random)
    const low = bin === 0 ? (min ?? first) : itemAt(edges, bin - 1)
    const high = bin === edges.length ? (max ?? last) : itemAt(edges, bin)
    const value = uniform(low, high, random)
    return isInteger ? Math.round(value) : value
  }
}

/** What a tool says of the inputs it filled. */
export const filledNote = (names: readonly string[], model: string): string =>
  `${names.join(', ')}: not in the payload log (SVC_PAYLOAD_LOG_EXCLUDE left ${names.length === 1 ? 'it' : 'them'} out); ` +
  `each row's value drawn from model ${model}'s reference distribution`

/** Why an excluded input cannot be filled: the model has no reference of it. */
export const unfillableNote = (name: string, model: string): string =>
  `${name} is not in the payload log's rows (SVC_PAYLOAD_LOG_EXCLUDE left it out) and model ${model} has no reference to draw it from: ` +
  'replay rows that have it, or serve the model with a profile.json'
