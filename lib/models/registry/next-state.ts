// One pass's decision (registry.ts), pure: from the state before and what the store holds now
// (snapshot.ts) to the state to publish, the log lines to write and the builds to dispose.
//
// - A model is READY when its default version loads, UNAVAILABLE (with a reason) when it does not
//   and it was not READY before: a READY model keeps what it served. Another version that fails is
//   left out, unless it served before, in which case that build keeps serving.
// - Each version the manifest names gets a state (`versionStates`): READY when a build of it is
//   loaded, the one just read or, when that failed, the one that served before and serves on;
//   FAILED when none is. Its `reason` is the latest failure either way, so a READY version with a
//   reason is one whose new files were refused while its previous build answers.
// - A failure is logged when it is new, not on every pass it persists: a warning
//   (`model_reload_failed`) for a READY model, an error (`model_unavailable`) for another.
// - A build is disposed once nothing serves it and no kept outcome holds it.
// - A rollout (`canary`, `shadow`) is checked against what loaded (rollout.ts). One refused leaves a
//   READY model's previous slot serving, split included, with `rolloutError` on its entry; a model
//   becoming READY serves its default alone. `model_rollout_refused` is logged when the reason is new.
// - A listing that fails changes nothing served; it is logged when its message is new.
// - A model the listing leaves out serves on; left out of the next one too, it is removed
//   (`model_removed`), its builds disposed, and its series go at that publish.
//
// While a manifest cannot be read, its versions' states are the last ones known (none for a model
// never READY).
import { compareVersions, type Manifest } from '../store/manifest.js'
import { isSameRollout, rolloutOf, targetOf } from './rollout.js'
import {
  buildId,
  NO_ROLLOUT,
  type FileRead,
  type ListFailure,
  type ModelEntry,
  type ModelRead,
  type ModelSlot,
  type RegistryEvent,
  type Rollout,
  type RegistryState,
  type Refusal,
  type Seen,
  type ServedModel,
  type Snapshot,
  type VersionRead,
  type VersionState,
} from './state.js'

/** The state to publish, what to log first, and the builds to dispose once it is published. */
export type Transition = Readonly<{ state: RegistryState; events: readonly RegistryEvent[]; retired: readonly ServedModel[] }>

/** The failures key of a refused rollout: a version cannot hold a space, so it never collides. */
const ROLLOUT_FAILURE = ' rollout'

const NO_VERSION_STATES: readonly VersionState[] = Object.freeze([])

/** One model's step: what it was, and the failures and lines found so far. */
type Step = Readonly<{
  name: string
  previous: ModelSlot | undefined
  wasReady: boolean
  failures: Map<string, string>
  events: RegistryEvent[]
}>

/** Records a failure of `version` ('' for the model), logged unless the previous pass found the same. */
const fail = (step: Step, version: string, { reason, detail }: Refusal): void => {
  step.failures.set(version, reason)
  if (step.previous?.failures.get(version) === reason) return
  const fields = { model: step.name, ...(version === '' ? {} : { version }), reason, ...(detail === undefined ? {} : { detail }) }
  step.events.push(step.wasReady ? { event: 'model_reload_failed', fields } : { event: 'model_unavailable', fields })
}

/** Not servable: a READY model keeps its previous slot, any other becomes UNAVAILABLE. */
const unavailable = (step: Step, reason: string, defaultVersion: string | undefined, platform: string): ModelSlot => {
  const { name, previous, failures } = step
  if (step.wasReady) return { ...(previous as ModelSlot), failures }
  return {
    entry: Object.freeze({
      name,
      state: 'UNAVAILABLE',
      reason,
      defaultVersion,
      versions: Object.freeze([]),
      versionStates: NO_VERSION_STATES,
      platform,
      canary: undefined,
      shadow: undefined,
      rolloutError: undefined,
    }),
    served: new Map(),
    defaultModel: undefined,
    rollout: NO_ROLLOUT,
    failures,
  }
}

