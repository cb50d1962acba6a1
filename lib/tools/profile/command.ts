// `svc profile`: the drift reference profile (profile.ts) of a model's training rows, for a model
// trained elsewhere, so svc can watch its inputs (and its answers) drift as it does its own.
//
//   svc profile --input train.csv [--format csv|ndjson] [--model NAME [--version V] [--store S] [--target C]]
//               [--schema A,B:categorical | --exclude A,B] [--bins N] [--drop-missing] [--output F]
//
// The rows are read once, or twice when a column's type is inferred (build.ts); the profile is
// checked by `parseProfile`, as whatever reads it will check it, before it is written. Exit
// status: 0 written, 1 the model could not be loaded or the profile not written, 2 a bad command
// line or bad input (`train.csv:17: expected 5 fields, found 4`).
import { writeWhole } from '../write-whole.js'
import { extname, isAbsolute, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { argsProblem } from '../../core/args.js'
import { errorCode, errorMessage, SvcError } from '../../core/errors.js'
import { type Env, readS3Config, type S3Config } from '../../config/config.js'
import { DEFAULT_STORE_ROOT, parseStoreSpec, type StoreSpec } from '../../config/model-store.js'
import type { ServedModel } from '../../models/registry/registry.js'
import { binsWarning, defaultBins, MOST_DEFAULT_BINS } from './bins-warning.js'
import { buildProfile, type ColumnRequest, type ProfiledColumns } from './build.js'
import { ProfileInputError } from './errors.js'
import { loadModel } from './model.js'
import { parseProfile, predictionInput, serialiseProfile } from '../../models/profile.js'
import { FORMAT_OF_EXTENSION, FORMATS, type Format } from './table.js'

export type ProfileCommandOptions = Readonly<{
  /** The input file as given, for messages. */
  input: string
  format: Format
  delimiter: string
  model: string | undefined
  version: string | undefined
  store: StoreSpec
  /** --target: with --model, the column of true answers the model is scored against; not an input. */
  target: string | undefined
  /** --schema: the columns to profile, in order; undefined for every column. */
  schema: readonly ColumnRequest[] | undefined
  exclude: readonly string[]
  /** --bins; undefined for the most the rows afford (bins-warning.ts, defaultBins). */
  bins: number | undefined
  maxLevels: number
  isDroppingMissing: boolean
  /** Undefined for standard output. */
  output: string | undefined
}>

/** `env` gives an s3:// --store its S3 settings (AWS_REGION, SVC_S3_ENDPOINT, the keys), as the service reads them. */
export type ProfileIo = Readonly<{ stdout: (text: string) => void; stderr: (text: string) => void; env?: Env }>

/** A mistake in the command line: printed with a pointer to --help, exit 2. */
export class ProfileUsageError extends SvcError {
  override name = 'ProfileUsageError'
  readonly code = 'INVALID_ARGUMENTS'
}

/** The profile could not be written: exit 1. */
export class ProfileWriteError extends SvcError {
  override name = 'ProfileWriteError'
  readonly code = 'WRITE_FAILED'
}

export const PROFILE_USAGE = `Usage: svc profile --input FILE [options]

Writes the drift reference profile of a model's training rows: per column, quantile bins
(numerical) or level shares (categorical), as svc's own model artifacts carry them; with --model,
also those of the model's answers on the rows, and with --target their quality against the true
answers. JSON, on standard output or in --output.

Input
  --input FILE          the training rows (required); a payload log (SVC_PAYLOAD_LOG) as the
                        service writes it gives the rows of its svc.prediction events of --model;
                        an input SVC_PAYLOAD_LOG_EXCLUDE left out keeps the model's reference, its
                        values drawn from it for the model's answers
  --format F            csv or ndjson (default: from the extension: .csv, .tsv, .ndjson, .jsonl)
  --delimiter C         CSV field separator: one character, or tab (default ",", tab for .tsv)

Columns
  --model NAME          profile the model's inputs, typed as the model takes them, and its
                        predictions on the rows; the file's other columns are ignored
  --version V           with --model: the version to run (default: the manifest's default)
  --store PATH|URL      with --model: the model store, laid out as for SVC_MODEL_STORE: a
                        directory, an http(s):// base URL or s3://bucket/prefix (its S3 settings
                        from the environment, as svc reads them; default: the models shipped)
  --target COLUMN       with --model: the column of true answers (a class of the model, or a
                        number for a regressor), not an input. The answers are scored against it
                        into the profile's quality: accuracy and log_loss for a classifier, rmse,
                        mae and r2 for a regressor (r2 left out when every truth is the same),
                        which svc_model_reference_quality exports. Score held-out rows, not the
                        rows the model was fitted to. A missing truth is a missing value (below);
                        a truth that is not a class or a finite number stops the run, naming its
                        line
  --schema COLUMNS      without --model: the columns to profile, in order, each NAME,
                        NAME:numerical or NAME:categorical, comma-separated
  --exclude A,B         without --model or --schema: columns to leave out
  --max-levels N        most distinct values of a categorical column found in the data
                        (default 1000): more is an identifier or free text, not a feature

Profile
  --bins N              most quantile bins per numerical column and for a regressor's
                        predictions, 2 to 1000 (default: the most, up to 10, that the rows
                        afford: 10 from 383 rows, 4 from 147 as iris's 150, 2 from 77). Too many
                        for the rows, and drift checks would alarm on sampling noise: a warning
                        then names the columns and the most bins that avoid it
  --drop-missing        leave out rows with a missing value instead of stopping at the first
  --output FILE         write the profile to FILE, replaced whole (default: standard output)

Column types. With --model, the model's inputs give them, and a categorical value must be one of
the input's levels. Otherwise --schema may give them; a column it leaves untyped, and every
column without --schema, is numerical when every value in it is a finite number (CSV: decimal
text such as 12, -0.5 or 1e-3; NDJSON: a JSON number), else categorical, its levels the values
found, sorted. Without --model or --schema every column is profiled but those --exclude names
and, in CSV, those with an empty name in the header.

Missing values: an empty CSV field; in NDJSON null, "" or an absent member. A missing value in a
profiled column stops the run, naming its line, unless --drop-missing leaves its row out.

CSV as RFC 4180: a header row, then one record per line (CRLF or LF); a quoted field may hold
delimiters, line breaks and "" for a quote; empty lines are skipped. NDJSON: one JSON object per
line. Either in UTF-8.

Exit status: 0 written; 1 the model could not be loaded or the profile not written; 2 a bad
command line or bad input, named as FILE:LINE: what is wrong.
`

const TYPED = /^(.+):(numerical|categorical)$/
const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:/

const list = (raw: string | undefined): string[] =>
  raw === undefined
    ? []
    : raw
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean)

