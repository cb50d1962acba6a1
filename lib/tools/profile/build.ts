// The profile of a table of training rows (profile.ts has the format): per profiled column, the
// reference lib/drift/reference.ts computes, the one the shipped artifacts carry; with a model,
// also the reference of its answers on those rows.
//
// Which columns, and their types:
//   model    the model's inputs, in input order, with their types and levels: a value outside a
//            categorical input's levels is refused. Other columns are ignored, but `target`,
//            the true answers, which the model's are scored against (quality.ts): a missing
//            truth is a missing value, a truth that is no class or number is refused.
//   listed   the columns named, in that order, each typed or inferred.
//   all      every named column (CSV: a header field that is not empty; NDJSON: every member
//            seen on any line, in the order first seen), less those excluded; types inferred.
// Inferred: numerical when every value in the column is a number (table.ts), else categorical,
// its levels the distinct values sorted by UTF-16 code units (as canonical JSON sorts keys), at
// most `maxLevels` of them: a column past that is an identifier or free text, or a numerical
// column with a stray word in it, and is refused rather than profiled as thousands of levels.
//
// One pass over the file when every type is known, else two: the first infers the types (and
// finds NDJSON members), the second computes. A row with a missing value in a profiled column is
// refused, or with `dropMissing` left out of the profile and counted; a value of the wrong kind is
// refused either way. Rows reach the model in batches, encoded by lib/models/inference/features.ts as a
// request's rows are.
import { countedReference, numericalReference } from '../../drift/reference.js'
import { encodeRows } from '../../models/inference/features.js'
import type { FeatureReference, Input, ModelVersion, Prediction, Predictor } from '../../models/runtime.js'
import { LineError, ProfileInputError, quote } from './errors.js'
import { PROFILE_FORMAT_VERSION, predictionInput, type Profile } from '../../models/profile.js'
import { type Draw, FILL_SEED, filledNote, referenceDraw, unfillableNote } from './fill.js'
import { mulberry32 } from '../loadgen/random.js'
import { qualityScore, targetColumn, type QualityScore, type TargetColumn } from './quality.js'
import { CELLS, fieldOf, memberOf, scanTable, type CellOf, type CellReading, type Cells, type TableSource } from './table.js'

export type ColumnType = 'numerical' | 'categorical'
export type ColumnRequest = Readonly<{ name: string; type?: ColumnType }>

export type ProfiledColumns =
  /** `target`: the column of true answers the model's are scored against (quality.ts), not an input. */
  | Readonly<{ kind: 'model'; model: ModelVersion; predictor: Predictor; target?: string }>
  | Readonly<{ kind: 'listed'; columns: readonly ColumnRequest[] }>
  | Readonly<{ kind: 'all'; exclude: readonly string[] }>

export type ProfileOptions = Readonly<{
  source: TableSource
  columns: ProfiledColumns
  /** Most quantile bins per numerical column (and a regressor's predictions), or how many for the rows read. */
  bins: number | ((rows: number) => number)
  /** Most levels an inferred categorical column may have. */
  maxLevels: number
  /** Leave out rows with a missing value instead of refusing them. */
  dropMissing: boolean
  /** Rows per prediction call; DEFAULT_BATCH_ROWS. */
  batchRows?: number
}>

export type ProfileOutcome = Readonly<{
  profile: Profile
  /** Rows left out for a missing value (`dropMissing`). */
  dropped: number
  /** Payload log events skipped: not predictions of the model (table.ts). */
  skipped: number
  /** What was said of the inputs the payload log left out, their values drawn from the model's reference (fill.ts); empty when none. */
  filled: string
  columns: readonly Readonly<{ name: string; type: ColumnType }>[]
}>

export const DEFAULT_BATCH_ROWS = 1024

/** A Float64Array that grows as values are pushed. */
const growable = () => {
  let data = new Float64Array(1024)
  let length = 0
  return {
    push: (value: number): void => {
      if (length === data.length) {
        const larger = new Float64Array(length * 2)
        larger.set(data)
        data = larger
      }
      data[length++] = value
    },
    values: (): Float64Array => data.subarray(0, length),
  }
}

