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

/** Where the parser is between one character and the next, across chunks; every field set at creation. */
type Cursor = {
  readonly delimiter: string
  readonly separator: number
  state: number
  fields: string[]
  field: string
  /** The line the character being read is on. */
  line: number
  /** The line the record being read began on; 0 between records. */
  recordLine: number
  /** The line the open quoted field began on. */
  quoteLine: number
  /** The previous character was a CR: an LF now completes that line break. */
  isAfterCr: boolean
  /** The records completed by the chunk being read. */
  out: CsvRecord[]
}

const endRecord = (p: Cursor): void => {
  p.fields.push(p.field)
  p.out.push({ fields: p.fields, line: p.recordLine })
  p.fields = []
  p.field = ''
  p.recordLine = 0
  p.state = FIELD_START
}

/** A line break outside a quoted field at `c` (CR or LF): ends the record, if one began. */
const lineBreak = (p: Cursor, c: number): void => {
  const isSecondHalf = c === LF && p.isAfterCr
  p.isAfterCr = c === CR
  if (isSecondHalf) return
  p.line++
  if (p.recordLine !== 0) endRecord(p)
}

/** Between fields or inside an unquoted one: reads from `i`, returns where it stopped. */
const readUnquoted = (p: Cursor, text: string, i: number): number => {
  const c = text.charCodeAt(i)
  if (c === CR || c === LF) {
    lineBreak(p, c)
    return i + 1
  }
  p.isAfterCr = false
  if (p.recordLine === 0) p.recordLine = p.line
  if (c === p.separator) {
    p.fields.push(p.field)
    p.field = ''
    p.state = FIELD_START
    return i + 1
  }
  if (c === QUOTE) {
    if (p.state === UNQUOTED)
      throw new LineError(p.line, `a quote inside an unquoted field (field ${p.fields.length + 1}); quote the whole field and double the quote`)
    p.state = QUOTED
    p.quoteLine = p.line
    return i + 1
  }
  // An unquoted run: up to the next delimiter, quote or line break.
  let j = i + 1
  while (j < text.length) {
    const d = text.charCodeAt(j)
    if (d === p.separator || d === QUOTE || d === CR || d === LF) break
    j++
  }
  p.field += text.slice(i, j)
  p.state = UNQUOTED
  return j
}

/** Inside a quoted field: a run up to the next quote, counting the line breaks it holds; returns where it stopped. */
const readQuoted = (p: Cursor, text: string, i: number): number => {
  const length = text.length
  let j = i
  while (j < length) {
    const d = text.charCodeAt(j)
    if (d === QUOTE) break
    if (d === LF) {
      if (!p.isAfterCr) p.line++
      p.isAfterCr = false
    } else if (d === CR) {
      p.line++
      p.isAfterCr = true
    } else p.isAfterCr = false
    j++
  }
  p.field += text.slice(i, j)
  if (j < length) {
    p.state = QUOTE_IN_QUOTED
    p.isAfterCr = false
    j++
  }
  return j
}

/** After a quote inside a quoted field: a second quote is one quote; else the field ended. */
const readAfterQuote = (p: Cursor, text: string, i: number): number => {
  const c = text.charCodeAt(i)
  if (c === QUOTE) {
    p.field += '"'
    p.state = QUOTED
    return i + 1
  }
  if (c === p.separator || c === CR || c === LF) {
    p.state = UNQUOTED
    return i
  }
  throw new LineError(p.line, `expected ${describe(p.delimiter)} or a line break after the closing quote of field ${p.fields.length + 1}`)
}

export const createCsvParser = (delimiter = ','): CsvParser => {
  const p: Cursor = {
    delimiter,
    separator: delimiter.charCodeAt(0),
    state: FIELD_START,
    fields: [],
    field: '',
    line: 1,
    recordLine: 0,
    quoteLine: 0,
    isAfterCr: false,
    out: [],
  }
  return {
    push: (text) => {
      p.out = []
      let i = 0
      while (i < text.length) {
        if (p.state === FIELD_START || p.state === UNQUOTED) i = readUnquoted(p, text, i)
        else if (p.state === QUOTED) i = readQuoted(p, text, i)
        else i = readAfterQuote(p, text, i)
      }
      return p.out
    },
    end: () => {
      if (p.state === QUOTED) throw new LineError(p.quoteLine, `a quoted field (field ${p.fields.length + 1}) is never closed`)
      p.out = []
      if (p.recordLine !== 0) endRecord(p)
      return p.out
    },
  }
}

const describe = (delimiter: string): string => (delimiter === '\t' ? 'a tab' : `"${delimiter}"`)
