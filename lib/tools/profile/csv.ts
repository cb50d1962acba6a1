// CSV as RFC 4180 defines it, read incrementally: text is pushed in chunks of any size, split
// anywhere (inside a field, a quote pair or a CRLF), and whole records come out with the line each
// began on, so a message can name it.
//
//   - Fields are separated by `delimiter` (a comma unless told otherwise) and records by CRLF, LF
//     or a lone CR. A field that begins with `"` is quoted: it may hold delimiters, line breaks and
//     `""` for one quote, and the closing quote must be followed by a delimiter or a line break.
//   - Refused, with the line: a quote inside an unquoted field, anything but a delimiter or a line
//     break after a closing quote, a quoted field still open at the end of the text.
//   - An empty line (no character at all between two line breaks) is no record; the last line
//     needs no line break. Fields are kept exactly as written: no trimming.
//
// Whether every record has as many fields as the header is the reader's business (table.ts).
import { LineError } from './errors.js'

export type CsvRecord = Readonly<{ fields: readonly string[]; line: number }>

export type CsvParser = Readonly<{
  /** The records completed by this chunk. Throws LineError. */
  push(text: string): readonly CsvRecord[]
  /** The last record, when the text does not end with a line break. Throws LineError. */
  end(): readonly CsvRecord[]
}>

const QUOTE = 0x22
const CR = 0x0d
const LF = 0x0a

// Where the parser is: between fields, inside an unquoted or a quoted one, or just after a quote
// inside a quoted one.
const FIELD_START = 0
const UNQUOTED = 1
const QUOTED = 2
const QUOTE_IN_QUOTED = 3

export const createCsvParser = (delimiter = ','): CsvParser => {
  const separator = delimiter.charCodeAt(0)
  let state: number = FIELD_START
  let fields: string[] = []
  let field = ''
  /** The line the character being read is on. */
  let line = 1
  /** The line the record being read began on; 0 between records. */
  let recordLine = 0
  /** The line the open quoted field began on. */
  let quoteLine = 0
  /** The previous character was a CR: an LF now completes that line break. */
  let isAfterCr = false
  let out: CsvRecord[] = []

  const endRecord = (): void => {
    fields.push(field)
    out.push({ fields, line: recordLine })
    fields = []
    field = ''
    recordLine = 0
    state = FIELD_START
  }

  /** A line break outside a quoted field at `c` (CR or LF): ends the record, if one began. */
  const lineBreak = (c: number): void => {
    const isSecondHalf = c === LF && isAfterCr
    isAfterCr = c === CR
    if (isSecondHalf) return
    line++
    if (recordLine !== 0) endRecord()
  }

  const push = (text: string): readonly CsvRecord[] => {
    out = []
    const length = text.length
    let i = 0
    while (i < length) {
      const c = text.charCodeAt(i)
      if (state === FIELD_START || state === UNQUOTED) {
        if (c === CR || c === LF) {
          lineBreak(c)
          i++
          continue
        }
        isAfterCr = false
        if (recordLine === 0) recordLine = line
        if (c === separator) {
          fields.push(field)
          field = ''
          state = FIELD_START
          i++
          continue
        }
        if (c === QUOTE) {
          if (state === UNQUOTED)
            throw new LineError(line, `a quote inside an unquoted field (field ${fields.length + 1}); quote the whole field and double the quote`)
          state = QUOTED
          quoteLine = line
          i++
          continue
        }
        // An unquoted run: up to the next delimiter, quote or line break.
        let j = i + 1
        while (j < length) {
          const d = text.charCodeAt(j)
          if (d === separator || d === QUOTE || d === CR || d === LF) break
          j++
        }
        field += text.slice(i, j)
        state = UNQUOTED
        i = j
      } else if (state === QUOTED) {
        // A quoted run: up to the next quote, counting the line breaks it holds.
        let j = i
        while (j < length) {
          const d = text.charCodeAt(j)
          if (d === QUOTE) break
          if (d === LF) {
            if (!isAfterCr) line++
            isAfterCr = false
          } else if (d === CR) {
            line++
            isAfterCr = true
          } else isAfterCr = false
          j++
        }
        field += text.slice(i, j)
        if (j < length) {
          state = QUOTE_IN_QUOTED
          isAfterCr = false
          j++
        }
        i = j
      } else {
        // After a quote inside a quoted field: a second quote is one quote; else the field ended.
        if (c === QUOTE) {
          field += '"'
          state = QUOTED
          i++
        } else if (c === separator || c === CR || c === LF) {
          state = UNQUOTED
        } else {
          throw new LineError(line, `expected ${describe(delimiter)} or a line break after the closing quote of field ${fields.length + 1}`)
        }
      }
    }
    return out
  }

  const end = (): readonly CsvRecord[] => {
    if (state === QUOTED) throw new LineError(quoteLine, `a quoted field (field ${fields.length + 1}) is never closed`)
    out = []
    if (recordLine !== 0) endRecord()
    return out
  }

  return { push, end }
}

const describe = (delimiter: string): string => (delimiter === '\t' ? 'a tab' : `"${delimiter}"`)
