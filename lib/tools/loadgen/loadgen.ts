// `svc loadgen`: prediction traffic against a running service, replayed from rows like the model's
// training data and optionally shifted, so a user can watch drift rise on /metrics and the drift
// alerts fire.
//
//   svc loadgen --model iris [--version V] [--rows FILE] [--url http://127.0.0.1:8000[,http://…]]
//               [--shift 1.5] [--features a,b] [--rate 50] [--duration 60s] [--batch 1]
//               [--concurrency 32] [--seed N] [--header NAME:VALUE]… [--token T]
//               [--feedback [--label COLUMN] [--label-noise 0.3[,VERSION=0.5]]…]
//
// It reads the model's inputs, versions and sha256 from GET /api/v1/models/{name} on the first
// instance, then the rows (rows.ts: --rows, or those svc ships for the default build), shifts them
// (replay.ts) and sends `rate` POST /api/v1/predict requests a second, each with `batch` rows taken
// in the replay's order (and `version` with --version: the body member that names a version, as
// /v2/models/{name}/versions/{version}/infer does in its path), for `duration`; request i goes to
// instance i mod n. --header and --token go on every request, for a fleet behind SVC_API_TOKENS or
// a proxy that wants its own header. At most `concurrency`
// requests are in flight; a request that would exceed that is not sent and is reported as skipped,
// so a slow service shows up as a shortfall rather than a queue. Progress goes to `write` every
// 5 s, then a summary, per instance when there are several. With --feedback the rows' labels go
// back to the fleet (feedback.ts), from the rows' label column (labels.ts), and the summary says
// what became of them. Exit status: 0 when every request succeeded and every label was accepted.
import { extname } from 'node:path'
import { parseArgs } from 'node:util'
import { Invalid, token as bearerToken } from '../../config/parsers.js'
import { argsProblem } from '../../core/args.js'
import { itemAt } from '../../core/items.js'
import { isObject, type JsonObject } from '../../core/json.js'
import { checkFeature } from '../../models/profile.js'
import type { Input } from '../../models/runtime.js'
import { type Draw, FILL_SEED, filledNote, referenceDraw } from '../profile/fill.js'
import { FORMAT_OF_EXTENSION, type TableSource } from '../profile/table.js'
import { failureStatus, LoadgenUsageError } from './errors.js'
import { createFeedbackSender, FEEDBACK_BATCH, type FeedbackSender, type FeedbackTally } from './feedback.js'
import { drawNoise, noisyTruth, REGRESSION_NOISE, type LabelColumn, type NoiseDraw, type Truth } from './labels.js'
import { mulberry32 } from './random.js'
import { createReplay, shiftedInputs, shiftRows } from './replay.js'
import { readRows, shippedRows, type Row } from './rows.js'

export type LoadgenOptions = Readonly<{
  /** The instances, sent to in turn; the first describes the model. */
  urls: readonly URL[]
  model: string
  /** --version: the version every request names; undefined to name none (the default, or the canary's share). */
  version: string | undefined
  /** --header and --token, by lower-case name: sent on every request. */
  headers: Readonly<Record<string, string>>
  /** --rows; undefined for the rows svc ships for the model. */
  rows: TableSource | undefined
  shift: number
  /** Inputs to shift; empty for every numerical input. */
  features: readonly string[]
  rate: number
  durationMs: number
  batch: number
  concurrency: number
  /** Seeds the order the rows are sent in, and the label noise. */
  seed: number
  /** Each request's time limit. */
  timeoutMs: number
  /** --feedback: send the rows' labels back. */
  feedback: boolean
  /** --label; undefined for the model's first output. */
  label: string | undefined
  /** --label-noise: the share of labels made wrong, 0 to 1, for a version `versionNoise` does not name. */
  labelNoise: number
  /** --label-noise VERSION=P: the share for the labels of the rows that version answered. */
  versionNoise: ReadonlyMap<string, number>
}>

