// NDJSON (JSON Lines), read incrementally: one JSON object per line, lines ended by LF or CRLF, the
// last line's break optional. Text is pushed in chunks split anywhere; whole objects come out with
// their line number. A line of nothing but whitespace is skipped; any other line that is not a
// JSON object is refused with its line.
import { errorMessage } from '../../core/errors.js'
import { isObject, type JsonObject } from '../../core/json.js'
import { LineError } from './errors.js'

export type NdjsonRecord = Readonly<{ value: JsonObject; line: number }>

export type NdjsonParser = Readonly<{
  /** The objects on the lines this chunk completes. Throws LineError. */
  push(text: string): readonly NdjsonRecord[]
  /** The object on the last line, when the text does not end with a line break. Throws LineError. */
  end(): readonly NdjsonRecord[]
}>

const BLANK = /^[ \t\r]*$/

const kind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`)

const parseLine = (text: string, line: number): JsonObject => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error: unknown) {
    // V8's message quotes at most a few characters around the fault, so the line stays short.
    throw new LineError(line, `not JSON (${errorMessage(error)})`)
  }
  if (!isObject(value)) throw new LineError(line, `expected a JSON object, found ${kind(value)}`)
  return value
}

export const createNdjsonParser = (): NdjsonParser => {
  let partial = ''
  let line = 0
  const take = (text: string, out: NdjsonRecord[]): void => {
    line++
    if (!BLANK.test(text)) out.push({ value: parseLine(text, line), line })
  }
  return {
    push: (text) => {
      const out: NdjsonRecord[] = []
      let start = 0
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
        take(partial + text.slice(start, i), out)
        partial = ''
        start = i + 1
      }
      partial += text.slice(start)
      return out
    },
    end: () => {
      const out: NdjsonRecord[] = []
      if (partial !== '') take(partial, out)
      partial = ''
      return out
    },
  }
}
