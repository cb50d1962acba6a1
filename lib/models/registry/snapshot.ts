// A pass's I/O (registry.ts): what the store holds now, read as little as the last pass allows.
//
// - A version's runtime (runtime.ts) is the first of `runtimes` whose first file the version holds
//   (`<model>/<version>/model.json` for the kernel, `model.onnx` for ONNX); its files are read, and
//   its optional ones when the store holds them. Its description's `name` and `version` must be
//   those of its path.
// - Each file is `stat`ed first and read only when one of its etags changed (or an optional file
//   came or went) since the last pass; unchanged files keep their outcome. A store failure carries
//   no etag, so it is not kept and is retried on the next pass.
// - A version read again with the sha256 already served keeps that build (`sameBuild`): loading is
//   the one step here with a cost beyond I/O, and a reuse must come before it.
// - Every model the store lists is read, and every model served before, marked `isUnlisted` when
//   the listing left it out: next-state.ts removes it only when the next listing leaves it out too.
// - Models are read MODELS_AT_ONCE at a time (lib/core/schedule/limited.ts says why).
import { errorMessage } from '../../core/errors.js'
import { mapLimited } from '../../core/schedule/limited.js'
import { failed, succeeded } from '../../core/result.js'
import { ArtifactError } from '../artifact.js'
import type { ModelVersion, Runtime } from '../runtime.js'
import { storeErrorOf, type StoreErrorCode } from '../store/error.js'
import { parseManifest, type Manifest } from '../store/manifest.js'
import { CHECKSUMS_FILE, parseChecksums, verifyChecksums } from '../store/checksums.js'
import { scanStore } from '../store/scan.js'
import type { Store, StoreScan, StoreStat } from '../store/store.js'
import { sameBuild, type FileRead, type LoadOutcome, type ModelRead, type RegistryState, type ServedModel, type Snapshot, type VersionRead } from './state.js'

/** Where a pass reads from: the store, and the runtimes a version may be for, in the order they are tried (never empty). */
export type Source = Readonly<{ store: Store; runtimes: readonly Runtime[] }>

/** How many models a pass reads at once: enough to overlap a remote store's round trips. */
const MODELS_AT_ONCE = 16

/** Store failures in words a client may see: the store's message names hosts and directories. */
const STORE_REASONS: Readonly<Record<StoreErrorCode, string>> = {
  NOT_FOUND: 'not found in the model store',
  UNREADABLE: 'cannot be read from the model store',
  INVALID_PATH: 'is not a valid model store path',
  UPSTREAM_ERROR: 'the model store failed',
  TOO_LARGE: 'is larger than the model store allows',
  INVALID_INDEX: 'the model store index is invalid',
  PRECONDITION_FAILED: 'changed in the model store while it was written',
  READ_ONLY: 'the model store is read-only',
  LOCKED: 'is locked by a writer of the model store',
  CHECKSUM_MISMATCH: 'does not match the checksum recorded when it was pushed',
}

const storeFailure = (path: string, error: unknown): LoadOutcome<never> => {
  const { code, message } = storeErrorOf(error)
  return failed({ reason: `${path}: ${STORE_REASONS[code]}`, detail: message })
}

/** A version's description or load refused: the error names the member, the reason the file. */
const refused = (path: string, error: unknown): LoadOutcome<never> => failed({ reason: `${path}: ${errorMessage(error)}`, detail: undefined })

/**
 * An artifact whose sha256 is not its content's: most often one edited by hand (a new version
 * copied from the last), which `svc sign` signs. The reason names the command and the file in the
 * store; the detail, logged only, the file where the store keeps it.
 */
const unsigned = ({ store }: Source, path: string, error: ArtifactError): LoadOutcome<never> =>
  failed({
    reason: `${path}: ${error.message}; if it was edited on purpose, sign it: svc sign ${path}`,
    detail: `svc sign ${store.description.replace(/\/$/, '')}/${path}`,
  })

/** Throws unless a description is of the model and version its path names. */
const checkPlace = (model: ModelVersion, name: string, version: string): void => {
  if (model.name !== name || model.version !== version) {
    throw new Error(
      `is model ${JSON.stringify(model.name)} version ${JSON.stringify(model.version)}, ` +
        `stored as model ${JSON.stringify(name)} version ${JSON.stringify(version)}`,
    )
  }
}