export type InstanceSummary = Readonly<{ url: string; sent: number; ok: number; failed: number; byStatus: Readonly<Record<string, number>> }>

export type LoadgenSummary = Readonly<{
  sent: number
  ok: number
  failed: number
  skipped: number
  rows: number
  byStatus: Readonly<Record<string, number>>
  /** Per instance, in --url order. */
  instances: readonly InstanceSummary[]
  /** What became of the labels; undefined without --feedback. */
  feedback: Readonly<FeedbackTally> | undefined
}>

export const LOADGEN_USAGE = `Usage: svc loadgen --model NAME [options]

Sends rows to a running svc as prediction traffic: every row once per cycle, in a seeded shuffled
order, optionally shifted to make drift.
  --model NAME        model to predict with (required)
  --version V         name version V in every request (POST /api/v1/predict's "version"): a
                      canary or any other version the model serves, which then answers every
                      request (default: none named, so the default version answers, and a canary
                      its percent); the rows are read for the default version's inputs
  --rows FILE         the rows to send: CSV, TSV or NDJSON by extension (.csv, .tsv, .ndjson,
                      .jsonl), read as svc profile reads them (a payload log replays the rows of
                      its svc.prediction events of --model, an input SVC_PAYLOAD_LOG_EXCLUDE left
                      out drawn from the model's reference); only the model's inputs are sent,
                      an empty CSV field or NDJSON null as null, and with --feedback the labels
                      (default: for a model shipped with svc, the rows its reference was built
                      from, with their labels)
  --url URL[,URL…]    the service, or several instances of it, comma-separated, sent to in turn
                      (request i to instance i mod n); the first describes the model
                      (default http://127.0.0.1:8000)
  --shift K           move the shifted features by K standard deviations of their values in the
                      rows (default 0)
  --features A,B      numerical inputs to shift (default: every numerical input)
  --rate N            requests per second (default 50)
  --duration D        how long: 90s, 2m, 500ms or seconds (default 60s)
  --batch N           rows per request (default 1)
  --concurrency N     most requests in flight (default 32)
  --seed N            seeds the order of the rows and the label noise, to repeat a run (default:
                      random, printed)
  --timeout D         each request's time limit (default 10s)
  --header NAME:VALUE add a header to every request, predictions, feedback and the model's
                      description alike; repeat for several (not Content-Type, Host or a framing
                      header, which loadgen sets)
  --token T           send "Authorization: Bearer T" on every request: one of the instances'
                      SVC_API_TOKENS
  --feedback          send each answered row's label back to POST /api/v1/feedback with the token
                      the answer carried (the instances need SVC_FEEDBACK_SECRET), to the instance
                      after the one that answered (one instance: itself), ${FEEDBACK_BATCH} labels a
                      request; the summary counts them: accepted (scored), refused by reason
                      (invalid_token: another secret; duplicate, expired, invalid_truth,
                      unknown_version: see /api/v1/feedback), failed (no 200 answer)
  --label COLUMN      the rows' column of labels (default: the model's first output, which the rows
                      svc ships end with: iris species, cars miles_per_gallon)
  --label-noise P     make a share P (0 to 1) of the labels wrong: a class becomes another class, a
                      number moves by ${REGRESSION_NOISE * 100} % of itself up or down (default 0).
                      VERSION=P sets the share for the rows that version answered, so a canary's
                      labels can be worse than the default's; the plain P is every other
                      version's. Comma-separated or repeated: --label-noise 0.05,2=0.3 or
                      --label-noise 0.05 --label-noise 2=0.3. A label wrong at 0.05 is wrong at 0.3
                      too, for the same seed

Progress (every 5 s) and the summary count requests sent, ok, failed and skipped. A skipped
request was due but never sent: --concurrency requests were already in flight, waiting on
answers, so the service answered too slowly for --rate. It is not retried later: the run sends
fewer than rate × duration, and the exit status is 1. Raise --concurrency, or lower --rate.
Exit status: 0 every request sent and answered 2xx (and with --feedback every label accepted); 1
otherwise; 2 a bad command line or rows file, or a --version or --label-noise version the model
does not serve.
`

