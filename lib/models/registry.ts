// The models being served (DESIGN §10): every model the store lists, loaded at start-up and kept
// current by hot reload.
//
// State is immutable and replaced whole. A pass (start-up or reload) builds each model's new state
// from fully parsed and compiled artifacts, then publishes every model with one assignment of
// `state`; `resolve` only reads `state`, so a request sees the old models or the new ones, never a
// mix, and never a half-loaded one. What a failed reload finds broken is left out: the version it
// replaces keeps serving, and the model stays READY.
//
// Rules, the same at start-up and on reload:
// - A model is READY when its default version loads, UNAVAILABLE (with a reason) when it does not
//   and it was not READY before. Another version that fails is left out and logged.
// - An artifact's `name` and `version` must be those of its path.
// - Each file is `stat`ed first and read only when its etag changed since the last pass; an
//   unchanged file keeps its outcome (the compiled model, or why it was refused). Store failures
//   are never kept, so a timeout is retried on the next pass. An artifact read again with the
//   same sha256 keeps the model already served: nothing is swapped or logged.
// - A model the store stops listing is still polled and keeps serving what it has: a listing that
//   misses a model for a moment (a manifest being replaced) must not take it out of service.
//   Removing a model takes a restart.
// - A failure is logged when it is new, not on every pass it persists.
import { Gauge, type Registry } from 'prom-client'
import type { Logger } from '../telemetry/logger.js'
import { parseArtifact, type Artifact } from './artifact.js'
import { compile, type Classifier, type Regressor } from './kernel.js'
import { parseManifest, type Manifest } from './manifest.js'
import { cronPlan, cronScheduler, isReloadInterval, MAX_RELOAD_INTERVAL_S, type Scheduler } from './reload-schedule.js'
import type { StoreError, StoreErrorCode } from './store-error.js'
import type { Store } from './storage.js'

export type ModelState = 'READY' | 'UNAVAILABLE'

export type ServedModel = Readonly<{ name: string; version: string; artifact: Artifact; model: Classifier | Regressor }>

export type ModelEntry = Readonly<{
  name: string
  state: ModelState
  /** Why it is UNAVAILABLE (safe to show a client); undefined when READY. */
  reason: string | undefined
  defaultVersion: string | undefined
  /** Versions loaded and servable, sorted; the default among them when READY. */
  versions: readonly string[]
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
}>

/** What loading one file gave: its value, or why it failed (safe to show) and, from a store, the detail to log. */
type Outcome<T> = Readonly<{ isOk: true; value: T }> | Readonly<{ isOk: false; reason: string; detail: string | undefined }>
/** A file's outcome and the etag it was for. */
type Seen<T> = Readonly<{ etag: string; outcome: Outcome<T> }>

type Slot = Readonly<{
  entry: ModelEntry
  /** What `resolve` serves: the loaded versions, empty when UNAVAILABLE. */
  served: ReadonlyMap<string, ServedModel>
  defaultModel: ServedModel | undefined
  /** The failures of the latest pass by version ('' for the model as a whole), to log only new ones. */
  failures: ReadonlyMap<string, string>
}>

type State = Readonly<{ slots: ReadonlyMap<string, Slot>; entries: readonly ModelEntry[]; isReady: boolean }>

/** How the first characters of an artifact's sha256 appear in logs; enough to tell builds apart. */
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

const storeFailure = (path: string, error: unknown): Outcome<never> => {
  const { code, message } = error as StoreError // a Store rejects with StoreError only
  return { isOk: false, reason: `${path}: ${STORE_REASONS[code]}`, detail: message }
}

const manifestPath = (model: string): string => `${model}/manifest.json`
const artifactPath = (model: string, version: string): string => `${model}/${version}/model.json`

/** Parses, checks and compiles one artifact: what a version serves, built before anyone can see it. */
const serve = (model: string, version: string, bytes: Buffer): ServedModel => {
  const artifact = parseArtifact(bytes)
  if (artifact.name !== model || artifact.version !== version) {
    throw new Error(
      `is model ${JSON.stringify(artifact.name)} version ${JSON.stringify(artifact.version)}, stored as model ${JSON.stringify(model)} version ${JSON.stringify(version)}`,
    )
  }
  return Object.freeze({ name: artifact.name, version: artifact.version, artifact, model: compile(artifact) })
}

const EMPTY: State = Object.freeze({ slots: new Map(), entries: Object.freeze([]), isReady: false })

