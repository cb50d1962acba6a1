// The models being served (lib/README.md §10): every model the store lists, loaded at start-up and
// kept current by hot reload.
//
// State is immutable and replaced whole. A pass (start-up or reload) builds each model's new state
// from versions fully read, checked and loaded by their runtime, then publishes every model with one
// assignment of `state`; `resolve` only reads `state`, so a request sees the old models or the new
// ones, never a mix, and never a half-loaded one. What a failed reload finds broken is left out: the
// version it replaces keeps serving, and the model stays READY.
//
// Rules, the same at start-up and on reload:
// - A model is READY when its default version loads, UNAVAILABLE (with a reason) when it does not
//   and it was not READY before. Another version that fails is left out and logged.
// - A version's runtime (runtime.ts) is the first of `runtimes` whose first file the version holds
//   (`<model>/<version>/model.json` for the kernel, `model.onnx` for ONNX); the registry reads the
//   files that runtime names, and its optional ones when the store holds them. Its description's
//   `name` and `version` must be those of its path.
// - Each file is `stat`ed first and a version read only when one of its etags changed (or an
//   optional file came or went) since the last pass; unchanged files keep their outcome (the served version, or why it was refused).
//   Store failures are never kept, so a timeout is retried on the next pass. A version read again
//   with the sha256 already served keeps that build: nothing is loaded, swapped or logged.
// - A model the store stops listing is still polled and keeps serving what it has: a listing that
//   misses a model for a moment (a manifest being replaced) must not take it out of service.
//   Removing a model takes a restart.
// - A build neither served nor kept for its etags any more is disposed once the pass that dropped
//   it has published (runtime.ts: `dispose`).
// - A failure is logged when it is new, not on every pass it persists.
import { Gauge, type Registry } from 'prom-client'
import { errorFields, type Logger } from '../../telemetry/logger.js'
import { parseManifest, type Manifest } from '../store/manifest.js'
import { cronPlan, cronScheduler, isReloadInterval, MAX_RELOAD_INTERVAL_S, type Scheduler } from './reload-schedule.js'
import type { ModelVersion, Predictor, Runtime } from '../runtime.js'
import { kernelRuntime } from '../kernel/runtime.js'
import type { Store, StoreStat } from '../store/store.js'
import type { StoreError, StoreErrorCode } from '../store/error.js'

export type ModelState = 'READY' | 'UNAVAILABLE'

/** One build of one version, as served: what it is and what predicts with it. */
export type ServedModel = Readonly<{ name: string; version: string; model: ModelVersion; predictor: Predictor }>

export type ModelEntry = Readonly<{
  name: string
  state: ModelState
  /** Why it is UNAVAILABLE (safe to show a client); undefined when READY. */
  reason: string | undefined
  defaultVersion: string | undefined
  /** Versions loaded and servable, sorted; the default among them when READY. */
  versions: readonly string[]
  /**
   * The runtime of the default version (`Runtime.platform`); for an UNAVAILABLE model, the one it
   * was to be loaded with, or the first runtime when not even its manifest could be read.
   */
  platform: string
}>