/** How often progress is written; tests write it more often. */
export const PROGRESS_EVERY_MS = 5000
const TICK_MS = 10
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

const number = (raw: string | undefined, flag: string, fallback: number, check: (n: number) => boolean, accepted: string): number => {
  if (raw === undefined) return fallback
  const n = raw.trim() === '' ? Number.NaN : Number(raw)
  if (!check(n)) throw new LoadgenUsageError(`${flag} ${raw}: expected ${accepted}`)
  return n
}
const milliseconds = (raw: string | undefined, flag: string, fallback: number): number => {
  if (raw === undefined) return fallback
  const match = DURATION.exec(raw)
  const ms = match === null ? 0 : Number(match[1]) * (UNIT_MS[match[2] ?? 's'] as number)
  if (!(ms >= 1)) throw new LoadgenUsageError(`${flag} ${raw}: expected a duration of at least 1 ms, such as 90s, 2m or 500ms`)
  return ms
}
const isPositiveInteger = (n: number): boolean => Number.isSafeInteger(n) && n >= 1

const parseUrls = (raw: string): URL[] => {
  const urls = raw.split(',').map((piece) => {
    const text = piece.trim()
    const url = URL.canParse(text) ? new URL(text) : undefined
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new LoadgenUsageError(`--url ${raw}: ${JSON.stringify(text)} is not an http:// or https:// URL (several are comma-separated)`)
    return url
  })
  urls.forEach((url, i) => {
    if (urls.findIndex((other) => other.href === url.href) !== i) throw new LoadgenUsageError(`--url ${raw}: names ${url.href} twice`)
  })
  return urls
}

const parseRows = (file: string): TableSource => {
  if (file === '') throw new LoadgenUsageError('--rows needs a file')
  const extension = extname(file).toLowerCase()
  const format = FORMAT_OF_EXTENSION[extension]
  if (format === undefined) throw new LoadgenUsageError(`--rows ${file}: the extension does not say the format: .csv, .tsv, .ndjson or .jsonl`)
  return { path: file, file, format, delimiter: extension === '.tsv' ? '\t' : ',' }
}

type FeedbackOptions = Pick<LoadgenOptions, 'feedback' | 'label' | 'labelNoise' | 'versionNoise'>

/** --label-noise's values, each `P` or `VERSION=P`, comma-separated or repeated: one plain share at most, one per version. */
const parseNoise = (raws: readonly string[]): Pick<LoadgenOptions, 'labelNoise' | 'versionNoise'> => {
  let every: number | undefined
  const versionNoise = new Map<string, number>()
  for (const raw of raws)
    for (const item of raw.split(',')) {
      const text = item.trim()
      const at = text.indexOf('=')
      const version = at === -1 ? undefined : text.slice(0, at).trim()
      const shareText = (at === -1 ? text : text.slice(at + 1)).trim()
      const share = shareText === '' ? Number.NaN : Number(shareText)
      if (version === '' || !(share >= 0 && share <= 1)) throw new LoadgenUsageError(`--label-noise ${text}: expected a share from 0 to 1, or VERSION=share`)
      if (version === undefined) {
        if (every !== undefined) throw new LoadgenUsageError(`--label-noise ${raws.join(' ')}: gives the share for every version twice`)
        every = share
      } else {
        if (versionNoise.has(version)) throw new LoadgenUsageError(`--label-noise ${raws.join(' ')}: gives version ${version}'s share twice`)
        versionNoise.set(version, share)
      }
    }
  return { labelNoise: every ?? 0, versionNoise }
}

