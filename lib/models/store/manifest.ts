// A model's manifest, `<model>/manifest.json` (lib/README.md §10): which version a request without
// one gets, and which versions are served.
//
//   default_version  required: the version served when a request names none
//   versions         optional: further versions to load and serve by name (`["1", "2"]`); the
//                    default is loaded whether or not it is listed
//   canary           optional: `{"version": "3", "percent": 5}`, the listed version that answers
//                    that share of the requests naming no version (the default takes the rest)
//   shadow           optional: `{"version": "3", "percent": 100}`, the listed version that also
//                    predicts that share of requests, after the reply (lib/serving/shadow/)
//   log              optional: `{"percent": 10}`, the share of this model's requests the payload log
//                    writes, instead of SVC_PAYLOAD_LOG_PERCENT (lib/serving/payload/)
//
// Checked as strictly as the artifact itself: any other member is refused, so a misspelt
// `versoins` stops the model with a reason instead of silently serving fewer versions. What is
// wrong with `canary`, `shadow` or `log` is not the manifest's failure but the rollout's (`rolloutError`,
// naming the member): the registry keeps the split it served and the model READY
// (lib/models/registry/rollout.ts), since a bad rollout must never take the default out of service.
import { errorMessage, SvcError } from '../../core/errors.js'
import { isObject, type JsonObject, parseJson } from '../../core/json.js'

/** Versions as `parseArtifact` accepts them, so a manifest cannot name a version no artifact can carry. */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const MEMBERS: readonly string[] = ['default_version', 'versions', 'canary', 'shadow', 'log']
const TARGET_MEMBERS: readonly string[] = ['version', 'percent']

// Numeric-aware, so `10` sorts after `2`; a fixed locale, so the order is the same on every host.
const collator = new Intl.Collator('en', { numeric: true })

/** A version taking a share of a model's traffic: `percent` from 0 to 100. */
export type RolloutTarget = Readonly<{ version: string; percent: number }>

export type Manifest = Readonly<{
  defaultVersion: string
  /** Every version to load, the default included, distinct and sorted (see `compareVersions`). */
  versions: readonly string[]
  canary: RolloutTarget | undefined
  shadow: RolloutTarget | undefined
  /** The share of requests the payload log writes (`log.percent`); undefined for SVC_PAYLOAD_LOG_PERCENT. */
  logPercent: number | undefined
  /** Why `canary`, `shadow` or `log` is refused, naming the member (`canary.percent: …`); all three are undefined then. */
  rolloutError: string | undefined
}>

/** A malformed manifest; the message names the member (`versions[1]: …`). */
export class ManifestError extends SvcError {
  override name = 'ManifestError'
  readonly code = 'INVALID_MANIFEST'
}

/** The order versions are listed in: numeric runs compared as numbers (`2` before `10`). */
export const compareVersions = (a: string, b: string): number => collator.compare(a, b)

/** A share from 0 to 100; throws ManifestError naming `field`. */
const percentOf = (value: unknown, field: string): number => {
  if (typeof value !== 'number' || !(value >= 0 && value <= 100)) {
    throw new ManifestError(`${field}: must be a number from 0 to 100, is ${JSON.stringify(value) ?? 'missing'}`)
  }
  return value
}

const version = (value: unknown, field: string): string => {
  if (typeof value !== 'string' || !VERSION.test(value)) throw new ManifestError(`${field}: must be a version string matching ${String(VERSION)}`)
  return value
}

/** A `canary` or `shadow` member, checked against the manifest's default and versions; throws ManifestError. */
const target = (value: unknown, role: 'canary' | 'shadow', defaultVersion: string, versions: ReadonlySet<string>): RolloutTarget | undefined => {
  if (value === undefined) return undefined
  if (!isObject(value)) throw new ManifestError(`${role}: must be an object {"version": …, "percent": …}`)
  for (const key of Object.keys(value))
    if (!TARGET_MEMBERS.includes(key)) throw new ManifestError(`${role}.${key}: is not a member of ${role} (version, percent)`)
  if (!Object.hasOwn(value, 'version')) throw new ManifestError(`${role}.version: is missing`)
  const targetVersion = version(value['version'], `${role}.version`)
  const percent = percentOf(value['percent'], `${role}.percent`)
  if (targetVersion === defaultVersion) {
    throw new ManifestError(`${role}.version: ${JSON.stringify(targetVersion)} is the default version; a ${role} must be another listed version`)
  }
  if (!versions.has(targetVersion)) throw new ManifestError(`${role}.version: ${JSON.stringify(targetVersion)} is not listed in versions`)
  return Object.freeze({ version: targetVersion, percent })
}

/** The `log` member's percent; throws ManifestError. */
const logPercentOf = (value: unknown): number | undefined => {
  if (value === undefined) return undefined
  if (!isObject(value)) throw new ManifestError('log: must be an object {"percent": …}')
  for (const key of Object.keys(value)) if (key !== 'percent') throw new ManifestError(`log.${key}: is not a member of log (percent)`)
  return percentOf(value['percent'], 'log.percent')
}

/** The rollout members, or why they are refused: never the manifest's own failure. */
const rollout = (
  raw: JsonObject,
  defaultVersion: string,
  versions: ReadonlySet<string>,
): Pick<Manifest, 'canary' | 'shadow' | 'logPercent' | 'rolloutError'> => {
  try {
    return {
      canary: target(raw['canary'], 'canary', defaultVersion, versions),
      shadow: target(raw['shadow'], 'shadow', defaultVersion, versions),
      logPercent: logPercentOf(raw['log']),
      rolloutError: undefined,
    }
  } catch (error: unknown) {
    return { canary: undefined, shadow: undefined, logPercent: undefined, rolloutError: errorMessage(error) }
  }
}

/** Parses and checks a manifest file; throws ManifestError; returns it frozen. */
export const parseManifest = (bytes: Buffer): Manifest => {
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw new ManifestError(`(document): is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  if (!isObject(value)) throw new ManifestError('(document): must be a JSON object')
  const raw = value
  for (const key of Object.keys(raw)) if (!MEMBERS.includes(key)) throw new ManifestError(`${key}: is not a member of a manifest (${MEMBERS.join(', ')})`)
  if (!Object.hasOwn(raw, 'default_version')) throw new ManifestError('default_version: is missing')
  const defaultVersion = version(raw['default_version'], 'default_version')
  const versions = new Set([defaultVersion])
  if (Object.hasOwn(raw, 'versions')) {
    const listed = raw['versions']
    if (!Array.isArray(listed)) throw new ManifestError('versions: must be an array of version strings')
    listed.forEach((entry, i) => {
      const listedVersion = version(entry, `versions[${i}]`)
      if (listed.indexOf(entry) !== i) throw new ManifestError(`versions[${i}]: repeats ${JSON.stringify(listedVersion)}`)
      versions.add(listedVersion)
    })
  }
  const { canary, shadow, logPercent, rolloutError } = rollout(raw, defaultVersion, versions)
  return Object.freeze({ defaultVersion, versions: Object.freeze([...versions].sort(compareVersions)), canary, shadow, logPercent, rolloutError })
}
