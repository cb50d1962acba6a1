// "Did you mean": the name nearest a word that matches none, by optimal string alignment distance,
// which is Levenshtein's (insert, delete or replace a character) plus swapping two neighbours, the
// commonest slip at a keyboard (`laodgen` is one edit from `loadgen`, not two).

// `row[j]` for a column the loops keep in range, which noUncheckedIndexedAccess cannot see: this
// module's only assertion.
const at = (row: readonly number[], j: number): number => row[j] as number

/** The fewest insertions, deletions, substitutions and swaps of neighbours that turn `a` into `b`, no substring edited twice. */
export const editDistance = (a: string, b: string): number => {
  // Rows i − 2, i − 1 and i of the table of distances between a's first i characters and b's first j.
  let beforePrevious: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      let distance = Math.min(at(previous, j) + 1, at(current, j - 1) + 1, at(previous, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1))
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, at(beforePrevious, j - 2) + 1)
      current.push(distance)
    }
    beforePrevious = previous
    previous = current
  }
  return at(previous, b.length)
}

/**
 * The name nearest `word` when it is near enough to be a slip, within a third of the name's length
 * (one edit for `help`, two for `profile`); the first of equally near names; undefined for none.
 */
export const nearest = (word: string, names: readonly string[]): string | undefined => {
  let found: string | undefined
  let least = Number.POSITIVE_INFINITY
  for (const name of names) {
    const distance = editDistance(word, name)
    if (distance < least && distance <= Math.max(1, Math.floor(name.length / 3))) {
      found = name
      least = distance
    }
  }
  return found
}
