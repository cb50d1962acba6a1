// The directory store's conditional write (store.ts `write`): the file's lock (directory-lock.ts),
// then the condition checked again under it, then the bytes in a temporary file beside the target
// (`<file>.<token>.tmp`), fsync'd, renamed over the target, and the directory fsync'd. A reader sees
// the old file or the new, never a mix, and after a crash the rename is on disk or not at all.
//
// Missing directories on the way (`iris/3/` for a new version) are made one at a time, each under
// one already resolved inside the root, so a link to outside the store is refused before anything
// is made through it. A target that is a link inside the store is written where it points, as
// `stat` reads it; one pointing nowhere is replaced, never followed out.
import type { BigIntStats } from 'node:fs'
import { mkdir, open, realpath, rename, rm, stat } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { describeError } from '../../core/net/describe-error.js'
import { acquireLock, type LockOptions, unless } from './directory-lock.js'
import { preconditionFailure, StoreError } from './error.js'
import { checkPath } from './path.js'
import type { Store, StoreStat, WriteCondition } from './store.js'

export type DirectoryWriteOptions = Readonly<{
  /** A file's StoreStat from its stat, as the store's `stat` reports it: the etag `ifMatch` names. */
  statOf: (info: BigIntStats) => StoreStat
  lock: LockOptions
}>

/** The file's stat, undefined where `stat` would say NOT_FOUND: nothing there, or not a file. */
const currentStat = async (file: string): Promise<BigIntStats | undefined> => {
  const info = await unless('ENOENT', stat(file, { bigint: true }), undefined)
  return info?.isFile() ? info : undefined
}

const holds = (condition: WriteCondition, etag: string | undefined): boolean => ('ifMatch' in condition ? etag === condition.ifMatch : etag === undefined)

/** Writes `bytes` to a new file at `path` and flushes them to disk. */
const writeSynced = async (path: string, bytes: Buffer): Promise<void> => {
  const handle = await open(path, 'wx')
  try {
    await handle.writeFile(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Flushes a directory's entries, so a rename in it survives a crash. */
const syncDirectory = async (dir: string): Promise<void> => {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export const createDirectoryWrite = (root: string, { statOf, lock }: DirectoryWriteOptions): Store['write'] => {
  /** The target's path on disk: its parents made and every step resolved under the resolved root. */
  const place = async (path: string, segments: readonly string[]): Promise<string> => {
    const realRoot = await realpath(root)
    const inside = (resolved: string): string => {
      const rel = relative(realRoot, resolved)
      if (rel === '..' || rel.startsWith(`..${sep}`)) throw new StoreError('INVALID_PATH', `${join(root, path)} links to outside the store at ${root}`)
      return resolved
    }
    let dir = realRoot
    for (const segment of segments.slice(0, -1)) {
      const next = join(dir, segment)
      await mkdir(next, { recursive: true })
      dir = inside(await realpath(next))
    }
    const file = join(dir, ...segments.slice(-1))
    // Nothing there yet, or a link pointing nowhere: the rename makes the file in its place.
    return inside(await unless('ENOENT', realpath(file), file))
  }

  return async (path, bytes, condition) => {
    const segments = checkPath(path)
    try {
      const file = await place(path, segments)
      const held = await acquireLock(file, lock)
      const temporary = `${file}.${held.token}.tmp`
      try {
        const seen = await currentStat(file)
        const etag = seen === undefined ? undefined : statOf(seen).etag
        if (!holds(condition, etag)) throw new StoreError('PRECONDITION_FAILED', `${join(root, path)} ${preconditionFailure(condition, etag)}`)
        await writeSynced(temporary, bytes)
        await held.check()
        await rename(temporary, file)
        await syncDirectory(dirname(file))
        return statOf(await stat(file, { bigint: true }))
      } finally {
        await rm(temporary, { force: true })
        await held.release()
      }
    } catch (error: unknown) {
      if (error instanceof StoreError) throw error
      throw new StoreError('UNREADABLE', `${join(root, path)} cannot be written: ${describeError(error)}`, { cause: error })
    }
  }
}