const integer = (raw: string | undefined, flag: string, fallback: number, min: number, max: number): number => {
  if (raw === undefined) return fallback
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!(n >= min && n <= max)) throw new ProfileUsageError(`${flag} ${raw}: expected an integer from ${min} to ${max}`)
  return n
}

const parseSchema = (raw: string): ColumnRequest[] => {
  const columns = list(raw).map((entry): ColumnRequest => {
    const typed = TYPED.exec(entry)
    if (typed !== null) return { name: typed[1] as string, type: typed[2] as 'numerical' | 'categorical' }
    if (entry.includes(':')) throw new ProfileUsageError(`--schema ${entry}: a type is numerical or categorical`)
    return { name: entry }
  })
  if (columns.length === 0) throw new ProfileUsageError('--schema names no column')
  columns.forEach(({ name }, i) => {
    if (columns.findIndex((column) => column.name === name) !== i) throw new ProfileUsageError(`--schema names ${name} twice`)
  })
  return columns
}

/** --store as SVC_MODEL_STORE takes it, except that a relative path is taken from the working directory. */
const parseStore = (raw: string | undefined): StoreSpec => {
  if (raw === undefined) return { kind: 'directory', root: DEFAULT_STORE_ROOT }
  const spec = raw === '' ? undefined : parseStoreSpec(isAbsolute(raw) || URL_LIKE.test(raw) ? raw : resolve(raw))
  if (spec === undefined)
    throw new ProfileUsageError(
      `--store ${raw}: expected a directory, a file:///path URL, an http(s):// base URL without query or fragment, or s3://bucket/prefix`,
    )
  return spec
}

