// What `svc profile` refuses. Readers and the profile computation throw a LineError (the line and
// what is wrong there); reading a file turns it into a ProfileInputError naming the file, the
// one line the command prints (`train.csv:17: expected 5 fields, found 4`), exit status 2.
import { SvcError } from '../../core/errors.js'

/** Bad input at `line` (1-based) of the text being read. */
export class LineError extends SvcError {
  override name = 'LineError'
  readonly code = 'INVALID_LINE'
  readonly line: number
  readonly reason: string
  constructor(line: number, reason: string) {
    super(`line ${line}: ${reason}`)
    this.line = line
    this.reason = reason
  }
}

/** Bad input in `file`: at a line when one applies (`file:line: reason`), else of the whole file (`file: reason`). */
export class ProfileInputError extends SvcError {
  override name = 'ProfileInputError'
  readonly code = 'INVALID_INPUT_FILE'
  readonly file: string
  readonly line: number | undefined
  readonly reason: string
  constructor(file: string, line: number | undefined, reason: string) {
    super(line === undefined ? `${file}: ${reason}` : `${file}:${line}: ${reason}`)
    this.file = file
    this.line = line
    this.reason = reason
  }
}

/** A value as a message may quote it: JSON text, clipped, so a long or odd value stays one short line. */
export const quote = (value: unknown): string => {
  const text = typeof value === 'number' ? String(value) : JSON.stringify(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}