/** --feedback and what goes with it; --label and --label-noise are refused without it. */
const parseFeedback = (feedback: boolean | undefined, label: string | undefined, noise: readonly string[] | undefined): FeedbackOptions => {
  if (feedback !== true && (label !== undefined || noise !== undefined)) throw new LoadgenUsageError('--label and --label-noise go with --feedback')
  if (label?.trim() === '') throw new LoadgenUsageError('--label needs the name of a column')
  return { feedback: feedback === true, label: label?.trim(), ...parseNoise(noise ?? []) }
}

/** RFC 9110 §5.6.2: a field name is a token. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** What loadgen sets itself (Content-Type), or the connection carries (Host from --url, the framing): a --header of these is refused. */
const SET_BY_LOADGEN: ReadonlySet<string> = new Set([
  'content-type',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
])

/**
 * --header NAME:VALUE (repeated) and --token, by lower-case name. A value may be a secret: messages
 * name the header, never its value.
 */
const parseHeaders = (raws: readonly string[], token: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const raw of raws) {
    const colon = raw.indexOf(':')
    const name = (colon === -1 ? raw : raw.slice(0, colon)).trim()
    const value = colon === -1 ? '' : raw.slice(colon + 1).trim()
    if (!FIELD_NAME.test(name))
      throw new LoadgenUsageError(`--header ${JSON.stringify(name)}: expected NAME:VALUE, NAME a header name (letters, digits and !#$%&'*+-.^_\`|~)`)
    const key = name.toLowerCase()
    if (SET_BY_LOADGEN.has(key)) throw new LoadgenUsageError(`--header ${name}: loadgen sets it (or the connection does); it cannot be given`)
    if (value === '' || /[\r\n\0]/.test(value)) throw new LoadgenUsageError(`--header ${name}: expected a value after the colon, on one line`)
    if (Object.hasOwn(headers, key)) throw new LoadgenUsageError(`--header ${name}: given twice`)
    headers[key] = value
  }
  if (token === undefined) return headers
  const parsed = bearerToken(token)
  if (parsed instanceof Invalid) throw new LoadgenUsageError(`--token: ${parsed.reasons.join('; ')} (one of the instances' SVC_API_TOKENS)`)
  if (parsed === undefined) throw new LoadgenUsageError('--token needs a token')
  if (Object.hasOwn(headers, 'authorization')) throw new LoadgenUsageError('--token and --header Authorization: give one of them')
  headers['authorization'] = `Bearer ${parsed}`
  return headers
}

