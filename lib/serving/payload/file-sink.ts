// The payload log as a file of JSON lines, one event a line, for a collector on the host (vector,
// fluent-bit) to tail. One write a batch and one in flight (the writer awaits each), so the loop
// never waits on the disk. Rotated by size: past `maxBytes` the file becomes `<path>.1`, each
// `<path>.i` becomes `<path>.(i+1)`, and `<path>.N` is overwritten, so N rotated files are kept (a
// rotation that failed part way is finished by the next without losing a file). Only
// a regular file is rotated: a device (/dev/null, /dev/full, a FIFO) is written and never renamed.
// A write that fails closes the file, so the next one opens it again: a file moved or deleted under
// it, or a directory made writable again, is picked up without a restart.
//
// A write never holds anything past its timeout (the writer's `signal`):
// - A FIFO (or a socket) is opened non-blocking and written as a stream on the loop, never from the
//   thread pool: a reader that stops reading fills the pipe, the write times out, and destroying the
//   stream frees everything. Opened without a reader, it fails at once (ENXIO), where a blocking
//   open would wait in the pool for one. A write(2) that blocks in a pool thread would hold that
//   thread, and Node's exit joins the pool's threads: the process would never end (measured, Node 20).
// - A regular file, or a device, is written through the thread pool, where a disk that stops
//   answering (an NFS hard mount whose server is gone) keeps the call in the kernel. Past its timeout
//   the call is abandoned: the batch fails, the file is closed only once the call returns (a close
//   would wait for it, in a second pool thread), and, until it returns, every batch fails at once
//   (`disk not answering`) without another call, so a dead disk holds one of the pool's four
//   threads, never more. Such a call can still hold the process's exit: README says so.
import { close as closeFd, constants, fstat, lstat, open as openFd, rename, type Stats, write as writeFd } from 'node:fs'
import { Socket } from 'node:net'
import { promisify } from 'node:util'
import { errorCode } from '../../core/errors.js'
import { type Frame, lengthOf, type Sink, SinkError } from './sink.js'

/**
 * How long an event waits for its batch: a tenth of a second, well inside the second a collector
 * may wait, gathers a busy service's events into writes of up to MAX_BATCH, so the per-write costs
 * (the timer, the promises, the write(2) in the thread pool) are paid once per batch, not per event.
 */
export const FILE_LINGER_MS = 100

/** One event a line. */
const LINES: Frame = { open: '', separator: '\n', close: '\n' }

export type FileSinkOptions = Readonly<{ path: string; maxBytes: number; files: number }>

const openAsync = promisify(openFd)
const fstatAsync = promisify(fstat)
const renameAsync = promisify(rename)
const lstatAsync = promisify(lstat)
const writeAsync = promisify(writeFd)
const closeAsync = promisify(closeFd)

/** Append, create, and never block: O_NONBLOCK changes nothing for a regular file, and opens a FIFO without a reader at once (ENXIO). */
const OPEN_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK

/** Opens `path` and reads what it is: one call, abandoned whole. fstat(2) of a descriptor just opened has nothing left to fail on. */
const openWithStat = async (path: string): Promise<Readonly<{ fd: number; stat: Stats }>> => {
  const fd = await openAsync(path, OPEN_FLAGS, 0o666)
  return { fd, stat: await fstatAsync(fd) }
}

/** Closes `fd`, whatever comes of it: nothing is left to do for a descriptor that will not close. */
const closer = (fd: number) => (): void => void closeAsync(fd).catch(() => {})

/** What a failed batch says while an abandoned call into the thread pool has not returned. */
export const DISK_NOT_ANSWERING = 'disk not answering'

type OpenFile = Readonly<{ fd: number; isRegular: boolean; stream: Socket | undefined }>

/** Writes `pieces` to a stream, rejecting with its error (EPIPE: the reader went away) or at `signal`'s abort, which destroys it. */
const streamWrite = (stream: Socket, pieces: readonly Buffer[], signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const abort = (): void => {
      stream.destroy()
      reject(signal.reason)
    }
    signal.addEventListener('abort', abort, { once: true })
    // The last piece's callback comes once all are out, or with the error that stopped the stream.
    const done = (error: Error | null | undefined): void => {
      signal.removeEventListener('abort', abort)
      if (error instanceof Error) reject(error)
      else resolve()
    }
    const last = pieces.length - 1
    for (const [i, piece] of pieces.entries()) stream.write(piece, i === last ? done : undefined)
  })

/** A FIFO's or a socket's descriptor as a stream on the loop; its errors reach the write they fail. */
const streamOf = (fd: number): Socket => new Socket({ fd, readable: false, writable: true }).on('error', () => {})

