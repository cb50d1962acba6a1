// A pushed version listed in its model's manifest (`<model>/manifest.json`, store/manifest.ts) with
// a compare-and-swap: the manifest is written only if it is still the one read (its etag), or, for a
// model's first version, only if there is none. Of two pushes racing from one manifest one lands
// and the other reads the new one and tries again, so both versions are listed; a bounded number of
// tries, so a writer that never lands says so rather than spinning. The manifest is stat'ed, then
// read: a write in between changes the etag, and the swap fails as it should. Every member it holds
// is kept, in its order (a canary, a shadow); the default version is never changed here.
import { setTimeout as sleep } from 'node:timers/promises'
import { errorMessage } from '../../core/errors.js'
import { type JsonObject, parseJson } from '../../core/json.js'
import { StoreError } from '../../models/store/error.js'
import { compareVersions, type Manifest, parseManifest } from '../../models/store/manifest.js'
import type { Store, StoreStat } from '../../models/store/store.js'
import { PushError } from './errors.js'

export type RetryOptions = Readonly<{
  /** Writes tried before giving up, the first included. */
  tries: number
  /** Waits between tries; `node:timers/promises` setTimeout. */
  sleep: (ms: number) => Promise<unknown>
  /** In [0, 1): the jitter, so writers that collided do not collide again in step. */
  random: () => number
}>

/**
 * Eight tries over about a second: far more writers than push ever races with land by then, and a
 * push that cannot is told so while its user still waits.
 */
export const DEFAULT_RETRY: RetryOptions = Object.freeze({ tries: 8, sleep, random: Math.random })

/** How long to wait after the `attempt`th try failed: 20 to 40 ms after the first, each range doubling up to 100 to 200 ms. */
const backoffMs = (attempt: number, random: () => number): number => {
  const step = Math.min(200, 20 * 2 ** attempt)
  return step / 2 + (random() * step) / 2
}

/** What the manifest says once the version is listed: whether this push added it, and the manifest. */
export type Listed = Readonly<{ isAdded: boolean; manifest: Manifest }>

/** The bytes of a manifest as svc writes JSON: two-space indent, a final newline. */
const format = (document: unknown): Buffer => Buffer.from(`${JSON.stringify(document, null, 2)}\n`)

const statIfPresent = async (store: Store, path: string): Promise<StoreStat | undefined> => {
  try {
    return await store.stat(path)
  } catch (error: unknown) {
    if (error instanceof StoreError && error.code === 'NOT_FOUND') return undefined
    throw error
  }
}

/**
 * The manifest with `version` added to `versions`, every other member and its order kept; a missing
 * `versions` is made after `default_version`, listing the default too. The version goes before the
 * first listed after it in `compareVersions` order, so a sorted list stays sorted and a list in an
 * order of its own is otherwise left alone.
 */
const withVersion = (bytes: Buffer, version: string): Buffer => {
  // The caller has checked it with parseManifest: an object whose versions, if any, are strings.
  const document: JsonObject = Object(parseJson(bytes))
  const members = Object.entries(document).flatMap(([key, value]): [string, unknown][] => {
    if (key === 'versions' && Array.isArray(value)) {
      const at = value.findIndex((listed) => compareVersions(String(listed), version) > 0)
      return [[key, at === -1 ? [...value, version] : value.toSpliced(at, 0, version)]]
    }
    if (key === 'default_version' && !Object.hasOwn(document, 'versions'))
      return [
        [key, value],
        ['versions', [String(value), version].sort(compareVersions)],
      ]
    return [[key, value]]
  })
  return format(Object.fromEntries(members))
}

/** One try: PRECONDITION_FAILED when another writer changed the manifest since it was read. */
const listOnce = async (store: Store, path: string, version: string): Promise<Listed> => {
  const stat = await statIfPresent(store, path)
  if (stat === undefined) {
    const created = format({ default_version: version, versions: [version] })
    await store.write(path, created, { ifNoneMatch: '*' })
    return { isAdded: true, manifest: parseManifest(created) }
  }
  const bytes = await store.read(path)
  let current: Manifest
  try {
    current = parseManifest(bytes)
  } catch (error: unknown) {
    throw new PushError('INVALID_MANIFEST', `${path} in ${store.description} is not a manifest svc serves, so push leaves it alone: ${errorMessage(error)}`)
  }
  if (current.versions.includes(version)) return { isAdded: false, manifest: current }
  const next = withVersion(bytes, version)
  await store.write(path, next, { ifMatch: stat.etag })
  return { isAdded: true, manifest: parseManifest(next) }
}

/**
 * Lists `version` in `<model>/manifest.json`, creating the manifest (the version its default) when
 * there is none; rejects with the store's StoreError, or a PushError: INVALID_MANIFEST for a
 * manifest svc would refuse (never overwritten), MANIFEST_CONTENDED when every try found it changed.
 */
export const listVersion = async (store: Store, model: string, version: string, { tries, sleep, random }: RetryOptions = DEFAULT_RETRY): Promise<Listed> => {
  const path = `${model}/manifest.json`
  let refused: StoreError | undefined
  for (let attempt = 1; attempt <= tries; attempt++) {
    if (refused !== undefined) await sleep(backoffMs(attempt - 1, random))
    try {
      return await listOnce(store, path, version)
    } catch (error: unknown) {
      if (!(error instanceof StoreError && error.code === 'PRECONDITION_FAILED')) throw error
      refused = error
    }
  }
  throw new PushError(
    'MANIFEST_CONTENDED',
    `${path} in ${store.description} changed before each of ${tries} writes: other writers keep changing it; push again (the version's files are in place)`,
    { cause: refused },
  )
}