export const parseLoadgenArgs = (argv: readonly string[]): LoadgenOptions => {
  const options = {
    model: { type: 'string' },
    version: { type: 'string' },
    rows: { type: 'string' },
    url: { type: 'string' },
    shift: { type: 'string' },
    features: { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    batch: { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    timeout: { type: 'string' },
    header: { type: 'string', multiple: true },
    token: { type: 'string' },
    feedback: { type: 'boolean' },
    label: { type: 'string' },
    'label-noise': { type: 'string', multiple: true },
  } as const
  let values: Partial<Record<Exclude<keyof typeof options, 'feedback' | 'header' | 'label-noise'>, string>> & {
    feedback?: boolean
    header?: string[]
    'label-noise'?: string[]
  }
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values
  } catch (error: unknown) {
    throw new LoadgenUsageError(argsProblem(error))
  }
  if (values.model === undefined || values.model === '') throw new LoadgenUsageError('--model is required')
  if (values.version?.trim() === '') throw new LoadgenUsageError('--version needs a version')
  return {
    urls: parseUrls(values.url ?? 'http://127.0.0.1:8000'),
    model: values.model,
    version: values.version?.trim(),
    headers: parseHeaders(values.header ?? [], values.token),
    rows: values.rows === undefined ? undefined : parseRows(values.rows),
    shift: number(values.shift, '--shift', 0, Number.isFinite, 'a number of standard deviations'),
    features:
      values.features === undefined
        ? []
        : values.features
            .split(',')
            .map((name) => name.trim())
            .filter(Boolean),
    rate: number(values.rate, '--rate', 50, (n) => n > 0 && n <= 100_000, 'a rate above 0 and at most 100000'),
    durationMs: milliseconds(values.duration, '--duration', 60_000),
    batch: number(values.batch, '--batch', 1, isPositiveInteger, 'a positive integer'),
    concurrency: number(values.concurrency, '--concurrency', 32, isPositiveInteger, 'a positive integer'),
    seed: number(values.seed, '--seed', Math.floor(Math.random() * 2 ** 32), (n) => Number.isSafeInteger(n) && n >= 0, 'a non-negative integer'),
    timeoutMs: milliseconds(values.timeout, '--timeout', 10_000),
    ...parseFeedback(values.feedback, values.label, values['label-noise']),
  }
}

/** What loadgen reads of GET /api/v1/models/{name}. */
type Described = Readonly<{
  version: string
  /** Every version loaded and servable. */
  versions: readonly string[]
  sha256: string
  /** Each with its reference distribution, less its name and type; null when the model has none. */
  inputs: readonly (Input & Readonly<{ reference?: object | null }>)[]
  task: 'classification' | 'regression'
  outputs: readonly Readonly<{ name: string }>[]
  classes?: readonly string[]
}>

/** The model as the first instance describes it; throws with the service's own problem detail. */
const describe = async (options: LoadgenOptions): Promise<Described> => {
  const url = new URL(`api/v1/models/${encodeURIComponent(options.model)}`, withSlash(itemAt(options.urls, 0)))
  const response = await fetch(url, { headers: options.headers, signal: AbortSignal.timeout(options.timeoutMs) })
  const answer: unknown = await response.json()
  const body: JsonObject = isObject(answer) ? answer : {}
  if (!response.ok) throw new Error(`GET ${url.pathname}: ${response.status} ${body['detail'] ?? ''}`.trim())
  // A model that is not served is described without inputs (its `state` says why).
  if (!isDescribed(body)) throw new Error(`model ${options.model} is ${body['state'] ?? 'not served'}: nothing to predict with`)
  checkVersions(options, body.versions)
  return body
}

/** Whether a 200's body describes a served model: its inputs and versions, the members every run reads. */
const isDescribed = (body: JsonObject): body is JsonObject & Described => Array.isArray(body['inputs']) && Array.isArray(body['versions'])

/** --version and --label-noise's versions must be versions the model serves: a typo would otherwise send nothing useful. */
const checkVersions = (options: LoadgenOptions, served: readonly string[]): void => {
  const serves = `model ${options.model} serves version${served.length === 1 ? '' : 's'} ${served.join(', ')}`
  if (options.version !== undefined && !served.includes(options.version)) throw new LoadgenUsageError(`--version ${options.version}: ${serves}`)
  for (const version of options.versionNoise.keys())
    if (!served.includes(version)) throw new LoadgenUsageError(`--label-noise ${version}=${options.versionNoise.get(version)}: ${serves}`)
}

const withSlash = (url: URL): URL => new URL(url.pathname.endsWith('/') ? url.href : `${url.href}/`)

/** An instance as lines name it: its origin and base path, never a user name or password. */
const nameOf = (url: URL): string => url.origin + url.pathname.replace(/\/$/, '')

const counts = (byStatus: Readonly<Record<string, number>>): string =>
  Object.entries(byStatus)
    .sort()
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ')

/** What one instance was sent and answered; `failed` is filled in at the end. */
type InstanceTally = { url: string; sent: number; ok: number; failed: number; byStatus: Record<string, number> }

/** The run's counts so far, over every instance, and each instance's. */
type Tally = { sent: number; ok: number; skipped: number; inFlight: number; byStatus: Record<string, number>; instances: InstanceTally[] }

/** A share as a percentage; toPrecision: 0.07 × 100 is 7.000000000000001 in binary floating point. */
const percent = (share: number): string => `${Number((share * 100).toPrecision(12))} %`

/** What the start line says of the labels: none without --feedback. */
const labelsText = (options: LoadgenOptions, label: LabelColumn | undefined): string => {
  if (label === undefined) return ''
  const { labelNoise, versionNoise } = options
  const each = [...versionNoise].map(([version, share]) => `version ${version}: ${percent(share)}`).join(', ')
  const noise = labelNoise === 0 && each === '' ? '' : `, ${percent(labelNoise)} of them wrong${each === '' ? '' : ` (${each})`}`
  return `; labels from ${label.name} to ${options.urls.length > 1 ? 'the next instance' : 'the same instance'}${noise}`
}

/** The line a run starts with: what it sends, where, how fast, from which rows. */
const startLine = (options: LoadgenOptions, version: string, names: readonly string[], rows: number, file: string, shifted: readonly string[]): string => {
  const shiftText = options.shift === 0 ? 'no shift' : `${shifted.join(', ')} shifted by ${options.shift} sd`
  const named = options.version === undefined ? `version ${version}` : `version ${options.version} named in every request`
  return (
    `loadgen: ${options.model} ${named} at ${names.join(', ')}${names.length > 1 ? ' in turn' : ''}, ` +
    `${options.rate} req/s × ${options.batch} rows for ${options.durationMs / 1000} s, ` +
    `${rows} rows of ${file}, ${shiftText}, seed ${options.seed}`
  )
}

/**
 * With --feedback: each row's truth (by index), the column they come from, the noise drawn for each
 * label as its row is sent, and where the labels go.
 */
type Labels = Readonly<{ truths: readonly Truth[]; label: LabelColumn; draw: () => NoiseDraw; sender: FeedbackSender }>

/**
 * Where requests go and what they carry: `rows[next()]`, with `labels` their truths; `body` a
 * request's JSON text, `headers` those of every POST.
 */
type Traffic = Readonly<{
  options: LoadgenOptions
  targets: readonly URL[]
  rows: readonly Row[]
  next: () => number
  labels: Labels | undefined
  body: (rows: readonly Row[]) => string
  headers: Readonly<Record<string, string>>
}>

/** The labels of `picks` as sent for the rows `version` answered: each truth with that version's share of noise. */
const truthsOf = (options: LoadgenOptions, labels: Labels, picks: readonly number[], draws: readonly NoiseDraw[]) => (version: string) => {
  const share = options.versionNoise.get(version) ?? options.labelNoise
  return picks.map((i, j) => noisyTruth(labels.label, itemAt(labels.truths, i), itemAt(draws, j), share))
}

/**
 * One request of the rows `picks` to instance `k`; its answer, or why there was none, counted in
 * `tally`. With --feedback a 200's tokens and the rows' truths, with the noise `draws` at the share
 * of the version that answered, go to the sender.
 */
const send = async (traffic: Traffic, k: number, picks: readonly number[], draws: readonly NoiseDraw[], tally: Tally): Promise<void> => {
  const { options, labels } = traffic
  const instance = itemAt(tally.instances, k)
  let status: string
  try {
    const response = await fetch(itemAt(traffic.targets, k), {
      method: 'POST',
      headers: traffic.headers,
      body: traffic.body(picks.map((i) => itemAt(traffic.rows, i))),
      signal: AbortSignal.timeout(options.timeoutMs),
    })
    if (labels !== undefined && response.ok) labels.sender.answered(k, await response.text(), picks.length, truthsOf(options, labels, picks, draws))
    else await response.arrayBuffer()
    status = String(response.status)
    if (response.ok) {
      tally.ok++
      instance.ok++
    }
  } catch (error: unknown) {
    status = failureStatus(error)
  }
  tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1
  instance.byStatus[status] = (instance.byStatus[status] ?? 0) + 1
}

const NO_DRAWS: readonly NoiseDraw[] = Object.freeze([])

/** Sends what is due by `elapsed`, each to the next instance in turn; skips what would pass the concurrency. */
const sendDue = (traffic: Traffic, tally: Tally, elapsed: number, pending: Set<Promise<void>>): void => {
  const { options, next, labels } = traffic
  const due = Math.floor((elapsed / 1000) * options.rate) - tally.sent - tally.skipped
  for (let i = 0; i < due; i++) {
    if (tally.inFlight >= options.concurrency) {
      tally.skipped++
      continue
    }
    const k = tally.sent % tally.instances.length
    const instance = itemAt(tally.instances, k)
    tally.sent++
    instance.sent++
    tally.inFlight++
    // Drawn now, in request order: the rows a run sends, and the noise in their labels, do not depend on when answers come.
    const picks = Array.from({ length: options.batch }, next)
    const draws = labels === undefined ? NO_DRAWS : picks.map(labels.draw)
    const request = send(traffic, k, picks, draws, tally).finally(() => {
      tally.inFlight--
      pending.delete(request)
    })
    pending.add(request)
  }
}

/** Sends on every tick for the run's duration, writing progress every `progressEveryMs`; resolves once every request is answered. */
const drive = async (traffic: Traffic, tally: Tally, start: number, write: (line: string) => void, progressEveryMs: number): Promise<void> => {
  const { durationMs } = traffic.options
  const pending = new Set<Promise<void>>()
  let lastProgress = start
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now()
      const elapsed = Math.min(now - start, durationMs)
      sendDue(traffic, tally, elapsed, pending)
      if (now - lastProgress >= progressEveryMs) {
        lastProgress = now
        const { instances } = tally
        const each = instances.length > 1 ? `; ${instances.map((instance) => `${instance.url} ${instance.ok} ok`).join(', ')}` : ''
        write(`  ${Math.round(elapsed / 1000)} s: sent ${tally.sent}, ok ${tally.ok}, in flight ${tally.inFlight}, skipped ${tally.skipped}${each}`)
      }
      if (elapsed >= durationMs) {
        clearInterval(timer)
        resolve()
      }
    }, TICK_MS)
  })
  await Promise.all(pending)
  await traffic.labels?.sender.flush()
}

