// What the model registry holds between passes (registry.ts), and what a pass reads to replace it
// (snapshot.ts): plain immutable data, so the step from one to the next (next-state.ts) is a pure
// function a test drives with values alone.
import type { Result } from '../../core/result.js'
import type { ModelVersion, Predictor, Runtime } from '../runtime.js'
import type { Manifest, RolloutTarget } from '../store/manifest.js'
import type { StoreErrorCode } from '../store/error.js'

export type ModelState = 'READY' | 'UNAVAILABLE'

/**
 * What the latest pass made of one version: READY when a build of it is loaded (the one just read,
 * or, when that failed, the one loaded before, which serves on), FAILED when none is. `reason` is
 * why the latest read or load of its files failed, whatever the state; undefined when it loaded.
 */
export type VersionState = Readonly<{ version: string; state: 'READY' | 'FAILED'; reason: string | undefined }>

/** One build of one version, as served: what it is and what predicts with it. */
export type ServedModel = Readonly<{ name: string; version: string; model: ModelVersion; predictor: Predictor }>

/** How many hex digits of a build's sha256 name it in logs and metric labels: enough to tell builds apart. */
const BUILD_ID_LENGTH = 12

/** A build's name in log lines (`model_loaded`'s `sha256`) and in the drift bin series' `build` label: one derivation for both. */
export const buildId = (model: ModelVersion): string => model.sha256.slice(0, BUILD_ID_LENGTH)

export type ModelEntry = Readonly<{
  name: string
  state: ModelState
  /** Why it is UNAVAILABLE (safe to show a client); undefined when READY. */
  reason: string | undefined
  defaultVersion: string | undefined
  /** Versions loaded and servable, sorted; the default among them when READY. */
  versions: readonly string[]
  /**
   * Every version the manifest names, and any other still served, sorted, each with what its latest
   * load gave (`VersionState`); empty while the manifest cannot be read and nothing serves.
   */
  versionStates: readonly VersionState[]
  /**
   * The runtime of the default version (`Runtime.platform`); for an UNAVAILABLE model, the one it
   * was to be loaded with, or the first runtime when not even its manifest could be read.
   */
  platform: string
  /** The versions taking a share of the traffic, as served now (lib/models/registry/rollout.ts); undefined when none. */
  canary: RolloutTarget | undefined
  shadow: RolloutTarget | undefined
  /**
   * Why the manifest's latest `canary`, `shadow` or `log` was refused, naming the member; the split served
   * before serves on. Undefined when accepted. Apart from `reason`, which means UNAVAILABLE.
   */
  rolloutError: string | undefined
}>

/** A version taking a share of a model's traffic, as served: the build and its percent. */
export type RolloutArm = Readonly<{ served: ServedModel; percent: number }>

/**
 * A model's split: the canary's share of requests naming no version, and the shadow's copies; and
 * the share of its requests the payload log writes, when its manifest sets one (`log.percent`).
 */
export type Rollout = Readonly<{ canary: RolloutArm | undefined; shadow: RolloutArm | undefined; logPercent: number | undefined }>

export const NO_ROLLOUT: Rollout = Object.freeze({ canary: undefined, shadow: undefined, logPercent: undefined })

/** Why a file or version failed: safe to show a client, and, from a store, the detail to log. */
export type Refusal = Readonly<{ reason: string; detail: string | undefined }>

/** What loading one file or version gave: its value, or why not. */
export type LoadOutcome<T> = Result<T, Refusal>

/** An outcome and the etag (for a version, its files' etags) it was for. */
export type Seen<T> = Readonly<{ etag: string; outcome: LoadOutcome<T> }>

/** One model as published. */
export type ModelSlot = Readonly<{
  entry: ModelEntry
  /** What `resolve` serves: the loaded versions, empty when UNAVAILABLE. */
  served: ReadonlyMap<string, ServedModel>
  defaultModel: ServedModel | undefined
  /** The canary and shadow builds with their shares; NO_ROLLOUT when the manifest declares neither. */
  rollout: Rollout
  /** The failures of the latest pass by version ('' for the model as a whole), to log only new ones. */
  failures: ReadonlyMap<string, string>
}>

export type RegistryState = Readonly<{
  /** What `resolve` reads: every model, by name. */
  slots: ReadonlyMap<string, ModelSlot>
  entries: readonly ModelEntry[]
  isReady: boolean
  // Build-side memory, never read by `resolve`: the last outcome per manifest and per version (by
  // the path of its runtime's first file), and the last listing failure.
  manifests: ReadonlyMap<string, Seen<Manifest>>
  versions: ReadonlyMap<string, Seen<ServedModel>>
  listFailure: string | undefined
  /**
   * Models served though the store's last listing left them out: one more listing without them
   * removes them (a listing that misses a model once, a manifest being replaced, must not).
   */
  unlisted?: ReadonlySet<string>
}>

export const EMPTY: RegistryState = Object.freeze({
  slots: new Map(),
  entries: Object.freeze([]),
  isReady: false,
  manifests: new Map(),
  versions: new Map(),
  listFailure: undefined,
})

/**
 * What a pass read of one file (a manifest) or version: its outcome and, when the store answered,
 * the etag that outcome is for. A store failure has no etag: it is not kept, so the next pass tries
 * again.
 */
export type FileRead<T> = Readonly<{ path: string; etag: string | undefined; outcome: LoadOutcome<T> }>

/** A version's read, with the runtime it is for; `path` is that runtime's first file. */
export type VersionRead = FileRead<ServedModel> & Readonly<{ version: string; runtime: Runtime }>

/** What a pass read of one model. */
export type ModelRead = Readonly<{
  name: string
  manifest: FileRead<Manifest>
  /** One per version the manifest lists, in its order; empty when the manifest failed. */
  versions: readonly VersionRead[]
  /** The platform of a model whose manifest failed: the first runtime's. */
  platform: string
  /** True for a model served before that the store's listing left out this time. */
  isUnlisted?: true
}>

/** Why the store could not list its models. */
export type ListFailure = Readonly<{ store: string; code: StoreErrorCode; message: string }>

/** Every model the store lists or the registry served, by name; or why the listing failed. */
export type Snapshot = Result<readonly ModelRead[], ListFailure>

/** A log line a pass decided on, written by the holder at the event's own level (lib/README.md §5). */
export type RegistryEvent = Readonly<{
  event: 'model_loaded' | 'model_reloaded' | 'model_removed' | 'model_reload_failed' | 'model_rollout_refused' | 'model_unavailable' | 'model_store_failed'
  fields: Readonly<Record<string, unknown>>
}>

/** The build `previous` serves for a version when it is the same build (equal sha256): reused, nothing loaded or swapped. */
export const sameBuild = (previous: RegistryState, model: ModelVersion): ServedModel | undefined => {
  const old = previous.slots.get(model.name)?.served.get(model.version)
  return old !== undefined && old.model.sha256 === model.sha256 ? old : undefined
}
