// Artifacts held in memory, for tests: built from a path → content record, then changed with
// `put` and `remove` to stage what a hot reload must notice.
import { createHash } from 'node:crypto'
import { preconditionFailure, StoreError } from './error.js'
import { checkPath } from './path.js'
import type { Store, StoreStat } from './store.js'

export type MemoryStore = Store &
  Readonly<{
    /** Adds or replaces a file (a copy of `content`), with mtime now and a new etag if the content differs. */
    put(path: string, content: string | Buffer): void
    /** Deletes a file; a path that is not there is left alone. */
    remove(path: string): void
  }>

export type MemoryStoreOptions = Readonly<{ maxBytes?: number; now?: () => number }>

type Entry = Readonly<{ bytes: Buffer; stat: StoreStat }>

const DESCRIPTION = 'memory'
const MANIFEST = /^([^/]+)\/manifest\.json$/

export const createMemoryStore = (
  files: Readonly<Record<string, string | Buffer>> = {},
  { maxBytes = Infinity, now = Date.now }: MemoryStoreOptions = {},
): MemoryStore => {
  const entries = new Map<string, Entry>()

  const find = (path: string): Entry => {
    checkPath(path)
    const entry = entries.get(path)
    if (entry === undefined) throw new StoreError('NOT_FOUND', `${path} not found in ${DESCRIPTION}`)
    return entry
  }

  const put = (path: string, content: string | Buffer): void => {
    checkPath(path)
    const bytes = Buffer.from(content)
    // The etag is a content hash: nothing here has an inode, and a test's clock may stand still.
    const etag = `"${createHash('sha256').update(bytes).digest('base64url')}"`
    entries.set(path, { bytes, stat: Object.freeze({ size: bytes.length, mtimeMs: now(), etag }) })
  }

  for (const [path, content] of Object.entries(files)) put(path, content)

  return {
    description: DESCRIPTION,
    // Async like every store, so a caller's error handling is tested as it runs against the others.
    list: async () => [...entries.keys()].flatMap((path) => MANIFEST.exec(path)?.[1] ?? []).sort(),
    read: async (path) => {
      const { bytes } = find(path)
      if (bytes.length > maxBytes) throw new StoreError('TOO_LARGE', `${path} in ${DESCRIPTION} is ${bytes.length} bytes, over the limit of ${maxBytes}`)
      return Buffer.from(bytes)
    },
    stat: async (path) => find(path).stat,
    write: async (path, bytes, condition) => {
      checkPath(path)
      const seen = entries.get(path)?.stat.etag
      const holds = 'ifMatch' in condition ? seen === condition.ifMatch : seen === undefined
      if (!holds) throw new StoreError('PRECONDITION_FAILED', `${path} in ${DESCRIPTION} ${preconditionFailure(condition, seen)}`)
      put(path, bytes)
      return find(path).stat
    },
    put,
    remove: (path) => void entries.delete(path),
  }
}
