// The models being served (lib/README.md §10): every model the store lists, loaded at start-up and
// kept current by hot reload.
//
// A pass (start-up or reload) is three steps: read what the store holds (snapshot.ts: the only
// I/O, loading included), decide the next state from the previous one and that snapshot
// (next-state.ts: pure, with the rules a model is READY or UNAVAILABLE by), and publish it here.
// State is immutable and replaced whole: `resolve` only reads `state`, and a pass publishes every
// model with one assignment, so a request sees the old models or the new ones, never a mix, and
// never a half-loaded one. What a failed reload finds broken is left out: the version it replaces
// keeps serving, and the model stays READY.
//
// - A model the store stops listing is still polled and serves what it has for one pass; the next
//   listing without it removes it (next-state.ts), so a listing that misses it once never does.
// - A build neither served nor kept for its etags any more is disposed once the pass that dropped
//   it has published (runtime.ts: `dispose`).
import type { Registry } from 'prom-client'
import { errorFields, type Logger } from '../../telemetry/logger.js'
import { RELOAD_INTERVAL_RANGE } from '../../config/reload-interval.js'
import { cronPlan, cronScheduler, isReloadInterval, type Scheduler } from './reload-schedule.js'
import type { Runtime } from '../runtime.js'
import { kernelRuntime } from '../kernel/runtime.js'
import type { Store } from '../store/store.js'
import { nextState } from './next-state.js'
import { createReadyGauge } from './ready-gauge.js'
import { readSnapshot, type Source } from './snapshot.js'
import { EMPTY, type ModelEntry, type ModelSlot, type RegistryEvent, type RegistryState, type RolloutArm, type ServedModel } from './state.js'

export type { ModelEntry, ModelSlot, ModelState, RolloutArm, ServedModel } from './state.js'
export { buildId } from './state.js'

export type ModelRegistry = Readonly<{
  /** Start-up: loads every model the store lists; resolves once each is READY or UNAVAILABLE (never rejects). */
  load(): Promise<void>
  entries(): readonly ModelEntry[]
  entry(name: string): ModelEntry | undefined
  /** The model to serve for (name, version ?? default), or undefined when unknown or not loaded. */
  resolve(name: string, version?: string): ServedModel | undefined
  /**
   * hot path: the model as the latest publish holds it, or undefined when unknown: its entry, its
   * builds by version, its default and its split (canary, shadow, log share). A request reads it
   * once (lib/serving/serving.ts), so every part of its answer sees one publish.
   */
  published(name: string): ModelSlot | undefined
  /** The model's shadow and its share now, if its manifest declares one. */
  shadowOf(name: string): RolloutArm | undefined
  /** True when at least one model is READY (an empty registry is not ready). */
  isReady(): boolean
  /** One hot-reload pass (also what the cron job runs); never rejects; passes never overlap. */
  reload(): Promise<void>
  /** Starts the cron job when intervalS > 0; stop() ends it (shutdown). */
  start(): void
  stop(): void
}>

export type ModelRegistryOptions = Readonly<{
  store: Store
  logger: Logger
  /** The prom-client registry for svc_model_ready; its default labels add `environment`. */
  metrics: Registry
  /** Seconds between reload passes, 0 for none; at most MAX_RELOAD_INTERVAL_S. */
  reloadIntervalS: number
  /** Runs the reload job; node-cron unless a test brings its own. */
  scheduler?: Scheduler
  /** The runtimes a version may be for, in the order they are tried; the kernel alone unless a test brings others. */
  runtimes?: readonly Runtime[]
  /**
   * Called after each pass publishes, with every build then served (by model, then version), before
   * any request can reach a new one: what keeps series per version (the drift bin counters) makes
   * them here, so they exist from the version's load.
   */
  onPublish?: ((served: readonly ServedModel[]) => void) | undefined
}>

/** Throws unless the options make a registry: a reload interval cron can keep, runtimes that name their files. */
const checkOptions = (reloadIntervalS: number, runtimes: readonly Runtime[]): void => {
  if (reloadIntervalS !== 0 && !isReloadInterval(reloadIntervalS)) {
    throw new RangeError(`reloadIntervalS must be 0 (no reload) or ${RELOAD_INTERVAL_RANGE}, is ${reloadIntervalS}`)
  }
  if (runtimes.length === 0 || runtimes.some((runtime) => runtime.files.length === 0)) {
    throw new RangeError('runtimes must name at least one runtime, each with at least one file')
  }
}

/** Writes a line a pass decided on: each event at its level. */
const log = (logger: Logger, { event, fields }: RegistryEvent): void => {
  switch (event) {
    case 'model_loaded':
      return logger.info('model_loaded', fields)
    case 'model_reloaded':
      return logger.info('model_reloaded', fields)
    case 'model_removed':
      return logger.info('model_removed', fields)
    case 'model_reload_failed':
      return logger.warning('model_reload_failed', fields)
    case 'model_rollout_refused':
      return logger.warning('model_rollout_refused', fields)
    case 'model_unavailable':
      return logger.error('model_unavailable', fields)
    case 'model_store_failed':
      return logger.error('model_store_failed', fields)
  }
}

/** Frees a build nothing serves or keeps any more; runs after the swap, never inside a request. */
const dispose = (logger: Logger, build: ServedModel): void => {
  // One path for a dispose that throws and one that rejects.
  void Promise.resolve()
    .then(() => build.predictor.dispose())
    .catch((error: unknown) => logger.warning('model_dispose_failed', { model: build.name, version: build.version, ...errorFields(error) }))
}

export const createModelRegistry = ({
  store,
  logger,
  metrics,
  reloadIntervalS,
  scheduler = cronScheduler,
  runtimes = [kernelRuntime],
  onPublish,
}: ModelRegistryOptions): ModelRegistry => {
  checkOptions(reloadIntervalS, runtimes)
  const plan = reloadIntervalS === 0 ? undefined : cronPlan(reloadIntervalS)
  const source: Source = { store, runtimes }
  const publishReady = createReadyGauge(metrics)
  let state: RegistryState = EMPTY
  let running: Promise<void> | undefined
  let stopJob: (() => void) | undefined

  const pass = async (): Promise<void> => {
    const snapshot = await readSnapshot(source, state)
    const { state: next, events, retired } = nextState(state, snapshot)
    for (const event of events) log(logger, event)
    // From here on `resolve` sees the new models: one assignment.
    state = next
    // A listing that failed published nothing: everything serves as it was.
    if (!snapshot.ok) return
    // Synchronous with the assignment above: no request runs in between.
    const served = publishReady(next.slots)
    onPublish?.(served)
    for (const build of retired) dispose(logger, build)
  }

  // Every path in `pass` settles into a result; `running` makes concurrent callers share one pass.
  const reload = (): Promise<void> => (running ??= pass().finally(() => (running = undefined)))

  return {
    load: reload,
    reload,
    entries: () => state.entries,
    entry: (name) => state.slots.get(name)?.entry,
    resolve: (name, version) => {
      const slot = state.slots.get(name)
      if (slot === undefined) return undefined
      return version === undefined ? slot.defaultModel : slot.served.get(version)
    },
    published: (name) => state.slots.get(name),
    shadowOf: (name) => state.slots.get(name)?.rollout.shadow,
    isReady: () => state.isReady,
    start: () => {
      if (plan === undefined || stopJob !== undefined) return
      let ticks = 0
      stopJob = scheduler(plan.expression, () => {
        if (++ticks < plan.every) return
        ticks = 0
        void reload()
      })
    },
    stop: () => {
      stopJob?.()
      stopJob = undefined
    },
  }
}
