// The training range a numerical reference may carry (runtime.ts `NumericalReference`): one check
// for both ways a reference gets in, an artifact (artifact.ts) and a profile (lib/profile/).

/** Why `min` and `max` cannot be the range of rows binned at `edges`, or undefined when they can. */
export const rangeProblem = (min: number, max: number, edges: readonly unknown[]): string | undefined => {
  if (min > max) return `min (${min}) must not exceed max (${max})`
  // Every edge is a value of the rows (lib/drift/reference.ts), so the range holds them all.
  const first = edges[0] as number | undefined
  const last = edges[edges.length - 1] as number | undefined
  if (first !== undefined && first < min) return `min (${min}) must not exceed the first edge (${first})`
  if (last !== undefined && last > max) return `max (${max}) must not be below the last edge (${last})`
  return undefined
}
