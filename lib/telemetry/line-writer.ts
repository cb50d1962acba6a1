// Buffered line output to a file descriptor. Lines gather in an array and go out as one string in
// one write per event-loop turn (or at once past the high-water mark), so logging never costs a
// syscall per line; `flush()` writes everything synchronously, which is what exit paths call.
// Joining once per flush measured cheapest per line (Node 24: ~125 ns/line, against ~320 ns for
// encoding each line into a reusable Buffer and ~400 ns for `+=` then Buffer.from).
// Once the reader is gone (EPIPE, EBADF) nothing can be written any more: the process carries on,
// and the lines lost are counted instead (`dropped()`, exposed as svc_log_lines_dropped_total).
import { writeSync } from 'node:fs'
import { errorCode } from '../core/errors.js'

export type LineWriter = Readonly<{
  /** Queues one line (one chunk); the caller ends it with its newline. */
  write(chunk: string): void
  flush(): void
  /** Lines lost since the reader went away: those of the write that failed, and every one since. */
  dropped(): number
}>

/** `fs.writeSync`'s two forms: a whole string, or bytes from an offset. */
export type WriteSync = {
  (fd: number, text: string): number
  (fd: number, bytes: Buffer, offset: number, length: number): number
}

const HIGH_WATER_MARK = 64 * 1024
const EAGAIN_PAUSE = new Int32Array(new SharedArrayBuffer(4))

export const createLineWriter = (fd: number, write: WriteSync = writeSync, highWaterMark = HIGH_WATER_MARK): LineWriter => {
  const pending: string[] = []
  let pendingLength = 0
  let isScheduled = false
  let isBroken = false
  let dropped = 0

  /** Runs one write, retrying a full non-blocking pipe: the bytes written, 0 once the reader is gone. */
  const attempt = (once: () => number): number => {
    for (;;) {
      try {
        return once()
      } catch (error: unknown) {
        // A full non-blocking pipe: wait a moment for the reader rather than drop lines.
        if (errorCode(error) === 'EAGAIN') Atomics.wait(EAGAIN_PAUSE, 0, 0, 1)
        else {
          // The reader is gone (EPIPE, EBADF): nothing can be written any more.
          isBroken = true
          return 0
        }
      }
    }
  }

  const flush = (): void => {
    isScheduled = false
    if (pending.length === 0) return
    const text = pending.join('')
    let written = attempt(() => write(fd, text))
    if (!isBroken && (written < text.length || written !== Buffer.byteLength(text))) {
      // A partial write (pipes, sockets): continue from the byte where it stopped.
      const bytes = Buffer.from(text)
      while (written < bytes.length && !isBroken) written += attempt(() => write(fd, bytes, written, bytes.length - written))
    }
    // Lines are cleared after the write, not before, so a failed one can tell which did not go out.
    if (isBroken) dropped += unwritten(pending, written)
    pending.length = 0
    pendingLength = 0
  }

  return {
    write(chunk) {
      if (isBroken) {
        dropped++
        return
      }
      pending.push(chunk)
      pendingLength += chunk.length
      if (pendingLength >= highWaterMark) flush()
      else if (!isScheduled) {
        isScheduled = true
        setImmediate(flush)
      }
    },
    flush,
    dropped: () => dropped,
  }
}

/** How many of `lines` did not go out whole, when only the first `written` bytes of their text did. */
const unwritten = (lines: readonly string[], written: number): number => {
  let whole = 0
  let end = 0
  for (const line of lines) {
    end += Buffer.byteLength(line)
    if (end > written) break
    whole++
  }
  return lines.length - whole
}
