// Inputs drawn like the data a model was built from, optionally moved, for watching drift happen.
//
// What GET /api/v1/models/{name} describes of each input is enough: a numerical input's reference
// bins (quantile edges and shares) and its training standard deviation, a categorical input's
// levels and shares. A numerical value picks a bin by its share and lies uniformly inside it; the
// open outer bins reach one standard deviation past the outer edge (a feature with a single bin
// spans mean ± √3·sd, which has that standard deviation). Drawn so, unshifted traffic fills the
// reference bins in the reference's proportions and its PSI stays near zero. A shift of k moves
// the chosen numerical features by k standard deviations; a categorical feature cannot be
// shifted.

/** An input as the model detail shows it (only what sampling reads). */
export type DescribedInput =
  | Readonly<{
      name: string
      type: 'numerical'
      reference: Readonly<{ edges: readonly number[]; proportions: readonly number[] }>
      standardisation: Readonly<{ mean: number; scale: number }>
    }>
  | Readonly<{ name: string; type: 'categorical'; reference: Readonly<{ levels: readonly string[]; proportions: readonly number[] }> }>

export type SamplerOptions = Readonly<{
  inputs: readonly DescribedInput[]
  /** Standard deviations to move the `shifted` features by. */
  shift: number
  /** Numerical inputs the shift applies to. */
  shifted: ReadonlySet<string>
  random: () => number
}>

export type Row = Record<string, number | string>

/** The index whose cumulative share first exceeds `u`; the last index when rounding leaves a gap. */
const pick = (proportions: readonly number[], u: number): number => {
  let sum = 0
  for (let i = 0; i < proportions.length; i++) {
    sum += proportions[i] as number
    if (u < sum) return i
  }
  return proportions.length - 1
}

type Draw = (random: () => number) => number | string

const numerical = (input: DescribedInput & { type: 'numerical' }, offset: number): Draw => {
  const { edges, proportions } = input.reference
  const { mean, scale } = input.standardisation
  if (edges.length === 0) {
    const half = Math.sqrt(3) * scale
    return (random) => mean - half + 2 * half * random() + offset
  }
  // Bin i spans [lows[i], lows[i] + widths[i]).
  const lows = [(edges[0] as number) - scale, ...edges]
  const widths = lows.map((low, i) => (i < edges.length ? (edges[i] as number) - low : scale))
  return (random) => {
    const bin = pick(proportions, random())
    return (lows[bin] as number) + (widths[bin] as number) * random() + offset
  }
}

export const createSampler = ({ inputs, shift, shifted, random }: SamplerOptions): (() => Row) => {
  for (const name of shifted) {
    const input = inputs.find((candidate) => candidate.name === name)
    if (input === undefined) throw new RangeError(`the model has no input ${name}; its inputs are ${inputs.map((i) => i.name).join(', ')}`)
    if (input.type !== 'numerical') throw new RangeError(`${name} is categorical; only numerical inputs can be shifted`)
  }
  const draws = inputs.map((input): readonly [string, Draw] => {
    if (input.type === 'categorical') {
      const { levels, proportions } = input.reference
      return [input.name, (r) => levels[pick(proportions, r())] as string]
    }
    return [input.name, numerical(input, shifted.has(input.name) ? shift * input.standardisation.scale : 0)]
  })
  return () => {
    const row: Row = {}
    for (const [name, draw] of draws) row[name] = draw(random)
    return row
  }
}
