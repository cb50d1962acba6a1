// A directory of artifacts: the shipped ones, or a volume the deployment mounts. Every path is
// resolved through its symlinks and must still lie under the root's own resolved path: a link
// inside the store may point within it (`iris/current -> 2`), never out of it (`iris -> /etc`).
// The root is resolved on every call, so a root that is itself a link swapped on deploy
// (`/srv/models/current -> releases/42`) is followed. This guards against mistakes, not against
// someone who can write to the store and so can already replace the models themselves. Writes,
// under a lock per file: directory-write.ts.
import type { BigIntStats } from 'node:fs'
import { readdir, readFile, realpath, stat } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { errorCode } from '../../core/errors.js'
import { describeError } from '../../core/net/describe-error.js'
import { createDirectoryWrite } from './directory-write.js'
import type { LockOptions } from './directory-lock.js'
import { StoreError, storeErrorOf } from './error.js'
import { checkPath, isSegment } from './path.js'
import type { Store, StoreStat } from './store.js'

export type DirectoryStoreOptions = Readonly<{ maxBytes: number; lock?: LockOptions }>

/**
 * ETag: inode, mtime in nanoseconds and size, in the spirit of nginx's mtime-size. One stat call
 * and no read, where a content hash would read every artifact on every poll. A file replaced by
 * rename (a new inode) changes it even when mtime and size are kept, as `cp -p`, `rsync -t` and tar
 * keep them; a change it misses needs the same inode, size and nanosecond.
 */
const etagOf = (info: { ino: bigint; mtimeNs: bigint; size: bigint }): string =>
  `"${info.ino.toString(16)}-${info.mtimeNs.toString(16)}-${info.size.toString(16)}"`

const storeStatOf = (info: BigIntStats): StoreStat => ({ size: Number(info.size), mtimeMs: Number(info.mtimeMs), etag: etagOf(info) })

const isMissing = (error: unknown): boolean => {
  const code = errorCode(error)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

export const createDirectoryStore = (root: string, { maxBytes, lock = {} }: DirectoryStoreOptions): Store => {
  /** Runs the file system calls for `path`, turning whatever they throw into a StoreError. */
  const guarded = async <T>(path: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work()
    } catch (error: unknown) {
      if (error instanceof StoreError) throw error
      throw isMissing(error)
        ? new StoreError('NOT_FOUND', `${join(root, path)} not found`, { cause: error })
        : new StoreError('UNREADABLE', `${join(root, path)} cannot be read: ${describeError(error)}`, { cause: error })
    }
  }

  /** The file's resolved path and stat, checked to lie under the resolved root and to be a file. */
  const locate = async (path: string) => {
    const segments = checkPath(path)
    const [realRoot, file] = await Promise.all([realpath(root), realpath(join(root, ...segments))])
    const inside = relative(realRoot, file)
    if (inside === '..' || inside.startsWith(`..${sep}`)) throw new StoreError('INVALID_PATH', `${join(root, path)} links to outside the store at ${root}`)
    const info = await stat(file, { bigint: true })
    // Only regular files are artifacts; a directory is NOT_FOUND, as an artifact server's 404.
    if (!info.isFile()) throw new StoreError('NOT_FOUND', `${join(root, path)} is not a file`)
    return { file, info }
  }

  const statOf = (path: string): Promise<StoreStat> =>
    guarded(path, async () => {
      const { info } = await locate(path)
      return storeStatOf(info)
    })

  /** A model is a directory entry with a manifest.json (a link to one inside the store counts). */
  const isModel = async (name: string): Promise<boolean> => {
    if (!isSegment(name)) return false
    try {
      await statOf(`${name}/manifest.json`)
      return true
    } catch (error: unknown) {
      // No manifest, or a link out of the store: not a model. An unreadable manifest is reported.
      const { code } = storeErrorOf(error)
      if (code === 'NOT_FOUND' || code === 'INVALID_PATH') return false
      throw error
    }
  }

  return {
    description: root,
    list: async () => {
      const names = await guarded('.', () => readdir(root))
      const isModelEach = await Promise.all(names.map(isModel))
      return names.filter((_, i) => isModelEach[i]).sort()
    },
    read: (path) =>
      guarded(path, async () => {
        const { file, info } = await locate(path)
        if (info.size > maxBytes) throw new StoreError('TOO_LARGE', `${join(root, path)} is ${info.size} bytes, over the limit of ${maxBytes}`)
        return readFile(file)
      }),
    stat: statOf,
    write: createDirectoryWrite(root, { statOf: storeStatOf, lock }),
  }
}