/**
 * One profiled column: reads a row's cell (throwing LineError) and holds its value, adds that value
 * when the row is kept, and computes its reference. Each column holds its own value's type, so a
 * value never goes through a shared `number | string` slot.
 */
type Column = Readonly<{
  name: string
  type: ColumnType
  /** The value, as the model takes it. */
  read(cell: unknown, line: number): number | string
  /** Adds the value read last: its row is kept. */
  add(line: number): void
  reference(bins: number): FeatureReference
}>

// `list[j]` for an index the loop keeps in range (a column's field, in column order), which
// noUncheckedIndexedAccess cannot see: this module's only assertion.
const at = <T>(list: ArrayLike<T>, j: number): T => list[j] as T

const numericalColumn = (name: string, cells: CellReading): Column => {
  const values = growable()
  let last = 0
  return {
    name,
    type: 'numerical',
    read: (cell, line) => {
      const value = cells.number(cell)
      if (value === undefined) throw new LineError(line, `${name}: ${quote(cell)} is not a finite number`)
      last = value
      return value
    },
    add: () => values.push(last),
    reference: (bins) => numericalReference(name, values.values(), bins),
  }
}

const levelOf = (name: string, cells: CellReading, cell: unknown, line: number): string => {
  const level = cells.level(cell)
  if (level === undefined) throw new LineError(line, `${name}: ${quote(cell)} is not a string`)
  return level
}

const listed = (levels: readonly string[]): string => {
  const text = levels.join(', ')
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
}

/** A categorical column with the levels of a model's input: any other value is refused. */
const inputColumn = (input: Input & { type: 'categorical' }, cells: CellReading): Column => {
  const index = new Map(input.levels.map((level, i) => [level, i]))
  const counts = new Float64Array(input.levels.length)
  let lastIndex = 0
  return {
    name: input.name,
    type: 'categorical',
    read: (cell, line) => {
      const level = levelOf(input.name, cells, cell, line)
      const i = index.get(level)
      if (i === undefined) throw new LineError(line, `${input.name}: ${quote(level)} is not one of ${listed(input.levels)}`)
      lastIndex = i
      return level
    },
    add: () => {
      counts[lastIndex] = at(counts, lastIndex) + 1
    },
    reference: () => countedReference(input.name, input.levels, counts),
  }
}

/** A categorical column whose levels are the values found, at most `maxLevels`; `hint` ends the message past that. */
const levelsColumn = (name: string, cells: CellReading, maxLevels: number, hint: string): Column => {
  const counts = new Map<string, number>()
  let last = ''
  return {
    name,
    type: 'categorical',
    read: (cell, line) => {
      last = levelOf(name, cells, cell, line)
      return last
    },
    add: (line) => {
      const count = counts.get(last)
      if (count === undefined && counts.size === maxLevels) throw new LineError(line, `${name}: more than ${maxLevels} distinct values (--max-levels); ${hint}`)
      counts.set(last, (count ?? 0) + 1)
    },
    reference: () => {
      // Sorted by UTF-16 code units, as sort() sorts strings; levels are distinct, so never equal.
      const levels = [...counts].sort(([a], [b]) => (a < b ? -1 : 1))
      return countedReference(
        name,
        levels.map(([level]) => level),
        levels.map(([, count]) => count),
      )
    },
  }
}