/**
 * Calls into the thread pool that a timeout abandons: the one abandoned last is `stuck` until it
 * returns: the sink makes no call while one is, so a dead disk holds one pool thread, never more.
 */
type Pool = {
  stuck: Promise<unknown> | undefined
  /** `call`, rejecting at `signal`'s abort; `late` gets what an abandoned call returns (an open's descriptor, to close). */
  run<T>(call: Promise<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T>
}

const createPool = (): Pool => {
  const pool: Pool = {
    stuck: undefined,
    run: <T>(call: Promise<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const abort = (): void => {
          const settled = (): void => {
            if (pool.stuck === call) pool.stuck = undefined
          }
          pool.stuck = call
          call.then(late, () => {}).then(settled)
          reject(signal.reason)
        }
        signal.addEventListener('abort', abort, { once: true })
        call.then(
          (value) => {
            signal.removeEventListener('abort', abort)
            resolve(value)
          },
          (error: unknown) => {
            signal.removeEventListener('abort', abort)
            reject(error)
          },
        )
      }),
  }
  return pool
}

/** Whether `name` exists: anything but ENOENT is a failure. */
const exists = (pool: Pool, name: string, signal: AbortSignal): Promise<boolean> =>
  pool.run(lstatAsync(name), signal).then(
    () => true,
    (error: unknown) => {
      if (errorCode(error) === 'ENOENT') return false
      throw error
    },
  )

/**
 * Shifts `<path>.1` … up to the first missing rotated file (`<path>.N` when none is missing, which is
 * overwritten), then the file to `<path>.1`. A rotation that failed part way left a gap: the next
 * fills it, and renames no file over another that was not already the oldest kept.
 */
const rotateFiles = async (pool: Pool, path: string, files: number, signal: AbortSignal): Promise<void> => {
  let gap = 1
  while (gap < files && (await exists(pool, `${path}.${gap}`, signal))) gap++
  for (let i = gap - 1; i >= 1; i--) await pool.run(renameAsync(`${path}.${i}`, `${path}.${i + 1}`), signal)
  await pool.run(renameAsync(path, `${path}.1`), signal)
}

/** Writes all of `pieces`: one write(2) a piece for a regular file, more only when the kernel takes less. */
const writeAll = async (pool: Pool, open: OpenFile, pieces: readonly Buffer[], signal: AbortSignal): Promise<void> => {
  if (open.stream !== undefined) return streamWrite(open.stream, pieces, signal)
  for (const bytes of pieces)
    for (let offset = 0; offset < bytes.length; )
      offset += (await pool.run(writeAsync(open.fd, bytes, offset, bytes.length - offset, null), signal)).bytesWritten
}

export const createFileSink = ({ path, maxBytes, files }: FileSinkOptions): Sink => {
  let file: OpenFile | undefined
  let size = 0
  const pool = createPool()

  const opened = async (signal: AbortSignal): Promise<OpenFile> => {
    if (file !== undefined) return file
    const { fd, stat } = await pool.run(openWithStat(path), signal, (late) => closer(late.fd)())
    size = stat.size
    const isStream = stat.isFIFO() || stat.isSocket()
    file = { fd, isRegular: stat.isFile(), stream: isStream ? streamOf(fd) : undefined }
    return file
  }

  const close = async (): Promise<void> => {
    const closing = file
    file = undefined
    if (closing === undefined) return
    if (closing.stream !== undefined) return void closing.stream.destroy()
    // Closed once the abandoned call has returned: a close would wait for it, in another pool thread.
    if (pool.stuck !== undefined) return void pool.stuck.then(closer(closing.fd), closer(closing.fd))
    await closeAsync(closing.fd).catch(() => {})
  }

  const rotate = async (signal: AbortSignal): Promise<void> => {
    await rotateFiles(pool, path, files, signal)
    await close()
  }

  return {
    lingerMs: FILE_LINGER_MS,
    frame: LINES,
    write: async (pieces, signal) => {
      if (pool.stuck !== undefined) throw new SinkError('SINK_FAILED', DISK_NOT_ANSWERING)
      const length = lengthOf(pieces)
      try {
        // A batch larger than maxBytes still goes to a fresh file whole: an event is never split.
        if ((await opened(signal)).isRegular && size > 0 && size + length > maxBytes) await rotate(signal)
        await writeAll(pool, await opened(signal), pieces, signal)
        size += length
      } catch (error: unknown) {
        await close()
        throw error
      }
    },
    close,
  }
}
