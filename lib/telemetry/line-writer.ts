// Buffered line output to a file descriptor. Lines gather in an array and go out as one string in
// one write per event-loop turn (or at once past the high-water mark), so logging never costs a
// syscall per line; `flush()` writes everything synchronously, which is what exit paths call.
// Joining once per flush measured cheapest per line (Node 24: ~125 ns/line, against ~320 ns for
// encoding each line into a reusable Buffer and ~400 ns for `+=` then Buffer.from).
import { writeSync } from 'node:fs'

export type LineWriter = Readonly<{
  write(chunk: string): void
  flush(): void
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

  /** Runs one write, retrying a full non-blocking pipe; false once the reader is gone. */
  const attempt = (once: () => number): number => {
    for (;;) {
      try {
        return once()
      } catch (error: unknown) {
        // A full non-blocking pipe: wait a moment for the reader rather than drop lines.
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') Atomics.wait(EAGAIN_PAUSE, 0, 0, 1)
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
    pending.length = 0
    pendingLength = 0
    const written = attempt(() => write(fd, text))
    if (isBroken || (written >= text.length && written === Buffer.byteLength(text))) return
    // A partial write (pipes, sockets): continue from the byte where it stopped.
    const bytes = Buffer.from(text)
    for (let offset = written; offset < bytes.length && !isBroken; ) offset += attempt(() => write(fd, bytes, offset, bytes.length - offset))
  }

  return {
    write(chunk) {
      if (isBroken) return
      pending.push(chunk)
      pendingLength += chunk.length
      if (pendingLength >= highWaterMark) flush()
      else if (!isScheduled) {
        isScheduled = true
        setImmediate(flush)
      }
    },
    flush,
  }
}
