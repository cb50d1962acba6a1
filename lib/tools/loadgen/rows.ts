// The rows `svc loadgen` replays: a file of training or recorded rows (--rows), read by the reader
// `svc profile` uses (lib/tools/profile/table.ts) and cut down to the model's inputs; or, without --rows,
// the rows the reference of a model shipped with svc was built from.
//
// What a cell becomes, per input (the file's other columns are ignored):
//   numerical     a finite number: CSV decimal text (12, -0.5, 1e-3), an NDJSON number
//   categorical   one of the input's levels: the CSV field's text, an NDJSON string
//   missing       an empty CSV field, an NDJSON null or "", as `svc profile` reads them: sent as
//                 null, as recorded (svc's own models answer such a row 400 MISSING_FEATURE)
// Refused with a ProfileInputError (lib/tools/profile/errors.ts) naming the file, and the line when there
// is one: a CSV header without an input's column (or with it twice), an NDJSON line without an
// input's member (a missing value is written null), a value of the wrong kind, a level the model
// does not know.
//
// A payload log the service wrote (lib/serving/payload/) is read as it stands: its svc.prediction
// events of the model give their logged rows, and every other event is skipped and counted
// (table.ts). An input a logged row lacks was excluded from the log (SVC_PAYLOAD_LOG_EXCLUDE): its
// value is drawn from the model's reference distribution (lib/tools/profile/fill.ts), and the run
// says so; a model without a reference of it is a usage error saying why.
//
// With --feedback one more column is read, the label (labels.ts): a CSV header without it is a
// usage error naming the file and the column; a row without a label, or with one the model cannot
// have answered, a ProfileInputError.
//
// Shipped rows. `npm run train` writes `<model>/<version>/reference-rows.csv` beside each shipped
// artifact (lib/models/artifacts/), every row its input references were computed from, with the
// model's inputs as the header. No runtime names that file and versions are listed by the manifest,
// so a store never takes it for a model file or a version. loadgen may talk to a service on
// another host, so it reads the rows from its own package, under the model's name and the version
// the service says it serves by default, and only when that version is the very build shipped
// here: the sha256 the service shows must be the one in the shipped model.json. A retrained or
// foreign model of the same name has no rows to replay; --rows gives them.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isObject, parseJson } from '../../core/json.js'
import { DEFAULT_STORE_ROOT } from '../../config/model-store.js'
import type { Input } from '../../models/runtime.js'
import { LineError, quote } from '../profile/errors.js'
import { type Draw, unfillableNote } from '../profile/fill.js'
import { CELLS, fieldOf, memberOf, scanTable, type CellOf, type Cells, type TableSource } from '../profile/table.js'
import { LoadgenUsageError } from './errors.js'
import { truthReader, type LabelColumn, type Truth } from './labels.js'

export type Value = number | string | null
/** One row as sent: the model's inputs, by name. */
export type Row = Record<string, Value>

/** The name of the rows file beside a shipped artifact. */
export const SHIPPED_ROWS = 'reference-rows.csv'

/** How a cell of one input is read; throws LineError. */
type Read = (cell: unknown, line: number) => Value

const reader = (input: Input, source: TableSource): Read => {
  const cells = CELLS[source.format]
  if (input.type === 'numerical') {
    return (cell, line) => {
      if (cells.isMissing(cell)) return null
      const value = cells.number(cell)
      if (value === undefined) throw new LineError(line, `${input.name}: ${quote(cell)} is not a finite number (a numerical input)`)
      return value
    }
  }
  const levels = new Set(input.levels)
  return (cell, line) => {
    if (cells.isMissing(cell)) return null
    const level = cells.level(cell)
    if (level === undefined) throw new LineError(line, `${input.name}: ${quote(cell)} is not a string (a categorical input)`)
    if (!levels.has(level)) throw new LineError(line, `${input.name}: ${quote(level)} is not one of the model's levels (${input.levels.join(', ')})`)
    return level
  }
}

/**
 * Rows as read, and with --feedback each one's truth, in the same order (empty without a label
 * column); `skipped`, the payload log events that are not predictions of the model.
 */
export type ReadRows = Readonly<{ rows: Row[]; truths: Truth[]; skipped: number; filled: readonly string[] }>

/** The header's column `name`; throws a LineError when it appears twice, `absent()` when not at all. */
const columnOf = (header: readonly string[], line: number, name: string, absent: () => Error): CellOf => {
  const index = header.indexOf(name)
  if (index === -1) throw absent()
  if (header.indexOf(name, index + 1) !== -1) throw new LineError(line, `column ${quote(name)} appears twice in the header`)
  return fieldOf(index)
}