/** The line that says what became of the labels. */
const labelsLine = ({ labels, requests, accepted, refused, failed, untokened, byStatus }: FeedbackTally): string => {
  const reasons = counts(refused)
  const statuses = counts(byStatus)
  const refusedCount = Object.values(refused).reduce((sum, n) => sum + n, 0)
  return (
    `loadgen: labels: sent ${labels} in ${requests} requests, ${accepted} accepted, ${refusedCount} refused${reasons === '' ? '' : ` (${reasons})`}, ` +
    `${failed} failed${untokened === 0 ? '' : `, ${untokened} rows answered without a token (is SVC_FEEDBACK_SECRET set?)`}` +
    (statuses === '' ? '' : `; ${statuses}`)
  )
}

/** Whether a run went as asked: every request answered 200, and with --feedback every label accepted. */
export const isCleanRun = ({ failed, skipped, feedback }: LoadgenSummary): boolean =>
  failed === 0 && skipped === 0 && (feedback === undefined || (feedback.accepted === feedback.labels && feedback.untokened === 0))

/** The summary of a finished run, written out (per instance too when there are several, then the labels) and returned. */
const summarise = (tally: Tally, batch: number, seconds: number, write: (line: string) => void, feedback: FeedbackTally | undefined): LoadgenSummary => {
  const { sent, ok, skipped, byStatus, instances } = tally
  const failed = sent - ok
  for (const instance of instances) instance.failed = instance.sent - instance.ok
  const statuses = counts(byStatus)
  write(
    `loadgen: sent ${sent} requests (${sent * batch} rows) in ${seconds.toFixed(1)} s, ${ok} ok, ${failed} failed, ${skipped} skipped` +
      (statuses === '' ? '' : `; ${statuses}`),
  )
  if (instances.length > 1)
    for (const instance of instances) {
      const each = counts(instance.byStatus)
      write(`  ${instance.url}: sent ${instance.sent}, ${instance.ok} ok, ${instance.failed} failed${each === '' ? '' : `; ${each}`}`)
    }
  if (feedback !== undefined) write(labelsLine(feedback))
  return { sent, ok, failed, skipped, rows: ok * batch, byStatus, instances, feedback }
}

