// Training rows as `svc profile` reads them, whatever the format: records streamed from a CSV or
// NDJSON file (read.ts), the CSV header checked and every record held to its field count, and
// what a cell means in each format:
//
//                 CSV                                   NDJSON
//   missing       an empty field                        null, "", or the member absent
//   a number      decimal text: 12, -0.5, 1e-3          a JSON number
//   a level       the field's text                      a JSON string
//
// Only finite numbers count as numbers (`1e400` does not), so a numerical column never holds
// Infinity.
//
// A payload log (lib/serving/payload/) is read as the service writes it: an NDJSON line that is a
// CloudEvent (it has `specversion`) stands for the rows of its `data.rows` when it is an
// `svc.prediction` event of the model read for (all models when none is named), and is skipped
// otherwise (labels, other models), counted in `skipped`.
import { isObject, type JsonObject } from '../../core/json.js'
import { createCsvParser, type CsvRecord } from './csv.js'
import { LineError, ProfileInputError } from './errors.js'
import { createNdjsonParser, type NdjsonRecord } from './ndjson.js'
import { readRecords } from './read.js'

export const FORMATS = ['csv', 'ndjson'] as const
export type Format = (typeof FORMATS)[number]

/** The format a file's extension (lower-cased) says; `svc profile` and `svc loadgen --rows` read a .tsv as CSV with tabs. */
export const FORMAT_OF_EXTENSION: Readonly<Record<string, Format>> = { '.csv': 'csv', '.tsv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' }

export type TableSource = Readonly<{
  path: string
  /** How messages name the file: as the command line gave it. */
  file: string
  format: Format
  /** CSV only: one character. */
  delimiter: string
  /** Bytes read at a time (read.ts); tests make it small. */
  chunkBytes?: number
  /** NDJSON only: the model whose logged rows a payload log's events give; undefined for every model's. */
  model?: string | undefined
}>

/** What a scan read: the rows, and the payload log events it skipped (not a prediction of the model). */
export type Scanned = Readonly<{ rows: number; skipped: number }>

/** The type of a payload log's prediction events (lib/serving/payload/events.ts). */
export const PREDICTION_EVENT = 'svc.prediction'

/** A record's cells: a CSV record's fields, or an NDJSON line's object. */
export type Cells = readonly string[] | JsonObject

/** How a column's cell is found in a record: resolved once, from the header or the member's name. */
export type CellOf = (cells: Cells) => unknown

export type TableVisitor = Readonly<{
  /** CSV only: the header's names, before any row. */
  header?(names: readonly string[], line: number): void
  /** `isLogged`: the row is a payload log event's, where an absent input was excluded (fill.ts). */
  row(cells: Cells, line: number, isLogged: boolean): void | Promise<void>
}>

/** What a cell means: the columns above. */
export type CellReading = Readonly<{
  isMissing(cell: unknown): boolean
  /** The cell's finite number, or undefined. */
  number(cell: unknown): number | undefined
  /** The cell's level, or undefined when it cannot be one. */
  level(cell: unknown): string | undefined
}>

const DECIMAL = /^[ \t]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[ \t]*$/

const finiteOrUndefined = (n: number): number | undefined => (Number.isFinite(n) ? n : undefined)

const textOrUndefined = (cell: unknown): string | undefined => (typeof cell === 'string' ? cell : undefined)

export const CELLS: Readonly<Record<Format, CellReading>> = {
  csv: {
    isMissing: (cell) => cell === '',
    number: (cell) => (typeof cell === 'string' && DECIMAL.test(cell) ? finiteOrUndefined(Number(cell)) : undefined),
    level: textOrUndefined,
  },
  ndjson: {
    isMissing: (cell) => cell === undefined || cell === null || cell === '',
    number: (cell) => (typeof cell === 'number' ? finiteOrUndefined(cell) : undefined),
    level: textOrUndefined,
  },
}

/** The cell of column `name` in an NDJSON record: its member, if it has one (a CSV record has none). */
export const memberOf =
  (name: string): CellOf =>
  (cells) =>
    isObject(cells) && Object.hasOwn(cells, name) ? cells[name] : undefined

/** The cell at `index` of a CSV record (an NDJSON record has none). */
export const fieldOf =
  (index: number): CellOf =>
  (cells) =>
    Array.isArray(cells) ? cells[index] : undefined

/** The rows a payload log event stands for: its `data.rows`, or undefined when it is skipped. */
const eventRows = (value: JsonObject, line: number, model: string | undefined): readonly Cells[] | undefined => {
  const data = value['data']
  if (value['type'] !== PREDICTION_EVENT || !isObject(data) || (model !== undefined && data['model'] !== model)) return undefined
  const rows = data['rows']
  if (!Array.isArray(rows) || !rows.every(isObject)) throw new LineError(line, `data.rows: expected the event's rows, an array of objects`)
  return rows
}

/** Visits an event's rows in turn, each waited for. */
const eachRow = async (cells: readonly Cells[], line: number, visitor: TableVisitor): Promise<void> => {
  for (const row of cells) await visitor.row(row, line, true)
}

/**
 * Reads every record of the table: for CSV the first is the header and every other must have as
 * many fields. A table without a row is refused. Resolves with the number of rows and of the
 * events skipped; throws ProfileInputError.
 */
export const scanTable = async (source: TableSource, visitor: TableVisitor): Promise<Scanned> => {
  let rows = 0
  let skipped = 0
  let width = -1
  let headerLine = 0
  if (source.format === 'csv') {
    await readRecords(
      source.path,
      source.file,
      createCsvParser(source.delimiter),
      ({ fields, line }: CsvRecord) => {
        if (width === -1) {
          width = fields.length
          headerLine = line
          return visitor.header?.(fields, line)
        }
        if (fields.length !== width) throw new LineError(line, `expected ${width} fields, found ${fields.length}`)
        rows++
        return visitor.row(fields, line, false)
      },
      source.chunkBytes,
    )
    if (width === -1) throw new ProfileInputError(source.file, 1, 'the file is empty: expected a header row')
    if (rows === 0) throw new ProfileInputError(source.file, headerLine, 'a header but no rows')
  } else {
    await readRecords(
      source.path,
      source.file,
      createNdjsonParser(),
      ({ value, line }: NdjsonRecord) => {
        if (!Object.hasOwn(value, 'specversion')) {
          rows++
          return visitor.row(value, line, false)
        }
        const cells = eventRows(value, line, source.model)
        if (cells === undefined) {
          skipped++
          return undefined
        }
        rows += cells.length
        return eachRow(cells, line, visitor)
      },
      source.chunkBytes,
    )
    if (rows === 0 && skipped > 0) {
      throw new ProfileInputError(source.file, undefined, `no rows: ${skipped} payload log events skipped, none a ${PREDICTION_EVENT} event of the model`)
    }
    if (rows === 0) throw new ProfileInputError(source.file, 1, 'the file is empty: expected one JSON object per line')
  }
  return { rows, skipped }
}