/** The model's answers on the kept rows, batch by batch, and with `score`, their score against each row's truth. */
const predictionsOf = (model: ModelVersion, predictor: Predictor, batchRows: number, score: QualityScore | undefined) => {
  const batch: Record<string, number | string>[] = []
  let truths: number[] = []
  const output = predictionInput(model)
  const labels = new Float64Array(model.task === 'classification' ? model.classes.length : 0)
  const values = growable()
  const take = (prediction: Prediction, batchTruths: readonly number[]): void => {
    if ('labels' in prediction) for (const label of prediction.labels) labels[label] = at(labels, label) + 1
    else for (const value of prediction.values) values.push(value)
    score?.add(prediction, batchTruths)
  }
  const flush = (): void | Promise<void> => {
    if (batch.length === 0) return
    const answered = predictor.predict(encodeRows(model.inputs, batch), batch.length)
    const batchTruths = truths
    batch.length = 0
    truths = []
    return answered instanceof Promise ? answered.then((prediction) => take(prediction, batchTruths)) : take(answered, batchTruths)
  }
  return {
    /** `truth` as the target column reads it; ignored without a score. */
    add: (row: Record<string, number | string>, truth: number): void | Promise<void> => {
      batch.push(row)
      truths.push(truth)
      return batch.length === batchRows ? flush() : undefined
    },
    flush,
    reference: (bins: number): FeatureReference =>
      output.type === 'categorical' ? countedReference(output.name, output.levels, labels) : numericalReference(output.name, values.values(), bins),
  }
}

/** What the first pass learns of a column whose type is inferred. */
type Survey = { isNumeric: boolean; hasNumber: boolean; firstOther: Readonly<{ cell: unknown; line: number }> | undefined }

const survey = (): Survey => ({ isNumeric: true, hasNumber: false, firstOther: undefined })

const note = (seen: Survey, cells: CellReading, cell: unknown, line: number): void => {
  if (cells.isMissing(cell)) return
  if (cells.number(cell) !== undefined) seen.hasNumber = true
  else if (seen.isNumeric) {
    seen.isNumeric = false
    seen.firstOther = { cell, line }
  }
}

/** The header's index of `name`, refusing a name absent or repeated; `why` says where the name came from. */
const headerIndex = (header: readonly string[], name: string, line: number, why: string): number => {
  const first = header.indexOf(name)
  if (first === -1) throw new LineError(line, `the header has no column ${quote(name)} (${why})`)
  const second = header.indexOf(name, first + 1)
  if (second !== -1) throw new LineError(line, `column ${quote(name)} appears twice in the header (fields ${first + 1} and ${second + 1})`)
  return first
}

/** The header's index of each of `names`, as headerIndex. */
const headerIndexes = (header: readonly string[], names: readonly string[], line: number, why: string): number[] =>
  names.map((name) => headerIndex(header, name, line, why))

/** A new survey of column `name`, kept in `seen`. */
const surveyed = (seen: Map<string, Survey>, name: string): Survey => {
  const fresh = survey()
  seen.set(name, fresh)
  return fresh
}

/** Each survey with the reader of its column's cell. */
type SurveyedCell = Readonly<{ seen: Survey; cellOf: CellOf }>

const checkExcluded = (exclude: readonly string[], found: readonly string[], fail: (name: string) => Error): void => {
  for (const name of exclude) if (!found.includes(name)) throw fail(name)
}

type HeaderColumns = Readonly<{ names: readonly string[]; indexes: readonly number[] }>

/** The columns profiled and where the header has them; throws LineError. */
const columnsInHeader = (columns: ProfiledColumns, header: readonly string[], line: number): HeaderColumns => {
  if (columns.kind === 'model') {
    const names = columns.model.inputs.map((input) => input.name)
    return { names, indexes: headerIndexes(header, names, line, `an input of model ${columns.model.name}`) }
  }
  if (columns.kind === 'listed') {
    const names = columns.columns.map((column) => column.name)
    return { names, indexes: headerIndexes(header, names, line, 'named by --schema') }
  }
  checkExcluded(columns.exclude, header, (name) => new LineError(line, `--exclude names ${quote(name)}, which the header does not have`))
  const names = header.filter((name) => name !== '' && !columns.exclude.includes(name))
  return { names, indexes: headerIndexes(header, names, line, 'in the header') }
}

/**
 * Pass one, when a type is to be inferred: the columns (for `all`) and what their values are.
 * Returns the names in column order and each one's survey.
 */