/** The label column a run with --feedback reads: --label, else the model's first output. */
const labelColumn = (options: LoadgenOptions, model: Described): LabelColumn | undefined => {
  if (!options.feedback) return undefined
  const classes = model.task === 'classification' ? model.classes : undefined
  if (options.label !== undefined) return { name: options.label, classes, namedBy: '--label' }
  const output = itemAt(model.outputs, 0).name
  return { name: output, classes, namedBy: `the model's output; --label COLUMN names another` }
}

/**
 * The draw of each input from the reference the service describes (fill.ts), for the inputs a payload
 * log left out. Each reference is checked as a profile's entry is (a ProfileError naming the member).
 */
const referenceDraws = (model: Described, name: string, seed: number): ((name: string) => Draw | undefined) => {
  const random = mulberry32(seed ^ FILL_SEED)
  const draws = new Map<string, Draw>()
  model.inputs.forEach((input, j) => {
    if (!isObject(input.reference)) return
    const reference = checkFeature({ ...input.reference, name: input.name, type: input.type }, `model ${name} inputs[${j}].reference`, input)
    draws.set(input.name, referenceDraw(input, reference, random))
  })
  return (input) => draws.get(input)
}

/** Seeds the label noise apart from the order, so the rows sent are the same with or without noise. */
const NOISE_SEED = 0x6c61_6265

