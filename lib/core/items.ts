// Reading an array at an index the caller keeps in range. noUncheckedIndexedAccess types every
// element read `| undefined`, which a loop bound or a checked length rules out but the compiler
// cannot see: the one assertion for it is here, not at each read. A leaf: imports nothing.

/** The element at `i`, which the caller keeps within `items`' length. */
export const itemAt = <T>(items: readonly T[], i: number): T => items[i] as T

/** Removes and returns the first element of `items`, which the caller knows is not empty. */
export const takeFirst = <T>(items: T[]): T => {
  const first = itemAt(items, 0)
  items.shift()
  return first
}