const inferTypes = async (source: TableSource, columns: Exclude<ProfiledColumns, { kind: 'model' }>): Promise<ReadonlyMap<string, Survey>> => {
  const cells = CELLS[source.format]
  const seen = new Map<string, Survey>()
  if (source.format === 'csv') {
    let surveyedCells: SurveyedCell[] = []
    await scanTable(source, {
      header: (header, line) => {
        const { names, indexes } = columnsInHeader(columns, header, line)
        surveyedCells = names.map((name, j) => ({ seen: surveyed(seen, name), cellOf: fieldOf(at(indexes, j)) }))
      },
      row: (record, line) => {
        for (const { seen, cellOf } of surveyedCells) note(seen, cells, cellOf(record), line)
      },
    })
  } else if (columns.kind === 'all') {
    await scanTable(source, {
      row: (record, line) => {
        for (const [name, cell] of Object.entries(record)) {
          if (name === '') continue
          let entry = seen.get(name)
          if (entry === undefined) seen.set(name, (entry = survey()))
          note(entry, cells, cell, line)
        }
      },
    })
    checkExcluded(
      columns.exclude,
      [...seen.keys()],
      (name) => new ProfileInputError(source.file, undefined, `--exclude names ${quote(name)}, a member no line has`),
    )
    for (const name of columns.exclude) seen.delete(name)
  } else {
    const surveyedCells: SurveyedCell[] = columns.columns.map(({ name }) => ({ seen: surveyed(seen, name), cellOf: memberOf(name) }))
    await scanTable(source, {
      row: (record, line) => {
        for (const { seen, cellOf } of surveyedCells) note(seen, cells, cellOf(record), line)
      },
    })
  }
  return seen
}

const NOT_A_COLUMN_HINT = 'leave the column out (--exclude, --schema) or raise --max-levels'

/** The profiled columns, typed: from the model, the request, or the survey. */
const planColumns = (options: ProfileOptions, surveys: ReadonlyMap<string, Survey>): Column[] => {
  const { columns, maxLevels } = options
  const cells = CELLS[options.source.format]
  if (columns.kind === 'model')
    return columns.model.inputs.map((input) => (input.type === 'numerical' ? numericalColumn(input.name, cells) : inputColumn(input, cells)))
  const requests: readonly ColumnRequest[] = columns.kind === 'listed' ? columns.columns : [...surveys.keys()].map((name) => ({ name }))
  return requests.map(({ name, type }) => {
    if (type === 'numerical') return numericalColumn(name, cells)
    if (type === 'categorical') return levelsColumn(name, cells, maxLevels, NOT_A_COLUMN_HINT)
    const seen = surveys.get(name)
    const other = seen?.firstOther
    // A column surveyed is numerical until its first other value.
    if (other === undefined) return numericalColumn(name, cells)
    return levelsColumn(
      name,
      cells,
      maxLevels,
      seen?.hasNumber === true ? `the first value that is not a number is ${quote(other.cell)}, on line ${other.line}` : NOT_A_COLUMN_HINT,
    )
  })
}

/** The column of true answers, with --target; the score of the model's answers against it. */
const targetOf = (profiled: ProfiledColumns, cells: CellReading): Readonly<{ column: TargetColumn; score: QualityScore }> | undefined =>
  profiled.kind === 'model' && profiled.target !== undefined
    ? { column: targetColumn(profiled.model, profiled.target, cells), score: qualityScore(profiled.model) }
    : undefined