/** The builds to serve, in manifest order: each version's new one, else the one it served before. */
const servedVersions = (step: Step, versions: readonly VersionRead[], defaultVersion: string): Map<string, ServedModel> => {
  const served = new Map<string, ServedModel>()
  for (const { version, outcome } of versions) {
    if (outcome.ok) {
      served.set(version, outcome.value)
      continue
    }
    const old = step.previous?.served.get(version)
    if (old !== undefined) served.set(version, old)
    // A default that fails is the model's failure, recorded as such by the caller.
    if (version !== defaultVersion || step.wasReady) fail(step, version, outcome.reason)
  }
  return served
}

/** A READY slot, logging each build new to it and, on reload, that the model changed. */
const readySlot = (
  step: Step,
  served: Map<string, ServedModel>,
  defaultModel: ServedModel,
  defaultVersion: string,
  rollout: Rollout,
  rolloutError: string | undefined,
): ModelSlot => {
  const { name, previous, events } = step
  let isChanged = previous?.defaultModel !== defaultModel || previous.served.size !== served.size || !isSameRollout(previous.rollout, rollout)
  for (const [version, build] of served) {
    if (previous?.served.get(version) === build) continue
    isChanged = true
    events.push({ event: 'model_loaded', fields: { model: name, version, sha256: buildId(build.model) } })
  }
  const canary = targetOf(rollout.canary)
  const shadow = targetOf(rollout.shadow)
  const entry: ModelEntry = Object.freeze({
    name,
    state: 'READY',
    reason: undefined,
    defaultVersion,
    versions: Object.freeze([...served.keys()]),
    versionStates: NO_VERSION_STATES, // set by withVersionStates, once the slot is decided
    platform: defaultModel.model.platform,
    canary,
    shadow,
    rolloutError,
  })
  if (previous !== undefined && isChanged) {
    const split = { ...(canary === undefined ? {} : { canary }), ...(shadow === undefined ? {} : { shadow }) }
    events.push({ event: 'model_reloaded', fields: { model: name, version: defaultVersion, versions: entry.versions, ...split } })
  }
  return { entry, served, defaultModel, rollout, failures: step.failures }
}

/**
 * A READY model's slot with its rollout: the split the manifest declares, or, when refused, the
 * previous slot as it was (a model READY before) or the default alone, with the refusal on the entry.
 */
const withRollout = (step: Step, manifest: Manifest, served: Map<string, ServedModel>, defaultModel: ServedModel): ModelSlot => {
  const decided = rolloutOf(manifest, served, step.failures)
  if (decided.ok) return readySlot(step, served, defaultModel, manifest.defaultVersion, decided.value, undefined)
  const reason = decided.reason
  step.failures.set(ROLLOUT_FAILURE, reason)
  if (step.previous?.failures.get(ROLLOUT_FAILURE) !== reason) step.events.push({ event: 'model_rollout_refused', fields: { model: step.name, reason } })
  const { previous } = step
  if (previous?.entry.state !== 'READY') return readySlot(step, served, defaultModel, manifest.defaultVersion, NO_ROLLOUT, reason)
  return { ...previous, entry: Object.freeze({ ...previous.entry, rolloutError: reason }), failures: step.failures }
}

/** Each version the manifest names, and each other one `served` still holds, with what its latest load gave. */
const versionStates = (reads: readonly VersionRead[], served: ReadonlyMap<string, ServedModel>): readonly VersionState[] => {
  const states: VersionState[] = reads.map(({ version, outcome }) =>
    Object.freeze({
      version,
      state: outcome.ok || served.has(version) ? 'READY' : 'FAILED',
      reason: outcome.ok ? undefined : outcome.reason.reason,
    }),
  )
  // A READY model kept whole (its default failed to reload) may serve a version its new manifest dropped.
  for (const version of served.keys())
    if (!reads.some((read) => read.version === version)) states.push(Object.freeze({ version, state: 'READY', reason: undefined }))
  return Object.freeze(states.sort((a, b) => compareVersions(a.version, b.version)))
}

/** The slot with its versions' states, as the pass that read `reads` found them. */
const withVersionStates = (slot: ModelSlot, reads: readonly VersionRead[]): ModelSlot => ({
  ...slot,
  entry: Object.freeze({ ...slot.entry, versionStates: versionStates(reads, slot.served) }),
})