const OPTIONS = {
  input: { type: 'string' },
  format: { type: 'string' },
  delimiter: { type: 'string' },
  model: { type: 'string' },
  version: { type: 'string' },
  store: { type: 'string' },
  target: { type: 'string' },
  schema: { type: 'string' },
  exclude: { type: 'string' },
  'max-levels': { type: 'string' },
  bins: { type: 'string' },
  'drop-missing': { type: 'boolean' },
  output: { type: 'string' },
} as const

export const parseProfileArgs = (argv: readonly string[]): ProfileCommandOptions => {
  let values: Partial<Record<Exclude<keyof typeof OPTIONS, 'drop-missing'>, string>> & { 'drop-missing'?: boolean }
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values
  } catch (error: unknown) {
    throw new ProfileUsageError(argsProblem(error))
  }
  const input = values.input
  if (input === undefined || input === '') throw new ProfileUsageError('--input is required')
  const extension = extname(input).toLowerCase()
  let format: Format
  if (values.format !== undefined) {
    const named = FORMATS.find((known) => known === values.format)
    if (named === undefined) throw new ProfileUsageError(`--format ${values.format}: expected csv or ndjson`)
    format = named
  } else {
    const found = FORMAT_OF_EXTENSION[extension]
    if (found === undefined)
      throw new ProfileUsageError(`--input ${input}: the extension does not say the format (.csv, .tsv, .ndjson, .jsonl); add --format csv or --format ndjson`)
    format = found
  }
  let delimiter = extension === '.tsv' ? '\t' : ','
  if (values.delimiter !== undefined) {
    if (format !== 'csv') throw new ProfileUsageError('--delimiter applies to CSV only')
    delimiter = values.delimiter === 'tab' ? '\t' : values.delimiter
    if (delimiter.length !== 1 || '"\r\n'.includes(delimiter))
      throw new ProfileUsageError(`--delimiter ${JSON.stringify(values.delimiter)}: expected one character other than a quote or a line break, or tab`)
  }

  const model = values.model
  if (model === '') throw new ProfileUsageError('--model needs a name')
  if (model === undefined) {
    for (const flag of ['version', 'store', 'target'] as const)
      if (values[flag] !== undefined) throw new ProfileUsageError(`--${flag} applies with --model only`)
  } else {
    for (const flag of ['schema', 'exclude'] as const)
      if (values[flag] !== undefined) throw new ProfileUsageError(`--${flag} does not go with --model: the model's inputs are the columns`)
  }
  if (values.version === '') throw new ProfileUsageError('--version needs a version')
  if (values.target === '') throw new ProfileUsageError('--target needs a column')
  if (values.schema !== undefined && values.exclude !== undefined)
    throw new ProfileUsageError('--exclude does not go with --schema: --schema lists the columns')

  const output = values.output === undefined || values.output === '-' ? undefined : values.output
  if (output !== undefined && resolve(output) === resolve(input)) throw new ProfileUsageError(`--output ${output} is the input file`)
  return {
    input,
    format,
    delimiter,
    model,
    version: values.version,
    store: parseStore(values.store),
    target: values.target,
    schema: values.schema === undefined ? undefined : parseSchema(values.schema),
    exclude: list(values.exclude),
    bins: values.bins === undefined ? undefined : integer(values.bins, '--bins', MOST_DEFAULT_BINS, 2, 1000),
    maxLevels: integer(values['max-levels'], '--max-levels', 1000, 1, 1_000_000),
    isDroppingMissing: values['drop-missing'] === true,
    output,
  }
}

/** Writes the profile whole (write-whole.ts): a reader never sees half a profile. */
const writeProfile = async (path: string, text: string): Promise<void> => {
  try {
    await writeWhole(path, text)
  } catch (error: unknown) {
    // A file system error: it has a code.
    throw new ProfileWriteError(`cannot write ${path}: ${errorCode(error)}`)
  }
}