export const createModelRegistry = ({ store, logger, metrics, reloadIntervalS, scheduler = cronScheduler }: ModelRegistryOptions): ModelRegistry => {
  if (reloadIntervalS !== 0 && !isReloadInterval(reloadIntervalS)) {
    throw new RangeError(`reloadIntervalS must be 0 (no reload) or a whole number of seconds from 1 to ${MAX_RELOAD_INTERVAL_S}, is ${reloadIntervalS}`)
  }
  const plan = reloadIntervalS === 0 ? undefined : cronPlan(reloadIntervalS)
  const ready = new Gauge({
    name: 'svc_model_ready',
    help: 'Model versions loaded: 1 for the version served by default, 0 for the others.',
    labelNames: ['model', 'version'],
    registers: [metrics],
  })

  let state = EMPTY
  // Build-side memory, never read by `resolve`: the last outcome per path, and the last listing failure.
  let manifests: ReadonlyMap<string, Seen<Manifest>> = new Map()
  let artifacts: ReadonlyMap<string, Seen<ServedModel>> = new Map()
  let listFailure: string | undefined
  let series: ReadonlyMap<string, ServedModel> = new Map()
  let running: Promise<void> | undefined
  let stopJob: (() => void) | undefined

  /** The file's outcome: the one kept for its etag, else read and parsed afresh and kept in `next`. */
  const fetchFile = async <T>(
    path: string,
    parse: (bytes: Buffer) => T,
    known: ReadonlyMap<string, Seen<T>>,
    next: Map<string, Seen<T>>,
  ): Promise<Outcome<T>> => {
    let etag: string
    let bytes: Buffer
    try {
      etag = (await store.stat(path)).etag
      const seen = known.get(path)
      if (seen?.etag === etag) {
        next.set(path, seen)
        return seen.outcome
      }
      bytes = await store.read(path)
    } catch (error: unknown) {
      return storeFailure(path, error)
    }
    let outcome: Outcome<T>
    try {
      outcome = { isOk: true, value: parse(bytes) }
    } catch (error: unknown) {
      // ArtifactError, ManifestError, or the name/version check in `serve`: each names the member.
      outcome = { isOk: false, reason: `${path}: ${(error as Error).message}`, detail: undefined }
    }
    next.set(path, { etag, outcome })
    return outcome
  }

  /** One model's next slot, logging what changed against `previous`. */
  const syncModel = async (
    name: string,
    previous: Slot | undefined,
    nextManifests: Map<string, Seen<Manifest>>,
    nextArtifacts: Map<string, Seen<ServedModel>>,
  ): Promise<Slot> => {
    const wasReady = previous?.entry.state === 'READY'
    const failures = new Map<string, string>()
    const failed = (version: string, outcome: Outcome<unknown> & { isOk: false }): void => {
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
    const unavailable = (reason: string, defaultVersion: string | undefined): Slot => {
      if (wasReady) return { ...(previous as Slot), failures }
      return {
        entry: Object.freeze({ name, state: 'UNAVAILABLE', reason, defaultVersion, versions: Object.freeze([]) }),
        served: new Map(),
        defaultModel: undefined,
        failures,
      }
    }

    const manifestOutcome = await fetchFile(manifestPath(name), parseManifest, manifests, nextManifests)
    if (!manifestOutcome.isOk) {
      failed('', manifestOutcome)
      return unavailable(manifestOutcome.reason, undefined)
    }
    const { defaultVersion, versions } = manifestOutcome.value
    const outcomes = await Promise.all(
      versions.map((version) => fetchFile(artifactPath(name, version), (bytes) => serve(name, version, bytes), artifacts, nextArtifacts)),
    )
    const served = new Map<string, ServedModel>()
    versions.forEach((version, i) => {
      const outcome = outcomes[i] as Outcome<ServedModel>
      const old = previous?.served.get(version)
      if (outcome.isOk) {
        // Read again with the same content (touched, or its manifest came back): nothing to swap.
        served.set(version, old?.artifact.sha256 === outcome.value.artifact.sha256 ? old : outcome.value)
        return
      }
      if (old !== undefined) served.set(version, old)
      // A default that fails is the model's failure, logged once below as such.
      if (version !== defaultVersion || wasReady) failed(version, outcome)
    })
    const defaultModel = served.get(defaultVersion)
    if (defaultModel === undefined) {
      const outcome = outcomes[versions.indexOf(defaultVersion)] as Outcome<ServedModel> & { isOk: false }
      const reason = `default version ${defaultVersion}: ${outcome.reason}`
      if (!wasReady) failed('', { ...outcome, reason })
      return unavailable(reason, defaultVersion)
    }

    let isChanged = previous?.defaultModel !== defaultModel || previous.served.size !== served.size
    for (const [version, model] of served) {
      if (previous?.served.get(version) === model) continue
      isChanged = true
      logger.info('model_loaded', { model: name, version, sha256: model.artifact.sha256.slice(0, SHA256_PREFIX_LENGTH) })
    }
    const entry: ModelEntry = Object.freeze({ name, state: 'READY', reason: undefined, defaultVersion, versions: Object.freeze([...served.keys()]) })
    if (previous !== undefined && isChanged) logger.info('model_reloaded', { model: name, version: defaultVersion, versions: entry.versions })
    return { entry, served, defaultModel, failures }
  }

  /** Sets svc_model_ready for every served version and drops the series of versions no longer served. */
  const publishSeries = (slots: ReadonlyMap<string, Slot>): void => {
    const next = new Map<string, ServedModel>()
    for (const slot of slots.values()) {
      for (const model of slot.served.values()) {
        const key = `${model.name}/${model.version}`
        next.set(key, model)
        ready.set({ model: model.name, version: model.version }, model === slot.defaultModel ? 1 : 0)
      }
    }
    for (const [key, model] of series) if (!next.has(key)) ready.remove({ model: model.name, version: model.version })
    series = next
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
    const nextArtifacts = new Map<string, Seen<ServedModel>>()
    const built = await Promise.all(names.map((name) => syncModel(name, state.slots.get(name), nextManifests, nextArtifacts)))
    manifests = nextManifests
    artifacts = nextArtifacts
    const slots = new Map(names.map((name, i) => [name, built[i] as Slot]))
    const entries = Object.freeze(built.map((slot) => slot.entry))
    // From here on `resolve` sees the new models: one assignment.
    state = Object.freeze({ slots, entries, isReady: entries.some((entry) => entry.state === 'READY') })
    publishSeries(slots)
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