/**
 * A column read from every row: where its cell is (its NDJSON member until a CSV header says its
 * field), how the cell is read, and what a header without it throws.
 */
type Column<T> = Readonly<{ name: string; cellOf: CellOf; read: (cell: unknown, line: number) => T; absent: (line: number) => Error }>

/** The column at its place in a CSV header. */
const located = <T>(column: Column<T>, header: readonly string[], line: number): Column<T> => ({
  ...column,
  cellOf: columnOf(header, line, column.name, () => column.absent(line)),
})

/**
 * Every row of `source` with the values of `inputs`, and with `label` each row's truth; throws
 * ProfileInputError, and a LoadgenUsageError when a CSV header has no label column. `model` names
 * the model in messages.
 */
export const readRows = async (
  source: TableSource,
  inputs: readonly Input[],
  model: string,
  label?: LabelColumn,
  drawOf: (name: string) => Draw | undefined = () => undefined,
): Promise<ReadRows> => {
  let columns: readonly Column<Value>[] = inputs.map((input) => ({
    name: input.name,
    cellOf: memberOf(input.name),
    read: reader(input, source),
    absent: (line) => new LineError(line, `the header has no column ${quote(input.name)}, an input of model ${model}`),
  }))
  let truth: Column<Truth> | undefined =
    label === undefined
      ? undefined
      : {
          name: label.name,
          cellOf: memberOf(label.name),
          read: truthReader(label, source),
          absent: () => new LoadgenUsageError(`--feedback: ${source.file} has no column ${quote(label.name)} (${label.namedBy}) to read the labels from`),
        }
  const rows: Row[] = []
  const truths: Truth[] = []
  const filled = new Map<string, Draw>()
  /** The draw filling `name`, excluded from a payload log's rows (fill.ts); a usage error when there is none. */
  const fillOf = (name: string): Draw => {
    let draw = filled.get(name)
    if (draw === undefined) {
      draw = drawOf(name)
      if (draw === undefined) throw new LoadgenUsageError(`--rows ${source.file}: ${unfillableNote(name, model)}`)
      filled.set(name, draw)
    }
    return draw
  }
  const { skipped } = await scanTable(
    { ...source, model },
    {
      header: (header, line) => {
        columns = columns.map((column) => located(column, header, line))
        if (truth !== undefined) truth = located(truth, header, line)
      },
      row: (cells: Cells, line: number, isLogged: boolean) => {
        const row: Row = {}
        for (const { name, cellOf, read } of columns) {
          // A CSV record has every column (table.ts checks its width); an NDJSON line may lack one:
          // a logged row lacks an input the service was told not to log, filled.
          if (source.format === 'ndjson' && !Object.hasOwn(cells, name)) {
            if (isLogged) row[name] = fillOf(name)()
            else throw new LineError(line, `no member ${quote(name)}, an input of model ${model} (write null for a missing value)`)
          } else row[name] = read(cellOf(cells), line)
        }
        rows.push(row)
        if (truth !== undefined) truths.push(truth.read(truth.cellOf(cells), line))
      },
    },
  )
  return { rows, truths, skipped, filled: [...filled.keys()] }
}

/** The sha256 member of a shipped model.json; undefined when there is no such file to read. */
const shippedSha256 = async (path: string): Promise<unknown> => {
  try {
    const document = parseJson(await readFile(path, 'utf8'))
    return isObject(document) ? document['sha256'] : undefined
  } catch {
    return undefined // absent, or not the JSON npm run train writes: nothing shipped to match
  }
}

/**
 * The shipped rows of `model` `version` whose build has `sha256`, as a CSV source; a usage error
 * asking for --rows when svc ships none for that build. `root` is svc's own store; tests name another.
 */
export const shippedRows = async (model: string, version: string, sha256: string, root = DEFAULT_STORE_ROOT): Promise<TableSource> => {
  const dir = join(root, model, version)
  const shipped = await shippedSha256(join(dir, 'model.json'))
  if (shipped === undefined) throw new LoadgenUsageError(`svc ships no rows of model ${model} version ${version} to replay: pass --rows FILE`)
  if (shipped !== sha256)
    throw new LoadgenUsageError(
      `the service's ${model} version ${version} is not the build svc ships (its sha256 differs), so svc's rows may not be its own: pass --rows FILE`,
    )
  const path = join(dir, SHIPPED_ROWS)
  return { path, file: path, format: 'csv', delimiter: ',' }
}
