// Where the process is in its life (lib/README.md §8): starting → ready (the listener is bound) →
// draining (a signal arrived; /ready answers 503) → stopped. The server moves it; the probes answer
// from it (lib/endpoints/health.ts). How the process ends on a signal is lib/process/shutdown.ts.
import { performance } from 'node:perf_hooks'

export type ServerState = 'starting' | 'ready' | 'draining' | 'stopped'

/** Shared by the listeners, the probes and the streams; `startedAt` is `performance.now()` at creation. */
export type Lifecycle = {
  state: ServerState
  readonly startedAt: number
  /**
   * Aborts when the shutdown delay is over and the listeners close: the balancer routes elsewhere
   * by then, so a stream still open ends at once, telling its client to reconnect, instead of
   * holding the drain to its timeout.
   */
  readonly closing: AbortSignal
  /** Aborts `closing` (the drain calls it; the second listener's call changes nothing). */
  close(): void
}

export const createLifecycle = (now: number = performance.now()): Lifecycle => {
  const closing = new AbortController()
  return { state: 'starting', startedAt: now, closing: closing.signal, close: () => closing.abort() }
}
