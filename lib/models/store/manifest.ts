// A model's manifest, `<model>/manifest.json` (lib/README.md §10): which version a request without
// one gets, and which versions are served.
//
//   default_version  required: the version served when a request names none
//   versions         optional: further versions to load and serve by name (`["1", "2"]`); the
//                    default is loaded whether or not it is listed
//
// Checked as strictly as the artifact itself: any other member is refused, so a misspelt
// `versoins` stops the model with a reason instead of silently serving fewer versions.
import { errorMessage, SvcError } from '../../core/errors.js'
import { isObject, parseJson } from '../../core/json.js'

/** Versions as `parseArtifact` accepts them, so a manifest cannot name a version no artifact can carry. */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const MEMBERS: readonly string[] = ['default_version', 'versions']

// Numeric-aware, so `10` sorts after `2`; a fixed locale, so the order is the same on every host.
const collator = new Intl.Collator('en', { numeric: true })

export type Manifest = Readonly<{
  defaultVersion: string
  /** Every version to load, the default included, distinct and sorted (see `compareVersions`). */
  versions: readonly string[]
}>

/** A malformed manifest; the message names the member (`versions[1]: …`). */
export class ManifestError extends SvcError {
  override name = 'ManifestError'
  readonly code = 'INVALID_MANIFEST'
}

/** The order versions are listed in: numeric runs compared as numbers (`2` before `10`). */
export const compareVersions = (a: string, b: string): number => collator.compare(a, b)

const version = (value: unknown, field: string): string => {
  if (typeof value !== 'string' || !VERSION.test(value)) throw new ManifestError(`${field}: must be a version string matching ${String(VERSION)}`)
  return value
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
  return Object.freeze({ defaultVersion, versions: Object.freeze([...versions].sort(compareVersions)) })
}
