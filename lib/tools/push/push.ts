// `svc push`'s work, without the command line: a version's files from a directory into a store, then
// the version listed in its model's manifest (manifest.ts). Upload order is what makes a version
// appear whole: its runtime files, then checksums.json (store/checksums.ts: each file's sha256, which
// a load verifies), then the manifest, which is what makes the service load the version; a push cut
// short leaves files no manifest names, and the same push run again completes it.
//
// A version is immutable. Each file is written only where there is none (`ifNoneMatch: '*'`); one
// already there with the same bytes is "unchanged", so a push run twice exits 0 having written
// nothing the second time. Anything else is refused before the first write, from a stat of every file
// a version of any runtime may hold: a file with other bytes, or one this push does not carry (a
// profile.json stored, none in DIR; a model.json stored beside the model.onnx pushed), since either
// would serve a version other than DIR's. A writer racing this one can still land a file between the
// check and the write: its bytes are compared then, and a difference stops the push there.
import { join } from 'node:path'
import { errorMessage } from '../../core/errors.js'
import { servedRuntimes } from '../../models/registry/runtimes.js'
import type { Runtime } from '../../models/runtime.js'
import { CHECKSUMS_FILE, formatChecksums } from '../../models/store/checksums.js'
import { StoreError } from '../../models/store/error.js'
import { parseManifest } from '../../models/store/manifest.js'
import { isSegment } from '../../models/store/path.js'
import type { Store } from '../../models/store/store.js'
import { PushError } from './errors.js'
import { readVersionDir } from './local.js'
import { DEFAULT_RETRY, listVersion, type RetryOptions } from './manifest.js'

export type PushOptions = Readonly<{
  /** The version's directory, as given: for messages too. */
  dir: string
  model: string
  version: string
  /** The manifest's compare-and-swap; DEFAULT_RETRY. */
  retry?: RetryOptions
}>

export type PushIo = Readonly<{ stdout: (text: string) => void; stderr: (text: string) => void }>

/** The runtimes the service serves with, in its order (a tool's: no worker pool); `read` starts none of them. */
const RUNTIMES: readonly Runtime[] = servedRuntimes({ onnxThreads: 1 })

/** Every file a version of any runtime may hold, and checksums.json. */
const VERSION_FILES: readonly string[] = [...new Set([...RUNTIMES.flatMap((runtime) => [...runtime.files, ...runtime.optional]), CHECKSUMS_FILE])]

/** Why `version` cannot be listed in a manifest, or undefined: parseManifest judges, as the registry will. */
const versionProblem = (version: string): string | undefined => {
  try {
    parseManifest(Buffer.from(JSON.stringify({ default_version: version })))
    return undefined
  } catch (error: unknown) {
    return errorMessage(error).replace(/^default_version: /, '')
  }
}

/** What a stored file is to this push: not there, there with this push's bytes, or there otherwise. */
type Found = 'absent' | 'same' | 'different'

/** Compares a stored file with `bytes`, reading it only when its size is theirs. */
const compare = async (store: Store, path: string, bytes: Buffer | undefined): Promise<Found> => {
  let size: number
  try {
    size = (await store.stat(path)).size
  } catch (error: unknown) {
    if (error instanceof StoreError && error.code === 'NOT_FOUND') return 'absent'
    throw error
  }
  return bytes !== undefined && size === bytes.length && (await store.read(path)).equals(bytes) ? 'same' : 'different'
}

/**
 * Pushes DIR's version of `model` to `store`, saying on `io` what it uploaded and what it left;
 * rejects with a PushError (its code's exit status, errors.ts) or the store's StoreError.
 */
export const pushVersion = async (store: Store, { dir, model, version, retry = DEFAULT_RETRY }: PushOptions, io: PushIo): Promise<void> => {
  if (!isSegment(model))
    throw new PushError(
      'INVALID_ARGUMENTS',
      `model ${JSON.stringify(model)}: a model's name is one path segment, without "/", "\\" or control characters, not "." or ".."`,
    )
  const problem = versionProblem(version)
  if (problem !== undefined) throw new PushError('INVALID_ARGUMENTS', `version ${JSON.stringify(version)}: ${problem}`)
  const local = await readVersionDir(dir, { name: model, version }, RUNTIMES)
  for (const note of local.notes) io.stderr(`svc push: ${note}\n`)
  if (local.ignored.length > 0) {
    const holds = [...local.runtime.files, ...local.runtime.optional].join(', ')
    io.stderr(`svc push: not uploaded, since a version holds only ${holds}: ${local.ignored.map((name) => join(dir, name)).join(', ')}\n`)
  }
  const uploads = new Map(local.files).set(CHECKSUMS_FILE, formatChecksums(local.files))

  const prefix = `${model}/${version}/`
  const exists = (what: string): PushError =>
    new PushError(
      'VERSION_EXISTS',
      `${model} version ${version} already exists in ${store.description} with ${what}; a version is immutable: push it as a new version`,
    )
  const found = await Promise.all(VERSION_FILES.map((name) => compare(store, prefix + name, uploads.get(name))))
  for (const [i, name] of VERSION_FILES.entries())
    if (found[i] === 'different') throw exists(uploads.has(name) ? `a different ${name}` : `a ${name}, which ${dir} does not hold`)

  for (const [name, bytes] of uploads) {
    const path = prefix + name
    let isWritten = found[VERSION_FILES.indexOf(name)] === 'absent'
    if (isWritten) {
      try {
        await store.write(path, bytes, { ifNoneMatch: '*' })
      } catch (error: unknown) {
        if (!(error instanceof StoreError && error.code === 'PRECONDITION_FAILED')) throw error
        // Another writer's, since the check: the same bytes are this push's file, any other a conflict.
        if ((await compare(store, path, bytes)) !== 'same') throw exists(`a different ${name}, written while this push ran`)
        isWritten = false
      }
    }
    io.stdout(`${isWritten ? 'uploaded' : 'unchanged'} ${path} (${bytes.length} bytes)\n`)
  }

  const { isAdded, manifest } = await listVersion(store, model, version, retry)
  const state = `versions: ${manifest.versions.join(', ')}; default ${manifest.defaultVersion}`
  io.stdout(
    isAdded
      ? `added version ${version} to ${model}/manifest.json in ${store.description} (${state})\n`
      : `version ${version} already listed in ${model}/manifest.json in ${store.description} (${state})\n`,
  )
}
