// Work over many items, a few at a time. Reading a store of 500 models all at once held every
// model's files, parse and promises in memory together: they outlived the young generation's
// collections, were copied into the old one and stayed there as garbage, and the young
// generation grew to its largest size: RSS that stayed after the load.

/** `work` over `items`, at most `limit` at once; the results in the items' order. Rejects as Promise.all does. */
export const mapLimited = async <T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> => {
  const results = new Array<R>(items.length)
  // One iterator shared by the workers: each takes the next item when it is free.
  const entries = items.entries()
  const worker = async (): Promise<void> => {
    for (const [i, item] of entries) results[i] = await work(item)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