/** The model's inputs as the columns, and the target, which must not be one of them. */
const modelColumns = ({ model, predictor }: ServedModel, target: string | undefined): ProfiledColumns => {
  if (target === undefined) return { kind: 'model', model, predictor }
  if (model.inputs.some((input) => input.name === target))
    throw new ProfileUsageError(`--target ${target} is an input of model ${model.name}: name the column of true answers`)
  return { kind: 'model', model, predictor, target }
}

/** The quality as the summary line shows it: four significant digits (the file holds every digit). */
const qualityText = (quality: Readonly<Record<string, number>>): string =>
  Object.entries(quality)
    .map(([metric, value]) => `${metric} ${Number(value.toPrecision(4))}`)
    .join(', ')

/** An s3:// store's settings from the environment; a ProfileUsageError naming the variables when they are wrong. */
const s3Of = (store: StoreSpec, io: ProfileIo): S3Config | undefined => {
  if (store.kind !== 's3') return undefined
  try {
    return readS3Config(io.env ?? {}, store)
  } catch (error: unknown) {
    throw new ProfileUsageError(`--store s3://${store.bucket}/${store.prefix}: ${errorMessage(error)}`)
  }
}

/**
 * Builds, checks and writes the profile; resolves with what goes to stderr: the summary line, then a
 * warning when the bins are too many for the rows (bins-warning.ts).
 */
export const runProfile = async (options: ProfileCommandOptions, io: ProfileIo): Promise<string> => {
  const served: ServedModel | undefined =
    options.model === undefined
      ? undefined
      : await loadModel({ store: options.store, name: options.model, version: options.version, s3: s3Of(options.store, io) })
  try {
    const columns: ProfiledColumns =
      served !== undefined
        ? modelColumns(served, options.target)
        : options.schema !== undefined
          ? { kind: 'listed', columns: options.schema }
          : { kind: 'all', exclude: options.exclude }
    const {
      profile,
      dropped,
      skipped,
      filled,
      columns: typed,
    } = await buildProfile({
      source: { path: options.input, file: options.input, format: options.format, delimiter: options.delimiter, model: options.model },
      columns,
      bins: options.bins ?? defaultBins,
      maxLevels: options.maxLevels,
      dropMissing: options.isDroppingMissing,
    })
    const text = serialiseProfile(profile)
    // What reads it checks it so; a profile this writes must pass.
    parseProfile(text, served === undefined ? undefined : { inputs: served.model.inputs, predictions: predictionInput(served.model) })
    if (options.output === undefined) io.stdout(text)
    else await writeProfile(options.output, text)
    const numerical = typed.filter((column) => column.type === 'numerical').length
    return [
      `svc profile: wrote ${options.output ?? 'the profile to standard output'}: ${profile.rows} rows of ${options.input}`,
      dropped === 0 ? '' : ` (${dropped} more left out for a missing value)`,
      skipped === 0 ? '' : ` (${skipped} other payload log events skipped)`,
      `, ${numerical} numerical and ${typed.length - numerical} categorical columns`,
      served === undefined ? '' : `, predictions of ${served.name} version ${served.version}`,
      profile.quality === undefined ? '' : ` scored against ${options.target}: ${qualityText(profile.quality)}`,
      '\n',
      filled === '' ? '' : `svc profile: ${filled}; its reference kept as it was\n`,
      binsWarning(profile, options.bins ?? MOST_DEFAULT_BINS),
    ].join('')
  } finally {
    await served?.predictor.dispose()
  }
}

/** `svc profile …` from its arguments to its exit status. */
export const runProfileCommand = async (argv: readonly string[], io: ProfileIo): Promise<number> => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(PROFILE_USAGE)
    return 0
  }
  try {
    io.stderr(await runProfile(parseProfileArgs(argv), io))
    return 0
  } catch (error: unknown) {
    const isUsage = error instanceof ProfileUsageError
    io.stderr(`svc profile: ${errorMessage(error)}\n${isUsage ? 'svc profile --help lists the options.\n' : ''}`)
    return isUsage || error instanceof ProfileInputError ? 2 : 1
  }
}
