// A model's rollout (lib/README.md §10): the canary that answers a share of the requests naming no
// version, and the shadow that predicts a share of them again after the reply (lib/serving/shadow/);
// with them, the share of its requests the payload log writes (lib/serving/payload/). All are
// declared in the manifest (lib/models/store/manifest.ts), which checks them against its own
// members; here they are checked against what loaded, and a request is routed.
//
// Routing. A request with a routing key (its `id`, or the header SVC_ROLLOUT_KEY_HEADER names) goes
// to the canary when the key's point, a 32-bit FNV-1a hash scaled to [0, 100), is below the
// canary's percent: the same key lands on the same version on every request and every instance, and
// raising the percent only moves keys from the default to the canary, never back. A request without
// one draws Math.random(): 17–27 ns a decision, 56–102 ns hashing a 36-character id, against 10 ns
// with no canary (`npm run bench`, in process, Node 20 and 24).
import { failed, succeeded, type Result } from '../../core/result.js'
import type { Manifest, RolloutTarget } from '../store/manifest.js'
import { NO_ROLLOUT, type ModelSlot, type Rollout, type RolloutArm, type ServedModel } from './state.js'

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193
/** 2³² / 100: a 32-bit hash over this is a point in [0, 100). */
const POINTS_PER_PERCENT = 4294967296 / 100

/** FNV-1a's state after `text`'s UTF-16 code units, from `hash`. */
const fnv = (hash: number, text: string): number => {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME)
  return hash
}

/** The state after `prefix`: a key's point from it is the point of `prefix + key`, with no string built. */
export const prefixState = (prefix: string): number => fnv(FNV_OFFSET, prefix)

/**
 * A routing key's fixed point in [0, 100), the same on every host: FNV-1a over its UTF-16 code
 * units, then MurmurHash3's finaliser. FNV-1a alone spreads keys that differ only in their last
 * characters (`user-1`, `user-2`, …) unevenly over the range: 6 % off in a tenth of it over 10⁵
 * such keys; the finaliser mixes every bit into every other. `state` (prefixState) hashes it after
 * a prefix, so another use (the payload log's `log:`) draws apart from the canary.
 */
export const keyPoint = (key: string, state = FNV_OFFSET): number => {
  let hash = fnv(state, key)
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b)
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35)
  return ((hash ^ (hash >>> 16)) >>> 0) / POINTS_PER_PERCENT
}

/** Whether a request falls in an arm's share: by its key when it has one, else at random. */
export const isInShare = (arm: RolloutArm, key: string | undefined): boolean => (key === undefined ? Math.random() * 100 : keyPoint(key)) < arm.percent

/** hot path: the build a request naming no version is answered by: the canary's share, else the default. */
export const routeOf = (slot: ModelSlot, key: string | undefined): ServedModel | undefined => {
  const { canary } = slot.rollout
  return canary !== undefined && isInShare(canary, key) ? canary.served : slot.defaultModel
}

const arm = (
  target: RolloutTarget | undefined,
  role: 'canary' | 'shadow',
  served: ReadonlyMap<string, ServedModel>,
  failures: ReadonlyMap<string, string>,
): Result<RolloutArm | undefined> => {
  if (target === undefined) return succeeded(undefined)
  const build = served.get(target.version)
  if (build === undefined) {
    const why = failures.get(target.version)
    return failed(`${role}.version: ${JSON.stringify(target.version)} is not loaded${why === undefined ? '' : `: ${why}`}`)
  }
  return succeeded(Object.freeze({ served: build, percent: target.percent }))
}

/**
 * The split a manifest declares over the builds a pass serves, or why it is refused, naming the
 * member: what the manifest refused itself, or a version that did not load (`failures`, by version).
 */
export const rolloutOf = (manifest: Manifest, served: ReadonlyMap<string, ServedModel>, failures: ReadonlyMap<string, string>): Result<Rollout, string> => {
  if (manifest.rolloutError !== undefined) return failed(manifest.rolloutError)
  if (manifest.canary === undefined && manifest.shadow === undefined && manifest.logPercent === undefined) return succeeded(NO_ROLLOUT)
  const canary = arm(manifest.canary, 'canary', served, failures)
  if (!canary.ok) return canary
  const shadow = arm(manifest.shadow, 'shadow', served, failures)
  if (!shadow.ok) return shadow
  return succeeded(Object.freeze({ canary: canary.value, shadow: shadow.value, logPercent: manifest.logPercent }))
}

/** Whether two splits route, copy and log alike: the same versions at the same shares. */
export const isSameRollout = (a: Rollout, b: Rollout): boolean =>
  isSameArm(a.canary, b.canary) && isSameArm(a.shadow, b.shadow) && a.logPercent === b.logPercent

const isSameArm = (a: RolloutArm | undefined, b: RolloutArm | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.served.version === b.served.version && a.percent === b.percent)

/** An arm as the entry and the logs show it. */
export const targetOf = (arm: RolloutArm | undefined): RolloutTarget | undefined =>
  arm === undefined ? undefined : Object.freeze({ version: arm.served.version, percent: arm.percent })
