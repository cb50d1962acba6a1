// Buffered line output to a file descriptor. Lines gather in memory and go out in one write per
// event-loop turn (or at once past the high-water mark), so logging never costs a syscall per
// line; `flush()` writes everything synchronously, which is what exit paths call.
import { writeSync } from 'node:fs'

export type LineWriter = Readonly<{
  write(chunk: string): void
  flush(): void
}>

export type WriteSync = (fd: number, buffer: Buffer, offset: number) => number

const HIGH_WATER_MARK = 64 * 1024
const EAGAIN_PAUSE = new Int32Array(new SharedArrayBuffer(4))

export const createLineWriter = (fd: number, write: WriteSync = writeSync, highWaterMark = HIGH_WATER_MARK): LineWriter => {
  let pending = ''
  let isScheduled = false
  let isBroken = false

  const flush = (): void => {
    isScheduled = false
    if (pending === '' || isBroken) return
    const buffer = Buffer.from(pending)
    pending = ''
    let offset = 0
    while (offset < buffer.length) {
      try {
        offset += write(fd, buffer, offset)
      } catch (error: unknown) {
        const code = (error as NodeJS.ErrnoException).code
        // A non-blocking pipe that is full: wait a moment for the reader rather than drop lines.
        if (code === 'EAGAIN') Atomics.wait(EAGAIN_PAUSE, 0, 0, 1)
        else {
          // The reader is gone (EPIPE, EBADF): nothing can be written any more.
          isBroken = true
          return
        }
      }
    }
  }

  return {
    write(chunk) {
      if (isBroken) return
      pending += chunk
      if (pending.length >= highWaterMark) flush()
      else if (!isScheduled) {
        isScheduled = true
        setImmediate(flush)
      }
    },
    flush,
  }
}