/** The next slot of a model whose manifest was read. */
const slotOf = (step: Step, manifest: Manifest, reads: readonly VersionRead[]): ModelSlot => {
  const { defaultVersion } = manifest
  const served = servedVersions(step, reads, defaultVersion)
  const defaultModel = served.get(defaultVersion)
  if (defaultModel !== undefined) return withRollout(step, manifest, served, defaultModel)
  // Neither loaded nor served before: the default's outcome is its failure.
  const { runtime, outcome: failure } = reads.find((v) => v.version === defaultVersion) as VersionRead & { outcome: { ok: false } }
  const reason = `default version ${defaultVersion}: ${failure.reason.reason}`
  if (!step.wasReady) fail(step, '', { ...failure.reason, reason })
  return unavailable(step, reason, defaultVersion, runtime.platform)
}

/** One model's next slot from what was read of it. */
const nextSlot = (read: ModelRead, previous: ModelSlot | undefined, events: RegistryEvent[]): ModelSlot => {
  const step: Step = { name: read.name, previous, wasReady: previous?.entry.state === 'READY', failures: new Map(), events }
  const { outcome } = read.manifest
  if (!outcome.ok) {
    // Which versions there are is unknown: a READY model keeps its previous slot, states included.
    fail(step, '', outcome.reason)
    return unavailable(step, outcome.reason.reason, undefined, read.platform)
  }
  return withVersionStates(slotOf(step, outcome.value, read.versions), read.versions)
}

/** The outcomes to keep for their etags: those the store answered for. */
const remember = <T>(reads: readonly FileRead<T>[]): Map<string, Seen<T>> => {
  const kept = new Map<string, Seen<T>>()
  for (const { path, etag, outcome } of reads) if (etag !== undefined) kept.set(path, { etag, outcome })
  return kept
}

/** Every build a state holds on to: served, or kept as the outcome of its files' etags. */
const held = ({ slots, versions }: RegistryState): Set<ServedModel> => {
  const builds = new Set<ServedModel>()
  for (const slot of slots.values()) for (const build of slot.served.values()) builds.add(build)
  for (const { outcome } of versions.values()) if (outcome.ok) builds.add(outcome.value)
  return builds
}

/** Nothing to compare against: everything serves as it is; the failure is logged when new. */
const listingFailed = (previous: RegistryState, { store, code, message }: ListFailure): Transition => {
  const events: RegistryEvent[] = previous.listFailure === message ? [] : [{ event: 'model_store_failed', fields: { store, code, detail: message } }]
  return { state: Object.freeze({ ...previous, listFailure: message }), events, retired: [] }
}

/** The step from `previous` to what `snapshot` holds: pure, no I/O. */
export const nextState = (previous: RegistryState, snapshot: Snapshot): Transition => {
  if (!snapshot.ok) return listingFailed(previous, snapshot.reason)
  const events: RegistryEvent[] = []
  const slots = new Map<string, ModelSlot>()
  const unlisted = new Set<string>()
  const kept: ModelRead[] = []
  for (const read of snapshot.value) {
    if (read.isUnlisted === true) {
      // The second listing in a row without it: out of the registry, its builds retired below.
      if (previous.unlisted?.has(read.name) === true) {
        events.push({ event: 'model_removed', fields: { model: read.name } })
        continue
      }
      unlisted.add(read.name)
    }
    kept.push(read)
    slots.set(read.name, nextSlot(read, previous.slots.get(read.name), events))
  }
  const entries = Object.freeze([...slots.values()].map((slot) => slot.entry))
  const state: RegistryState = Object.freeze({
    slots,
    entries,
    isReady: entries.some((entry) => entry.state === 'READY'),
    manifests: remember<Manifest>(kept.map((read) => read.manifest)),
    versions: remember<ServedModel>(kept.flatMap((read) => read.versions)),
    listFailure: undefined,
    unlisted,
  })
  const after = held(state)
  return { state, events, retired: [...held(previous)].filter((build) => !after.has(build)) }
}
