// Type-only stand-in for the payload log's writer (queue and sinks), until the writer lands.
export type PayloadWriter = Readonly<{
  /** hot path: after the reply; queues `build` (run in the drain turn) or drops it. Never throws. */
  enqueue(build: () => string): void
  /** Shutdown: writes what is queued within budgetMs; what is left is counted dropped. */
  stop(budgetMs: number): Promise<void>
}>