/** Every model listed or served before, sorted. */
export const modelNames = (listed: readonly string[], previous: RegistryState): string[] => [...new Set([...listed, ...previous.slots.keys()])].sort()

/** The manifest's outcome: the one kept for its etag, else read and parsed afresh. */
const readManifest = async ({ store }: Source, name: string, previous: RegistryState): Promise<FileRead<Manifest>> => {
  const path = `${name}/manifest.json`
  let etag: string
  let bytes: Buffer
  try {
    etag = (await store.stat(path)).etag
    const seen = previous.manifests.get(path)
    if (seen?.etag === etag) return { path, ...seen }
    bytes = await store.read(path)
  } catch (error: unknown) {
    return { path, etag: undefined, outcome: storeFailure(path, error) }
  }
  try {
    return { path, etag, outcome: succeeded(parseManifest(bytes)) }
  } catch (error: unknown) {
    return { path, etag, outcome: refused(path, error) } // ManifestError: names the member
  }
}

/** An optional file's stat, or undefined when the store does not hold it; other failures reject. */
const statIfPresent = async (store: Store, path: string): Promise<StoreStat | undefined> => {
  try {
    return await store.stat(path)
  } catch (error: unknown) {
    if (storeErrorOf(error).code === 'NOT_FOUND') return undefined
    throw error
  }
}

/** A version's place in the store: the directory, the runtime it is for, and the path of that runtime's first file. */
type Found = Readonly<{ dir: string; version: string; runtime: Runtime; path: string; etag: string }>

/** The runtime whose first file `dir` holds, with that file's etag; or the first runtime's NOT_FOUND when it holds none. */
const findRuntime = async ({ store, runtimes }: Source, dir: string, version: string): Promise<Found | VersionRead> => {
  let missing: VersionRead | undefined
  for (const runtime of runtimes) {
    const path = dir + (runtime.files[0] as string)
    try {
      return { dir, version, runtime, path, etag: (await store.stat(path)).etag }
    } catch (error: unknown) {
      const outcome = storeFailure(path, error)
      if (storeErrorOf(error).code !== 'NOT_FOUND') return { path, etag: undefined, outcome, version, runtime }
      missing ??= { path, etag: undefined, outcome, version, runtime }
    }
  }
  return missing as VersionRead // the loop ran at least once: runtimes is never empty
}

/** A runtime's optional files, and the checksums.json `svc push` writes beside them (store/checksums.ts). */
const optionalFiles = (runtime: Runtime): readonly string[] => [...runtime.optional, CHECKSUMS_FILE]

/**
 * The files' bytes without checksums.json (the last), each checked against it when there is one;
 * throws CHECKSUM_MISMATCH naming the file.
 */
const verified = ({ dir, runtime }: Found, bytes: readonly (Buffer | undefined)[]): (Buffer | undefined)[] => {
  const files = bytes.slice(0, -1)
  const checksums = bytes.at(-1)
  if (checksums === undefined) return files
  const names = [...runtime.files, ...runtime.optional]
  verifyChecksums(parseChecksums(checksums, dir + CHECKSUMS_FILE), new Map(names.map((name, i) => [name, files[i]])), dir)
  return files
}

/** The version's etags, its files' and its optional ones' ('-' for one absent); which files are present; the path a failure is of. */
type Stats = { etag: string; present: boolean[]; path: string }

/** Stats every file after the first into `stats`; rejects with the store's failure, `stats.path` naming its file. */
const statFiles = async (store: Store, { dir, runtime }: Found, stats: Stats): Promise<void> => {
  for (const file of runtime.files.slice(1)) {
    stats.path = dir + file
    stats.etag += ` ${(await store.stat(stats.path)).etag}`
  }
  for (const file of optionalFiles(runtime)) {
    stats.path = dir + file
    const stat = await statIfPresent(store, stats.path)
    stats.present.push(stat !== undefined)
    stats.etag += ` ${stat?.etag ?? '-'}`
  }
}

