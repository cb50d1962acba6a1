// The payload log as a file of JSON lines, one event a line, for a collector on the host (vector,
// fluent-bit) to tail. Appended through fs.promises, one write(2) a batch and one in flight (the
// writer awaits each), so the loop never waits on the disk. Rotated by size: past `maxBytes` the file becomes `<path>.1`, each
// `<path>.i` becomes `<path>.(i+1)`, and `<path>.N` is overwritten, so N rotated files are kept. Only
// a regular file is rotated: a device (/dev/null, /dev/full, a FIFO) is written and never renamed.
// A write that fails closes the file, so the next one opens it again: a file moved or deleted under
// it, or a directory made writable again, is picked up without a restart.
import { type FileHandle, open, rename } from 'node:fs/promises'
import { errorCode } from '../../core/errors.js'
import type { Sink } from './sink.js'

/**
 * How long an event waits for its batch: a tenth of a second, well inside the second a collector
 * may wait, gathers a busy service's events into writes of up to MAX_BATCH, so the per-write costs
 * (the timer, the promises, the write(2) in the thread pool) are paid once per batch, not per event.
 */
export const FILE_LINGER_MS = 100

export type FileSinkOptions = Readonly<{ path: string; maxBytes: number; files: number }>

/** Renames `from` to `to`; a rotated file not there yet is no failure. */
const shift = async (from: string, to: string): Promise<void> => {
  try {
    await rename(from, to)
  } catch (error: unknown) {
    if (errorCode(error) !== 'ENOENT') throw error
  }
}

/** Writes all of `bytes`: one write(2) for a regular file, more only when the kernel takes less. */
const writeAll = async (handle: FileHandle, bytes: Buffer): Promise<void> => {
  for (let offset = 0; offset < bytes.length; ) offset += (await handle.write(bytes, offset)).bytesWritten
}

export const createFileSink = ({ path, maxBytes, files }: FileSinkOptions): Sink => {
  let file: Readonly<{ handle: FileHandle; isRegular: boolean }> | undefined
  let size = 0

  const opened = async (): Promise<Readonly<{ handle: FileHandle; isRegular: boolean }>> => {
    if (file !== undefined) return file
    const handle = await open(path, 'a')
    const stat = await handle.stat()
    size = stat.size
    file = { handle, isRegular: stat.isFile() }
    return file
  }

  const close = async (): Promise<void> => {
    const closing = file?.handle
    file = undefined
    await closing?.close().catch(() => {})
  }

  const rotate = async (): Promise<void> => {
    for (let i = files - 1; i >= 1; i--) await shift(`${path}.${i}`, `${path}.${i + 1}`)
    await rename(path, `${path}.1`)
    await close()
  }

  return {
    lingerMs: FILE_LINGER_MS,
    write: async (events) => {
      let text = ''
      for (const event of events) text += `${event}\n`
      const bytes = Buffer.from(text)
      try {
        // A batch larger than maxBytes still goes to a fresh file whole: an event is never split.
        if ((await opened()).isRegular && size > 0 && size + bytes.length > maxBytes) await rotate()
        await writeAll((await opened()).handle, bytes)
        size += bytes.length
      } catch (error: unknown) {
        await close()
        throw error
      }
    },
    close,
  }
}
