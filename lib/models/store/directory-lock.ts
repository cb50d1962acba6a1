// The lock a directory store's writer holds on one file (directory-write.ts), possibly across hosts
// sharing the directory (NFS): `<file>.lock`, created exclusively (`wx`, O_EXCL), holding
// `{host, pid, token, until}`. Its holder commits only while `until` is at least `commitMarginMs`
// away (`check`); another writer breaks it only `staleMarginMs` after `until`, so a holder slower
// than its lock never commits over the next one's write. Together (40 s by default) the margins bound
// how far the clocks of the hosts may disagree: the times compared are wall clocks, hence NTP
// (lib/README.md §10).
//
// Breaking is a rename aside, a re-read of what was renamed, then its removal, or its return when it
// is not the lock judged stale (another writer broke that one and took a fresh lock meanwhile): a
// lock is never broken on the strength of a reading made before another writer could replace it.
// The return is a `link`, which fails rather than replace a lock a third writer took in between;
// that writer keeps it, and the one whose lock was taken aside finds it gone at `check`.
import { randomBytes } from 'node:crypto'
import { link, open, rename, rm } from 'node:fs/promises'
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { errorCode } from '../../core/errors.js'
import { isObject, parseJson } from '../../core/json.js'
import { StoreError } from './error.js'

export type LockOptions = Readonly<{
  /** Wall clock, ms since the epoch: `until` is written and judged by it. Date.now. */
  now?: () => number
  /** How long a lock lasts: its `until` is its creation plus this. 30 s. */
  lifetimeMs?: number
  /** A holder commits only while at least this much of its lock is left. 10 s. */
  commitMarginMs?: number
  /** Another writer breaks a lock only this long after its `until`. 30 s. */
  staleMarginMs?: number
  /** How long a writer waits for another's fresh lock before it gives up, LOCKED. 5 s. */
  waitMs?: number
}>

export type HeldLock = Readonly<{
  /** Random, this holding's own: it names the writer's temporary file too. */
  token: string
  /** Rejects LOCKED unless the lock is still this one, with `commitMarginMs` left: the last step before a commit. */
  check(): Promise<void>
  /** Removes the lock if it is still this one. Never rejects: a lock it cannot remove is broken once stale. */
  release(): Promise<void>
}>

/** A lock file as read: an unreadable one (its writer died between creating and writing it) has no token. */
type LockRecord = Readonly<{ token: string | undefined; until: number }>

/** A lock gone before it could be read: long expired, so breaking it finds nothing and starts over. */
const GONE: LockRecord = { token: undefined, until: -Infinity }

/** `work`'s result, or `fallback` when it failed with `code` (`ENOENT`, `EEXIST`): the races a writer expects. */
export const unless = async <T>(code: string, work: Promise<T>, fallback: T): Promise<T> => {
  try {
    return await work
  } catch (error: unknown) {
    if (errorCode(error) === code) return fallback
    throw error
  }
}

/** The writer's jitter between looks at a fresh lock, ms: short, as a write holds its lock for a few fsyncs. */
const pause = (): Promise<void> => sleep(5 + Math.random() * 20)

/** One writer's attempt at one file's lock: its options resolved, and the token its lock will hold. */
type Attempt = Readonly<Required<LockOptions> & { file: string; lockPath: string; token: string }>

/** What the lock at `path` says; an unparsable one lasts `lifetimeMs` from its mtime. */
const readLock = async (path: string, lifetimeMs: number): Promise<LockRecord> => {
  const handle = await unless('ENOENT', open(path, 'r'), undefined)
  if (handle === undefined) return GONE
  try {
    const [text, info] = await Promise.all([handle.readFile('utf8'), handle.stat()])
    try {
      const record = parseJson(text)
      const { token, until } = isObject(record) ? record : {}
      if (typeof token === 'string' && typeof until === 'number') return { token, until }
    } catch {
      // Empty or cut short: judged by its mtime below.
    }
    return { token: undefined, until: info.mtimeMs + lifetimeMs }
  } finally {
    await handle.close()
  }
}

/** Creates the lock as this attempt's, returning its `until`; undefined when there is one already. */
const create = async ({ lockPath, token, now, lifetimeMs }: Attempt): Promise<number | undefined> => {
  const handle = await unless('EEXIST', open(lockPath, 'wx'), undefined)
  if (handle === undefined) return undefined
  try {
    // `until` from the moment the lock exists, not from before the attempt.
    const until = now() + lifetimeMs
    await handle.writeFile(JSON.stringify({ host: hostname(), pid: process.pid, token, until }))
    return until
  } finally {
    await handle.close()
  }
}

/** Takes the stale lock `judged` aside and removes it, or puts back what was taken if it is another. */
const breakLock = async ({ lockPath, token, lifetimeMs }: Attempt, judged: LockRecord): Promise<void> => {
  const aside = `${lockPath}.${token}.broken`
  const isTaken = await unless(
    'ENOENT',
    rename(lockPath, aside).then(() => true),
    false,
  )
  if (!isTaken) return
  const taken = await readLock(aside, lifetimeMs)
  if (taken.token !== judged.token) await unless('EEXIST', link(aside, lockPath), undefined)
  await rm(aside, { force: true })
}

/** The lock an attempt took, lasting until `until`. */
const held = ({ file, lockPath, token, now, lifetimeMs, commitMarginMs }: Attempt, until: number): HeldLock => ({
  token,
  check: async () => {
    if (now() > until - commitMarginMs) {
      throw new StoreError(
        'LOCKED',
        `${file} was not written: its lock ${lockPath} ran out before the write could commit (it must have ${commitMarginMs / 1000} s left); try again`,
      )
    }
    if ((await readLock(lockPath, lifetimeMs)).token !== token) {
      throw new StoreError('LOCKED', `${file} was not written: its lock ${lockPath} was broken by another writer; try again`)
    }
  },
  // Read, then removed: between the two only a breaker could replace it, and it breaks a lock only
  // `staleMarginMs` after `until`, long after a holder that commits in time has released it.
  release: async () => {
    try {
      if ((await readLock(lockPath, lifetimeMs)).token === token) await rm(lockPath, { force: true })
    } catch {
      // Unreadable (a directory in its place, an I/O error): left to be broken once stale.
    }
  },
})

/** Takes `<file>.lock`: waits up to `waitMs` for a fresh lock, breaks a stale one; rejects LOCKED, or with a file system error. */
export const acquireLock = async (file: string, options: LockOptions = {}): Promise<HeldLock> => {
  const attempt: Attempt = {
    now: Date.now,
    lifetimeMs: 30_000,
    commitMarginMs: 10_000,
    staleMarginMs: 30_000,
    waitMs: 5000,
    ...options,
    file,
    lockPath: `${file}.lock`,
    token: randomBytes(16).toString('hex'),
  }
  const { lockPath, now, lifetimeMs, staleMarginMs } = attempt
  const deadline = performance.now() + attempt.waitMs
  for (;;) {
    const until = await create(attempt)
    if (until !== undefined) return held(attempt, until)
    const judged = await readLock(lockPath, lifetimeMs)
    if (now() > judged.until + staleMarginMs) {
      await breakLock(attempt, judged)
    } else {
      if (performance.now() >= deadline) {
        throw new StoreError(
          'LOCKED',
          `${file} is being written by another writer, whose lock ${lockPath} is fresh; ` +
            `try again (a lock left behind is broken ${staleMarginMs / 1000} s after its until)`,
        )
      }
      await pause()
    }
  }
}
