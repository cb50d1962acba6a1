// The builds an instance can score labels for: every build it served, kept from its first publish
// until SVC_FEEDBACK_MAX_AGE_S after the pass that stopped serving it, when the last token it can
// have signed expires; its version's series follow the same rule, as a family of
// lib/models/registry/version-series.ts. What is kept is small: the names, the classes (to check a
// truth and name the answer), the keys, and what its labels count into in the version's series,
// refreshed at every publish so that the series follow each build (metrics.ts). Lost on restart: a label for a build this
// process never served is `unknown_version` (README, Model quality from labels).
import type { HistogramCell } from '../../telemetry/metrics/cells.js'
import { buildId, type ServedModel } from '../../models/registry/registry.js'
import { createVersionFamily } from '../../models/registry/version-series.js'
import type { FeedbackMetrics, VersionFeedback } from './metrics.js'
import { versionKey, type KeyRing, type VersionKey } from './token.js'

/** The fleet's secrets: the current one signs and checks, a previous one (a rotation) only checks. */
export type FeedbackSecrets = Readonly<{ current: Buffer; previous: Buffer | undefined }>

/** A build whose labels this instance scores. */
export type KnownBuild = Readonly<{
  model: string
  version: string
  /** A classifier's classes, by the index tokens carry; undefined for a regressor. */
  classes: readonly string[] | undefined
  feedback: VersionFeedback
  /** The model's prediction-to-label delay histogram. */
  delay: HistogramCell
  keys: readonly VersionKey[]
}>

export type FeedbackVersions = Readonly<{
  /** Each pass's served builds (the registry's onPublish): new ones are known from now, the rest retire. */
  publish(served: readonly ServedModel[], nowS: number): void
  /** hot path: the key that signs `served`'s tokens, undefined when it has none (a name too long). */
  keyOf(served: ServedModel): VersionKey | undefined
  /** The build a token names, if known. */
  known(model: string, version: string, build: string): KnownBuild | undefined
  /** The keys to check a token with: a known build's, else those derived for an unknown one (kept for the next). */
  ring: KeyRing
}>

/** The build a token names: the same sha256 prefix as in logs and the drift series. */
const buildOf = (served: ServedModel): string => buildId(served.model)

const keyName = (model: string, version: string, build: string): string => `${model}\0${version}\0${build}`

/**
 * Builds this instance does not know whose keys are kept, the oldest forgotten first. A token of one
 * is still checked, to tell `invalid_token` from `unknown_version`, and deriving its keys (HKDF and
 * an AES key schedule per secret) cost 55–60 ms per 1 000 items when done per item.
 */
const STRANGERS_KEPT = 256

/** The quality measured on held-out rows, as the version's files record it: none, no series. */
const qualityOf = ({ model }: ServedModel): Readonly<Record<string, number>> => model.quality ?? {}

const classesOf = ({ model }: ServedModel): readonly string[] | undefined => (model.task === 'classification' ? model.classes : undefined)

/** What a build's labels count into: its version's series, with the build's classes and quality (metrics.ts). */
const trackBuild = (metrics: FeedbackMetrics, served: ServedModel): VersionFeedback =>
  metrics.track(served.model.name, served.model.version, classesOf(served), qualityOf(served))

/** The version's series: made at 0 by its publish, kept until its last token has expired (version-series.ts). */
const feedbackSeries = (maxAgeS: number, metrics: FeedbackMetrics) =>
  createVersionFamily({
    policy: { keptS: maxAgeS },
    keyOf: ({ model }: ServedModel) => `${model.name}\0${model.version}`,
    make: (served: ServedModel) => trackBuild(metrics, served),
    drop: (key: string) => {
      const [model, version] = key.split('\0') as [string, string]
      metrics.drop(model, version)
    },
  })

/** Deletes a map's first key in insertion order: its oldest, for a map whose entries are never set again. */
const dropOldest = (map: Map<string, unknown>): void => {
  // The loop reads the first key, typed string: `keys().next().value` is typed `string | undefined`.
  for (const key of map.keys()) {
    map.delete(key)
    break
  }
}

export const createFeedbackVersions = (secrets: FeedbackSecrets, maxAgeS: number, metrics: FeedbackMetrics): FeedbackVersions => {
  const series = feedbackSeries(maxAgeS, metrics)
  const builds = new Map<string, KnownBuild>()
  /** When each build stopped being served; absent while it is served. */
  const retired = new Map<string, number>()
  const keysOf = new WeakMap<ServedModel, VersionKey | undefined>()
  const strangers = new Map<string, readonly VersionKey[]>()

  const derive = (model: string, version: string, build: string, kind: 'class' | 'value'): VersionKey[] =>
    [secrets.current, secrets.previous].flatMap((secret) => {
      const key = secret === undefined ? undefined : versionKey(secret, model, version, build, kind)
      return key === undefined ? [] : [key]
    })

  /** The keys of a build this instance does not know, derived once while kept. */
  const strangerKeys = (model: string, version: string, build: string, kind: 'class' | 'value'): readonly VersionKey[] => {
    const id = `${keyName(model, version, build)}\0${kind}`
    let keys = strangers.get(id)
    if (keys !== undefined) return keys
    if (strangers.size === STRANGERS_KEPT) dropOldest(strangers)
    strangers.set(id, (keys = derive(model, version, build, kind)))
    return keys
  }

  const learn = (served: ServedModel): void => {
    const { name, version } = served.model
    const build = buildOf(served)
    const id = keyName(name, version, build)
    retired.delete(id)
    const classes = classesOf(served)
    series.of(served)
    // Every publish: the version's series take this build's classes and quality, even when the build is known.
    const feedback = trackBuild(metrics, served)
    const keys = builds.get(id)?.keys ?? derive(name, version, build, classes === undefined ? 'value' : 'class')
    builds.set(id, Object.freeze({ model: name, version, classes, feedback, delay: metrics.delay(name), keys }))
    keysOf.set(served, keys[0])
  }

  const forget = (nowS: number): void => {
    for (const [id, since] of retired) {
      if (nowS - since <= maxAgeS) continue
      builds.delete(id)
      retired.delete(id)
    }
  }

  return {
    publish: (served, nowS) => {
      const serving = new Set<string>()
      for (const build of served) {
        learn(build)
        serving.add(keyName(build.model.name, build.model.version, buildOf(build)))
      }
      for (const id of builds.keys()) if (!serving.has(id) && !retired.has(id)) retired.set(id, nowS)
      forget(nowS)
      series.publish(served, nowS)
    },
    keyOf: (served) => keysOf.get(served),
    known: (model, version, build) => builds.get(keyName(model, version, build)),
    ring: (model, version, build, kind) => builds.get(keyName(model, version, build))?.keys ?? strangerKeys(model, version, build, kind),
  }
}
