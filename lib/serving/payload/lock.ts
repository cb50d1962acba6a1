// One process per payload log file. Two processes appending to one path would rotate it from under
// each other: each renames `<path>` to `<path>.1` past its own count of the size, and one's rotation
// overwrites the files the other just shifted. So, at start, a process takes `<path>.lock` (created
// exclusively, O_EXCL, holding its pid); a second finds it, and while the pid it names is alive it
// refuses to start, as a bad variable does (exit 2), naming the path and the pid. The lock goes at
// exit, whatever the exit. A lock whose process is gone (SIGKILL, a power cut) is taken over: the pid
// is looked up with kill(pid, 0), so the lock holds among the processes of one host, or of one PID
// namespace (a container): processes of two containers sharing a volume need a file each.
// A device or a FIFO is never rotated, so is not locked. A lock that cannot be created (the directory
// missing or not writable) is not taken: every write would fail there too, counted and logged.
import { closeSync, lstatSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { errorCode } from '../../core/errors.js'
import { ConfigError, type PayloadTarget } from '../../config/config.js'

export type PayloadLock = Readonly<{
  path: string
  /** Removes the lock while it is still this process's; never throws. */
  release(): void
}>

/** The pid a lock file names; undefined when it names none, or cannot be read. */
const holderOf = (lockPath: string): number | undefined => {
  let pid: number
  try {
    pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10)
  } catch {
    return undefined
  }
  return pid > 0 ? pid : undefined
}

/** Whether process `pid` is alive: EPERM is a process of another user, alive all the same. */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error: unknown) {
    return errorCode(error) === 'EPERM'
  }
}

/** Creates `lockPath` holding `pid`; false when it exists. */
const create = (lockPath: string, pid: number): boolean => {
  let fd: number
  try {
    fd = openSync(lockPath, 'wx', 0o644)
  } catch (error: unknown) {
    if (errorCode(error) === 'EEXIST') return false
    throw error
  }
  writeSync(fd, `${pid}\n`)
  closeSync(fd)
  return true
}

const isRegularOrMissing = (path: string): boolean => {
  try {
    return lstatSync(path).isFile()
  } catch {
    return true
  }
}

/**
 * Takes the lock of a file target: undefined for a URL, a device or a FIFO, or where no lock can be
 * created. Throws a ConfigError when a live process holds it.
 */
export const lockPayloadLog = (target: PayloadTarget | undefined, pid = process.pid): PayloadLock | undefined => {
  if (target?.kind !== 'file' || !isRegularOrMissing(target.path)) return undefined
  const { path } = target
  const lockPath = `${path}.lock`
  // `force`: a lock already gone is no failure. The file was just read as this process's, in a
  // directory this process created it in, so nothing else is left to fail.
  const release = (): void => {
    if (holderOf(lockPath) === pid) rmSync(lockPath, { force: true })
  }
  const refused = (why: string): ConfigError =>
    new ConfigError([`SVC_PAYLOAD_LOG=${path} ${why}: give each process a file of its own (its lock, ${lockPath}, goes when the process exits)`])
  let isCreated: boolean
  try {
    isCreated = create(lockPath, pid)
  } catch {
    // ENOENT (no directory yet), EACCES, EROFS: no lock, and every write fails there too, counted.
    return undefined
  }
  if (!isCreated) {
    const holder = holderOf(lockPath)
    if (holder !== undefined && holder !== pid && isAlive(holder)) throw refused(`is in use by process ${holder}`)
    // Left by a process that is gone: removed, then taken, unless another process took it meanwhile.
    try {
      unlinkSync(lockPath)
    } catch {
      // Removed meanwhile by another process starting, or not a file: the create below says.
    }
    if (!create(lockPath, pid)) throw refused(`has a lock that cannot be taken over`)
  }
  return { path: lockPath, release }
}