/** Reads the table (twice when a type is inferred) and computes its profile. Throws ProfileInputError. */
export const buildProfile = async (options: ProfileOptions): Promise<ProfileOutcome> => {
  const { source, columns: profiled, bins, dropMissing } = options
  const isInferred = profiled.kind === 'all' || (profiled.kind === 'listed' && profiled.columns.some((column) => column.type === undefined))
  const columns = planColumns(options, isInferred ? await inferTypes(source, profiled) : new Map())
  if (columns.length === 0) throw new ProfileInputError(source.file, undefined, 'no column left to profile')
  const cells = CELLS[source.format]
  const target = targetOf(profiled, cells)
  const predictions =
    profiled.kind === 'model' ? predictionsOf(profiled.model, profiled.predictor, options.batchRows ?? DEFAULT_BATCH_ROWS, target?.score) : undefined
  let cellOf: CellOf[] = source.format === 'csv' ? [] : columns.map((column) => memberOf(column.name))
  // CSV: from the header, below.
  let truthOf: CellOf | undefined = target === undefined || source.format === 'csv' ? undefined : memberOf(target.column.name)
  let rows = 0
  let dropped = 0
  const fill = excludedFill(profiled, source.file)

  const { skipped } = await scanTable(source, {
    header: (header, line) => {
      cellOf = columnsInHeader(profiled, header, line).indexes.map(fieldOf)
      if (target !== undefined) truthOf = fieldOf(headerIndex(header, target.column.name, line, 'named by --target'))
    },
    row: (record: Cells, line: number, isLogged: boolean) => {
      let missing: string | undefined
      const row: Record<string, number | string> = {}
      let j = 0
      for (const column of columns) {
        // A logged row lacks only what the service was told not to log (fill.ts).
        const cell = isLogged && !Object.hasOwn(record, column.name) ? fill.value(j++, column.name, line) : at(cellOf, j++)(record)
        if (cells.isMissing(cell)) missing ??= column.name
        else row[column.name] = column.read(cell, line)
      }
      let truth = Number.NaN
      if (target !== undefined && truthOf !== undefined) {
        const cell = truthOf(record)
        if (cells.isMissing(cell)) missing ??= target.column.name
        else truth = target.column.read(cell, line)
      }
      if (missing !== undefined) {
        if (!dropMissing) throw new LineError(line, `${missing} is missing (--drop-missing leaves out rows with a missing value)`)
        dropped++
        return
      }
      for (const column of columns) column.add(line)
      rows++
      return predictions?.add(row, truth)
    },
  })
  if (rows === 0) throw new ProfileInputError(source.file, undefined, `every row (${dropped}) has a missing value: nothing left to profile`)
  await predictions?.flush()
  const most = typeof bins === 'number' ? bins : bins(rows)
  const profile: Profile = {
    format_version: PROFILE_FORMAT_VERSION,
    rows,
    features: columns.map((column, j) => fill.reference(j) ?? column.reference(most)),
    ...(predictions === undefined ? {} : { predictions: predictions.reference(most) }),
    ...(target === undefined ? {} : { quality: target.score.quality() }),
  }
  return { profile, dropped, skipped, filled: fill.note(), columns: columns.map(({ name, type }) => ({ name, type })) }
}

type ExcludedFill = Readonly<{
  /** A value of column `j`, `name`, absent from a logged row at `line`. */
  value(j: number, name: string, line: number): number | string
  /** The model's reference of input `j` when its values were drawn, kept as it was; else undefined. */
  reference(j: number): FeatureReference | undefined
  /** What a run says of the inputs filled; empty when none was. */
  note(): string
}>

/**
 * How the inputs a payload log left out are filled: with a model, drawn from its reference of them
 * (fill.ts), seeded; without one, or one without a reference, refused, saying why.
 */
const excludedFill = (profiled: ProfiledColumns, file: string): ExcludedFill => {
  const random = mulberry32(FILL_SEED)
  const draws = new Map<number, Readonly<{ name: string; reference: FeatureReference; draw: Draw }>>()
  const drawOf = (j: number, name: string, line: number): Draw => {
    const known = draws.get(j)
    if (known !== undefined) return known.draw
    if (profiled.kind !== 'model')
      throw new LineError(
        line,
        `${name} is not in the payload log's rows (SVC_PAYLOAD_LOG_EXCLUDE left it out): leave it out of --schema, or profile with --model`,
      )
    const input = at(profiled.model.inputs, j)
    const reference = profiled.model.reference?.features[j]
    if (reference === undefined) throw new ProfileInputError(file, line, unfillableNote(input.name, profiled.model.name))
    const draw = referenceDraw(input, reference, random)
    draws.set(j, { name: input.name, reference, draw })
    return draw
  }
  return {
    value: (j, name, line) => drawOf(j, name, line)(),
    reference: (j) => draws.get(j)?.reference,
    note: () =>
      profiled.kind === 'model' && draws.size > 0
        ? filledNote(
            [...draws.values()].map(({ name }) => name),
            profiled.model.name,
          )
        : '',
  }
}
