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
  /** Most quantile bins per numerical column (and a regressor's predictions). */
  bins: number
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

/** One profiled column: reads a cell (throwing LineError), adds a kept row's value, and computes its reference. */
type Column = Readonly<{
  name: string
  type: ColumnType
  read(cell: unknown, line: number): number | string
  add(value: number | string, line: number): void
  reference(bins: number): FeatureReference
}>

const numericalColumn = (name: string, cells: CellReading): Column => {
  const values = growable()
  return {
    name,
    type: 'numerical',
    read: (cell, line) => {
      const value = cells.number(cell)
      if (value === undefined) throw new LineError(line, `${name}: ${quote(cell)} is not a finite number`)
      return value
    },
    add: (value) => values.push(value as number),
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
  return {
    name: input.name,
    type: 'categorical',
    read: (cell, line) => {
      const level = levelOf(input.name, cells, cell, line)
      if (!index.has(level)) throw new LineError(line, `${input.name}: ${quote(level)} is not one of ${listed(input.levels)}`)
      return level
    },
    add: (value) => void (counts[index.get(value as string) as number] as number)++,
    reference: () => countedReference(input.name, input.levels, counts),
  }
}

/** A categorical column whose levels are the values found, at most `maxLevels`; `hint` ends the message past that. */
const levelsColumn = (name: string, cells: CellReading, maxLevels: number, hint: string): Column => {
  const counts = new Map<string, number>()
  return {
    name,
    type: 'categorical',
    read: (cell, line) => levelOf(name, cells, cell, line),
    add: (value, line) => {
      const count = counts.get(value as string)
      if (count === undefined && counts.size === maxLevels) throw new LineError(line, `${name}: more than ${maxLevels} distinct values (--max-levels); ${hint}`)
      counts.set(value as string, (count ?? 0) + 1)
    },
    reference: () => {
      const levels = [...counts.keys()].sort()
      return countedReference(
        name,
        levels,
        levels.map((level) => counts.get(level) as number),
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
    if ('labels' in prediction) for (const label of prediction.labels) (labels[label] as number)++
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

/** The header's index of each of `names`, refusing a name absent or repeated; `why` says where a name came from. */
const headerIndexes = (header: readonly string[], names: readonly string[], line: number, why: string): number[] =>
  names.map((name) => {
    const first = header.indexOf(name)
    if (first === -1) throw new LineError(line, `the header has no column ${quote(name)} (${why})`)
    const second = header.indexOf(name, first + 1)
    if (second !== -1) throw new LineError(line, `column ${quote(name)} appears twice in the header (fields ${first + 1} and ${second + 1})`)
    return first
  })

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
    let cellOf: CellOf[] = []
    let surveys: Survey[] = []
    await scanTable(source, {
      header: (header, line) => {
        const { names, indexes } = columnsInHeader(columns, header, line)
        cellOf = indexes.map(fieldOf)
        surveys = names.map((name) => seen.set(name, survey()).get(name) as Survey)
      },
      row: (record, line) => {
        for (let j = 0; j < cellOf.length; j++) note(surveys[j] as Survey, cells, (cellOf[j] as CellOf)(record), line)
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
    const names = columns.columns.map((column) => column.name)
    const cellOf = names.map(memberOf)
    const surveys = names.map((name) => seen.set(name, survey()).get(name) as Survey)
    await scanTable(source, {
      row: (record, line) => {
        for (let j = 0; j < cellOf.length; j++) note(surveys[j] as Survey, cells, (cellOf[j] as CellOf)(record), line)
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
    const seen = surveys.get(name) as Survey
    if (seen.isNumeric) return numericalColumn(name, cells)
    const other = seen.firstOther as NonNullable<Survey['firstOther']>
    return levelsColumn(
      name,
      cells,
      maxLevels,
      seen.hasNumber ? `the first value that is not a number is ${quote(other.cell)}, on line ${other.line}` : NOT_A_COLUMN_HINT,
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
  const names = columns.map((column) => column.name)
  const cells = CELLS[source.format]
  const target = targetOf(profiled, cells)
  const predictions =
    profiled.kind === 'model' ? predictionsOf(profiled.model, profiled.predictor, options.batchRows ?? DEFAULT_BATCH_ROWS, target?.score) : undefined
  let cellOf: CellOf[] = source.format === 'csv' ? [] : names.map(memberOf)
  // CSV: from the header, below.
  let truthOf: CellOf | undefined = target === undefined || source.format === 'csv' ? undefined : memberOf(target.column.name)
  const values: (number | string)[] = new Array(columns.length)
  let rows = 0
  let dropped = 0

  const { skipped } = await scanTable(source, {
    header: (header, line) => {
      cellOf = columnsInHeader(profiled, header, line).indexes.map(fieldOf)
      if (target !== undefined) truthOf = fieldOf(headerIndexes(header, [target.column.name], line, 'named by --target')[0] as number)
    },
    row: (record: Cells, line: number) => {
      let missing: string | undefined
      for (let j = 0; j < columns.length; j++) {
        const cell = (cellOf[j] as CellOf)(record)
        if (cells.isMissing(cell)) missing ??= names[j]
        else values[j] = (columns[j] as Column).read(cell, line)
      }
      let truth = Number.NaN
      if (target !== undefined) {
        const cell = (truthOf as CellOf)(record)
        if (cells.isMissing(cell)) missing ??= target.column.name
        else truth = target.column.read(cell, line)
      }
      if (missing !== undefined) {
        if (!dropMissing) throw new LineError(line, `${missing} is missing (--drop-missing leaves out rows with a missing value)`)
        dropped++
        return
      }
      for (let j = 0; j < columns.length; j++) (columns[j] as Column).add(values[j] as number | string, line)
      rows++
      return predictions?.add(Object.fromEntries(names.map((name, j) => [name, values[j] as number | string])), truth)
    },
  })
  if (rows === 0) throw new ProfileInputError(source.file, undefined, `every row (${dropped}) has a missing value: nothing left to profile`)
  await predictions?.flush()
  const profile: Profile = {
    format_version: PROFILE_FORMAT_VERSION,
    rows,
    features: columns.map((column) => column.reference(bins)),
    ...(predictions === undefined ? {} : { predictions: predictions.reference(bins) }),
    ...(target === undefined ? {} : { quality: target.score.quality() }),
  }
  return { profile, dropped, skipped, columns: columns.map(({ name, type }) => ({ name, type })) }
}
