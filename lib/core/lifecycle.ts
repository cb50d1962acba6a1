// Where the process is in its life (lib/README.md §8): starting → ready (the listener is bound) →
// draining (a signal arrived; /ready answers 503) → stopped. The server moves it; the probes answer
// from it (lib/endpoints/health.ts). How the process ends on a signal is lib/process/shutdown.ts.
import { performance } from 'node:perf_hooks'

export type ServerState = 'starting' | 'ready' | 'draining' | 'stopped'

/** Shared by the listeners and the probes; `startedAt` is `performance.now()` at creation. */
export type Lifecycle = { state: ServerState; readonly startedAt: number }

export const createLifecycle = (now: number = performance.now()): Lifecycle => ({ state: 'starting', startedAt: now })