export type ModelRegistry = Readonly<{
  /** Start-up: loads every model the store lists; resolves once each is READY or UNAVAILABLE (never rejects). */
  load(): Promise<void>
  entries(): readonly ModelEntry[]
  entry(name: string): ModelEntry | undefined
  /** The model to serve for (name, version ?? default), or undefined when unknown or not loaded. */
  resolve(name: string, version?: string): ServedModel | undefined
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

/** What loading one file or version gave: its value, or why it failed (safe to show) and, from a store, the detail to log. */
type LoadOutcome<T> = Readonly<{ isOk: true; value: T }> | Readonly<{ isOk: false; reason: string; detail: string | undefined }>
type Failure = LoadOutcome<never> & { isOk: false }
/** An outcome and the etag (for a version, its files' etags) it was for. */
type Seen<T> = Readonly<{ etag: string; outcome: LoadOutcome<T> }>
/** A version's outcome and the runtime it was for. */
type VersionOutcome = Readonly<{ runtime: Runtime; outcome: LoadOutcome<ServedModel> }>

/** One model as published. */
type ModelSlot = Readonly<{
  entry: ModelEntry
  /** What `resolve` serves: the loaded versions, empty when UNAVAILABLE. */
  served: ReadonlyMap<string, ServedModel>
  defaultModel: ServedModel | undefined
  /** The failures of the latest pass by version ('' for the model as a whole), to log only new ones. */
  failures: ReadonlyMap<string, string>
}>

type State = Readonly<{ slots: ReadonlyMap<string, ModelSlot>; entries: readonly ModelEntry[]; isReady: boolean }>

/** How the first characters of a version's sha256 appear in logs; enough to tell builds apart. */
const SHA256_PREFIX_LENGTH = 12

/** Store failures in words a client may see: the store's message names hosts and directories. */
const STORE_REASONS: Readonly<Record<StoreErrorCode, string>> = {
  NOT_FOUND: 'not found in the model store',
  UNREADABLE: 'cannot be read from the model store',
  INVALID_PATH: 'is not a valid model store path',
  UPSTREAM_ERROR: 'the model store failed',
  TOO_LARGE: 'is larger than the model store allows',
  INVALID_INDEX: 'the model store index is invalid',
}

const storeFailure = (path: string, error: unknown): Failure => {
  const { code, message } = error as StoreError // a Store rejects with StoreError only
  return { isOk: false, reason: `${path}: ${STORE_REASONS[code]}`, detail: message }
}

/** A version's description or load refused: the error names the member, the reason the file. */
const refused = (path: string, error: unknown): Failure => ({ isOk: false, reason: `${path}: ${(error as Error).message}`, detail: undefined })

const manifestPath = (model: string): string => `${model}/manifest.json`

/** Throws unless a description is of the model and version its path names. */
const checkPlace = (model: ModelVersion, name: string, version: string): void => {
  if (model.name !== name || model.version !== version) {
    throw new Error(
      `is model ${JSON.stringify(model.name)} version ${JSON.stringify(model.version)}, stored as model ${JSON.stringify(name)} version ${JSON.stringify(version)}`,
    )
  }
}

/** What serves a version: the description just read, and its runtime's predictor for it. */
const serve = async (runtime: Runtime, model: ModelVersion, payload: unknown): Promise<ServedModel> =>
  Object.freeze({ name: model.name, version: model.version, model, predictor: await runtime.load(model, payload) })

const EMPTY: State = Object.freeze({ slots: new Map(), entries: Object.freeze([]), isReady: false })

export const createModelRegistry = ({
  store,
  logger,
  metrics,
  reloadIntervalS,
  scheduler = cronScheduler,
  runtimes = [kernelRuntime],
  onPublish,
}: ModelRegistryOptions): ModelRegistry => {
  if (reloadIntervalS !== 0 && !isReloadInterval(reloadIntervalS)) {
    throw new RangeError(`reloadIntervalS must be 0 (no reload) or a whole number of seconds from 1 to ${MAX_RELOAD_INTERVAL_S}, is ${reloadIntervalS}`)
  }
  if (runtimes.length === 0 || runtimes.some((runtime) => runtime.files.length === 0)) {
    throw new RangeError('runtimes must name at least one runtime, each with at least one file')
  }
  const firstRuntime = runtimes[0] as Runtime
  const plan = reloadIntervalS === 0 ? undefined : cronPlan(reloadIntervalS)
  const ready = new Gauge({
    name: 'svc_model_ready',
    help: 'Model versions loaded: 1 for the version served by default, 0 for the others.',
    labelNames: ['model', 'version'],
    registers: [metrics],
  })

  let state = EMPTY
  // Build-side memory, never read by `resolve`: the last outcome per manifest and per version (by
  // the path of its runtime's first file), and the last listing failure.
  let manifests: ReadonlyMap<string, Seen<Manifest>> = new Map()
  let versionsSeen: ReadonlyMap<string, Seen<ServedModel>> = new Map()
  let listFailure: string | undefined
  let series: ReadonlyMap<string, ServedModel> = new Map()
  let running: Promise<void> | undefined
  let stopJob: (() => void) | undefined

  /** The manifest's outcome: the one kept for its etag, else read and parsed afresh and kept in `next`. */
  const fetchManifest = async (name: string, next: Map<string, Seen<Manifest>>): Promise<LoadOutcome<Manifest>> => {
    const path = manifestPath(name)
    let etag: string
    let bytes: Buffer
    try {
      etag = (await store.stat(path)).etag
      const seen = manifests.get(path)
      if (seen?.etag === etag) {
        next.set(path, seen)
        return seen.outcome
      }
      bytes = await store.read(path)
    } catch (error: unknown) {
      return storeFailure(path, error)
    }
    let outcome: LoadOutcome<Manifest>
    try {
      outcome = { isOk: true, value: parseManifest(bytes) }
    } catch (error: unknown) {
      outcome = refused(path, error) // ManifestError: names the member
    }
    next.set(path, { etag, outcome })
    return outcome
  }

  /** An optional file's stat, or undefined when the store does not hold it; other failures reject. */
  const statIfPresent = async (path: string): Promise<StoreStat | undefined> => {
    try {
      return await store.stat(path)
    } catch (error: unknown) {
      if ((error as StoreError).code === 'NOT_FOUND') return undefined
      throw error
    }
  }

  /** The runtime whose first file `dir` holds, with that file's etag; or the first runtime's NOT_FOUND when it holds none. */
  const findRuntime = async (dir: string): Promise<Readonly<{ runtime: Runtime; etag: string }> | VersionOutcome> => {
    let missing: VersionOutcome | undefined
    for (const runtime of runtimes) {
      const path = dir + (runtime.files[0] as string)
      try {
        return { runtime, etag: (await store.stat(path)).etag }
      } catch (error: unknown) {
        const outcome = storeFailure(path, error)
        if ((error as StoreError).code !== 'NOT_FOUND') return { runtime, outcome }
        missing ??= { runtime, outcome }
      }
    }
    return missing as VersionOutcome // the loop ran at least once: runtimes is never empty
  }

  /**
   * One version's outcome: the one kept for its files' etags, else its files read, described by its
   * runtime, checked against its path and loaded (unless `old` is the same build), and kept in `next`.
   */
  const fetchVersion = async (name: string, version: string, old: ServedModel | undefined, next: Map<string, Seen<ServedModel>>): Promise<VersionOutcome> => {
    const dir = `${name}/${version}/`
    const found = await findRuntime(dir)
    if ('outcome' in found) return found
    const { runtime } = found
    const key = dir + (runtime.files[0] as string)
    let path = key
    let etag = found.etag
    const bytes: (Buffer | undefined)[] = []
    const present: boolean[] = runtime.files.map(() => true)
    try {
      for (const file of runtime.files.slice(1)) {
        path = dir + file
        etag += ` ${(await store.stat(path)).etag}`
      }
      for (const file of runtime.optional) {
        path = dir + file
        const stat = await statIfPresent(path)
        present.push(stat !== undefined)
        etag += ` ${stat?.etag ?? '-'}`
      }
      const seen = versionsSeen.get(key)
      if (seen?.etag === etag) {
        next.set(key, seen)
        return { runtime, outcome: seen.outcome }
      }
      const files = [...runtime.files, ...runtime.optional]
      for (let i = 0; i < files.length; i++) {
        path = dir + (files[i] as string)
        bytes.push(present[i] === true ? await store.read(path) : undefined)
      }
    } catch (error: unknown) {
      return { runtime, outcome: storeFailure(path, error) }
    }
    let outcome: LoadOutcome<ServedModel>
    try {
      const { model, payload } = runtime.read(bytes, { name, version })
      checkPlace(model, name, version)
      // Read again with the same content (touched, or its manifest came back): nothing to load or swap.
      outcome = { isOk: true, value: old !== undefined && old.model.sha256 === model.sha256 ? old : await serve(runtime, model, payload) }
    } catch (error: unknown) {
      outcome = refused(key, error)
    }
    next.set(key, { etag, outcome })
    return { runtime, outcome }
  }

  /** One model's next slot, logging what changed against `previous`. */
  const syncModel = async (
    name: string,
    previous: ModelSlot | undefined,
    nextManifests: Map<string, Seen<Manifest>>,
    nextVersions: Map<string, Seen<ServedModel>>,
  ): Promise<ModelSlot> => {
    const wasReady = previous?.entry.state === 'READY'
    const failures = new Map<string, string>()
    const failed = (version: string, outcome: Failure): void => {
      failures.set(version, outcome.reason)
      if (previous?.failures.get(version) === outcome.reason) return
      const fields = {
        model: name,
        ...(version === '' ? {} : { version }),
        reason: outcome.reason,
        ...(outcome.detail === undefined ? {} : { detail: outcome.detail }),
      }
      if (wasReady) logger.warning('model_reload_failed', fields)
      else logger.error('model_unavailable', fields)
    }
    /** Not servable: a READY model keeps its previous slot, any other becomes UNAVAILABLE. */
    const unavailable = (reason: string, defaultVersion: string | undefined, platform: string): ModelSlot => {
      if (wasReady) return { ...(previous as ModelSlot), failures }
      return {
        entry: Object.freeze({ name, state: 'UNAVAILABLE', reason, defaultVersion, versions: Object.freeze([]), platform }),
        served: new Map(),
        defaultModel: undefined,
        failures,
      }
    }

    const manifestOutcome = await fetchManifest(name, nextManifests)
    if (!manifestOutcome.isOk) {
      failed('', manifestOutcome)
      return unavailable(manifestOutcome.reason, undefined, firstRuntime.platform)
    }
    const { defaultVersion, versions } = manifestOutcome.value
    const outcomes = await Promise.all(versions.map((version) => fetchVersion(name, version, previous?.served.get(version), nextVersions)))
    const served = new Map<string, ServedModel>()
    versions.forEach((version, i) => {
      const { outcome } = outcomes[i] as VersionOutcome
      if (outcome.isOk) {
        served.set(version, outcome.value)
        return
      }
      const old = previous?.served.get(version)
      if (old !== undefined) served.set(version, old)
      // A default that fails is the model's failure, logged once below as such.
      if (version !== defaultVersion || wasReady) failed(version, outcome)
    })
    const defaultModel = served.get(defaultVersion)
    if (defaultModel === undefined) {
      const { runtime, outcome } = outcomes[versions.indexOf(defaultVersion)] as VersionOutcome & { outcome: Failure }
      const reason = `default version ${defaultVersion}: ${outcome.reason}`
      if (!wasReady) failed('', { ...outcome, reason })
      return unavailable(reason, defaultVersion, runtime.platform)
    }

    let isChanged = previous?.defaultModel !== defaultModel || previous.served.size !== served.size
    for (const [version, build] of served) {
      if (previous?.served.get(version) === build) continue
      isChanged = true
      logger.info('model_loaded', { model: name, version, sha256: build.model.sha256.slice(0, SHA256_PREFIX_LENGTH) })
    }
    const entry: ModelEntry = Object.freeze({
      name,
      state: 'READY',
      reason: undefined,
      defaultVersion,
      versions: Object.freeze([...served.keys()]),
      platform: defaultModel.model.platform,
    })
    if (previous !== undefined && isChanged) logger.info('model_reloaded', { model: name, version: defaultVersion, versions: entry.versions })
    return { entry, served, defaultModel, failures }
  }

  /** Sets svc_model_ready for every served version and drops the series of versions no longer served; returns the builds served. */
  const publishSeries = (slots: ReadonlyMap<string, ModelSlot>): ServedModel[] => {
    const next = new Map<string, ServedModel>()
    for (const slot of slots.values()) {
      for (const build of slot.served.values()) {
        const key = `${build.name}/${build.version}`
        next.set(key, build)
        ready.set({ model: build.name, version: build.version }, build === slot.defaultModel ? 1 : 0)
      }
    }
    for (const [key, build] of series) if (!next.has(key)) ready.remove({ model: build.name, version: build.version })
    series = next
    return [...next.values()]
  }

  /** Every build a pass holds on to: served, or kept as the outcome of its files' etags. */
  const held = (slots: ReadonlyMap<string, ModelSlot>, seen: ReadonlyMap<string, Seen<ServedModel>>): Set<ServedModel> => {
    const builds = new Set<ServedModel>()
    for (const slot of slots.values()) for (const build of slot.served.values()) builds.add(build)
    for (const { outcome } of seen.values()) if (outcome.isOk) builds.add(outcome.value)
    return builds
  }

  /** Frees a build nothing serves or keeps any more; runs after the swap, never inside a request. */
  const dispose = (build: ServedModel): void => {
    // One path for a dispose that throws and one that rejects.
    void Promise.resolve()
      .then(() => build.predictor.dispose())
      .catch((error: unknown) => logger.warning('model_dispose_failed', { model: build.name, version: build.version, ...errorFields(error) }))
  }

  const pass = async (): Promise<void> => {
    let listed: readonly string[]
    try {
      listed = await store.list()
      listFailure = undefined
    } catch (error: unknown) {
      // Nothing to compare against: keep serving everything as it is.
      const { code, message } = error as StoreError
      if (listFailure !== message) logger.error('model_store_failed', { store: store.description, code, detail: message })
      listFailure = message
      return
    }
    const names = [...new Set([...listed, ...state.slots.keys()])].sort()
    const nextManifests = new Map<string, Seen<Manifest>>()
    const nextVersions = new Map<string, Seen<ServedModel>>()
    const built = await Promise.all(names.map((name) => syncModel(name, state.slots.get(name), nextManifests, nextVersions)))
    const before = held(state.slots, versionsSeen)
    manifests = nextManifests
    versionsSeen = nextVersions
    const slots = new Map(names.map((name, i) => [name, built[i] as ModelSlot]))
    const entries = Object.freeze(built.map((slot) => slot.entry))
    // From here on `resolve` sees the new models: one assignment.
    state = Object.freeze({ slots, entries, isReady: entries.some((entry) => entry.state === 'READY') })
    // Synchronous with the assignment above: no request runs in between.
    const served = publishSeries(slots)
    onPublish?.(served)
    const after = held(slots, nextVersions)
    for (const build of before) if (!after.has(build)) dispose(build)
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