export const runLoadgen = async (options: LoadgenOptions, write: (line: string) => void, progressEveryMs = PROGRESS_EVERY_MS): Promise<LoadgenSummary> => {
  const model = await describe(options)
  const shifted = shiftedInputs(model.inputs, options.features, options.shift, options.model)
  const source = options.rows ?? (await shippedRows(options.model, model.version, model.sha256))
  const label = labelColumn(options, model)
  const { rows, truths, skipped, filled } = await readRows(source, model.inputs, options.model, label, referenceDraws(model, options.model, options.seed))
  const bases = options.urls.map(withSlash)
  const headers = { ...options.headers, 'content-type': 'application/json' }
  const random = mulberry32(options.seed ^ NOISE_SEED)
  const labels: Labels | undefined =
    label === undefined
      ? undefined
      : { truths, label, draw: () => drawNoise(random), sender: createFeedbackSender(bases, { headers, timeoutMs: options.timeoutMs }) }
  const { model: name, version } = options
  const traffic: Traffic = {
    options,
    targets: bases.map((base) => new URL('api/v1/predict', base)),
    rows: shiftRows(rows, shifted, options.shift, source.file),
    next: createReplay(rows.length, mulberry32(options.seed)),
    labels,
    body:
      version === undefined ? (instances) => JSON.stringify({ model: name, instances }) : (instances) => JSON.stringify({ model: name, version, instances }),
    headers,
  }
  const names = options.urls.map(nameOf)
  const file = skipped === 0 ? source.file : `${source.file} (${skipped} other payload log events skipped)`
  if (filled.length > 0) write(`loadgen: ${filledNote(filled, options.model)}`)
  write(startLine(options, model.version, names, rows.length, file, shifted) + labelsText(options, label))
  const instances = names.map((url) => ({ url, sent: 0, ok: 0, failed: 0, byStatus: {} }))
  const tally: Tally = { sent: 0, ok: 0, skipped: 0, inFlight: 0, byStatus: {}, instances }
  const start = performance.now()
  await drive(traffic, tally, start, write, progressEveryMs)
  return summarise(tally, options.batch, (performance.now() - start) / 1000, write, labels?.sender.tally)
}
