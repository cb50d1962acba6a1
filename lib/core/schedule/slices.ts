// Long work in slices of the event loop: work that grows with the number of models (a /metrics
// render, a drift check) looks at the clock between pieces and, once a slice has run SLICE_MS,
// lets the loop serve what waits before going on. A request waiting on the instance then waits a
// slice at most, not the whole job.

/** The longest a slice of such work runs before it yields. */
export const SLICE_MS = 1

/** A turn of the loop (timers, I/O, then this), then the next slice's start, for `sliceElapsed`. */
export const nextSlice = (): Promise<number> => new Promise((resolve) => setImmediate(() => resolve(performance.now())))

/** True when the slice that began at `start` (a performance.now() reading) has run its length. */
export const sliceElapsed = (start: number): boolean => performance.now() - start > SLICE_MS