/** Every file's bytes, an absent optional one undefined; rejects as `statFiles` does. */
const readFiles = async (store: Store, { dir, runtime }: Found, stats: Stats): Promise<(Buffer | undefined)[]> => {
  const files = [...runtime.files, ...optionalFiles(runtime)]
  const bytes: (Buffer | undefined)[] = []
  for (let i = 0; i < files.length; i++) {
    stats.path = dir + (files[i] as string)
    bytes.push(stats.present[i] === true ? await store.read(stats.path) : undefined)
  }
  return bytes
}

/** What serves a version: the description just read, and its runtime's predictor for it. */
const serve = async (runtime: Runtime, model: ModelVersion, payload: unknown): Promise<ServedModel> =>
  Object.freeze({ name: model.name, version: model.version, model, predictor: await runtime.load(model, payload) })

/** A version's files described by its runtime, checked against its path, and loaded unless `previous` serves the same build. */
const build = async (
  source: Source,
  name: string,
  { version, runtime, path }: Found,
  bytes: readonly (Buffer | undefined)[],
  previous: RegistryState,
): Promise<LoadOutcome<ServedModel>> => {
  try {
    const { model, payload } = runtime.read(bytes, { name, version })
    checkPlace(model, name, version)
    // Read again with the same content (touched, or its manifest came back): nothing to load or swap.
    return succeeded(sameBuild(previous, model) ?? (await serve(runtime, model, payload)))
  } catch (error: unknown) {
    return error instanceof ArtifactError && error.code === 'SHA256_MISMATCH' ? unsigned(source, path, error) : refused(path, error)
  }
}

/** One version's outcome: the one kept for its files' etags, else its files read and built. */
const readVersion = async (source: Source, name: string, version: string, previous: RegistryState): Promise<VersionRead> => {
  const found = await findRuntime(source, `${name}/${version}/`, version)
  if ('outcome' in found) return found
  const { runtime, path } = found
  const stats: Stats = { etag: found.etag, present: runtime.files.map(() => true), path }
  let bytes: (Buffer | undefined)[]
  try {
    await statFiles(source.store, found, stats)
    const seen = previous.versions.get(path)
    if (seen?.etag === stats.etag) return { path, version, runtime, ...seen }
    bytes = await readFiles(source.store, found, stats)
  } catch (error: unknown) {
    return { path, etag: undefined, outcome: storeFailure(stats.path, error), version, runtime }
  }
  try {
    bytes = verified(found, bytes)
  } catch (error: unknown) {
    // Kept for its etags, as a wrong sha256 is: the same bytes fail the same way on the next pass.
    // Its message names the file and both hashes, relative to the store: no host or directory.
    return { path, etag: stats.etag, outcome: failed({ reason: errorMessage(error), detail: undefined }), version, runtime }
  }
  return { path, etag: stats.etag, outcome: await build(source, name, found, bytes, previous), version, runtime }
}

const readModel = async (source: Source, name: string, previous: RegistryState): Promise<ModelRead> => {
  const platform = (source.runtimes[0] as Runtime).platform
  const manifest = await readManifest(source, name, previous)
  if (!manifest.outcome.ok) return { name, manifest, versions: [], platform }
  const versions = await Promise.all(manifest.outcome.value.versions.map((version) => readVersion(source, name, version, previous)))
  return { name, manifest, versions, platform }
}

/** What the store holds now, read against what `previous` already read; never rejects. */
export const readSnapshot = async (source: Source, previous: RegistryState): Promise<Snapshot> => {
  let scan: StoreScan
  try {
    scan = await scanStore(source.store)
  } catch (error: unknown) {
    const { code, message } = storeErrorOf(error)
    return failed({ store: source.store.description, code, message })
  }
  // The pass stats every file as of its scan: for S3, one listing rather than a request a file.
  const pass: Source = { runtimes: source.runtimes, store: { ...source.store, stat: scan.stat } }
  const isListed = new Set(scan.models)
  return succeeded(
    await mapLimited(modelNames(scan.models, previous), MODELS_AT_ONCE, async (name) => {
      const read = await readModel(pass, name, previous)
      return isListed.has(name) ? read : { ...read, isUnlisted: true as const }
    }),
  )
}
