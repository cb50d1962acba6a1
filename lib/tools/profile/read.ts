// A file's records, streamed: the file is read in chunks, decoded as UTF-8 (a leading byte-order
// mark dropped) and pushed through a parser (csv.ts, ndjson.ts), so a training set of any size
// costs only what the profile keeps of it. Every failure comes out as a ProfileInputError naming
// the file, and the line when there is one: a parser's or a visitor's LineError, invalid UTF-8 (at
// the line of its first bad byte), and a file that cannot be read at all.
import { createReadStream } from 'node:fs'
import { errorCode } from '../../core/errors.js'
import { decodeUtf8 } from '../../core/utf8.js'
import { LineError, ProfileInputError } from './errors.js'

export type Parser<R> = Readonly<{ push(text: string): readonly R[]; end(): readonly R[] }>

/** Bytes read at a time. */
export const CHUNK_BYTES = 1 << 20

const LF = 0x0a

/** How many bytes at the end of `bytes` begin a UTF-8 sequence that the next chunk completes. */
const incompleteTail = (bytes: Buffer): number => {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number
    if (byte >= 0x80 && byte < 0xc0) continue // a continuation byte: its lead is further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? back : 0
  }
  return 0
}

/** The index of the first byte of `bytes` that is not valid UTF-8: where decoding with replacement first differs. */
const firstInvalidByte = (bytes: Buffer): number => {
  const again = Buffer.from(bytes.toString('utf8'), 'utf8')
  let i = 0
  while (bytes[i] === again[i]) i++
  return i
}

const countLineFeeds = (bytes: Buffer, end: number): number => {
  let count = 0
  for (let i = bytes.indexOf(LF); i !== -1 && i < end; i = bytes.indexOf(LF, i + 1)) count++
  return count
}

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'is a directory, not a file',
  EACCES: 'cannot be read: permission denied',
}

/** A file system error (it has a code) as the reason a file cannot be read. */
const unreadable = (file: string, error: unknown): ProfileInputError => {
  const code = String(errorCode(error))
  return new ProfileInputError(file, undefined, REASONS[code] ?? `cannot be read (${code})`)
}

/**
 * Streams `path` through `parser` and hands every record to `visit`, waiting for it only when it
 * returns a promise. `file` is how messages name the file.
 */
export const readRecords = async <R>(
  path: string,
  file: string,
  parser: Parser<R>,
  visit: (record: R) => void | Promise<void>,
  chunkBytes = CHUNK_BYTES,
): Promise<void> => {
  let lineFeeds = 0
  let isFirst = true
  const decode = (bytes: Buffer): string => {
    let text: string
    try {
      // Each chunk keeps what it starts with: only the file's first text may begin with the mark.
      text = decodeUtf8(bytes, true)
    } catch {
      throw new ProfileInputError(file, lineFeeds + countLineFeeds(bytes, firstInvalidByte(bytes)) + 1, 'not UTF-8 text')
    }
    lineFeeds += countLineFeeds(bytes, bytes.length)
    // The first text decoded, which a small chunk can leave empty, may start with the mark.
    if (isFirst && text !== '') {
      isFirst = false
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    return text
  }
  const each = async (records: readonly R[]): Promise<void> => {
    for (const record of records) {
      const visited = visit(record)
      if (visited instanceof Promise) await visited
    }
  }
  try {
    let carry: Buffer | undefined
    const stream = createReadStream(path, { highWaterMark: chunkBytes })
    const chunks = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
    try {
      for (;;) {
        let next: IteratorResult<Buffer>
        try {
          next = await chunks.next()
        } catch (error: unknown) {
          throw unreadable(file, error)
        }
        if (next.done === true) break
        const bytes = carry === undefined ? next.value : Buffer.concat([carry, next.value])
        const cut = bytes.length - incompleteTail(bytes)
        carry = cut === bytes.length ? undefined : bytes.subarray(cut)
        await each(parser.push(decode(bytes.subarray(0, cut))))
      }
    } finally {
      stream.destroy()
    }
    if (carry !== undefined) decode(carry)
    await each(parser.end())
  } catch (error: unknown) {
    if (error instanceof LineError) throw new ProfileInputError(file, error.line, error.reason)
    throw error
  }
}
