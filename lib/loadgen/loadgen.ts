// `svc loadgen`: prediction traffic against a running service, drawn like the model's training data
// and optionally shifted, so a user can watch drift rise on /metrics and the drift alerts fire.
//
//   svc loadgen --model iris [--url http://127.0.0.1:8000] [--shift 1.5] [--features a,b]
//               [--rate 50] [--duration 60s] [--batch 1] [--concurrency 32] [--seed N]
//
// It reads the model's inputs and reference from GET /api/v1/models/{name}, then sends `rate`
// POST /api/v1/predict requests a second, each with `batch` rows, for `duration`. At most
// `concurrency` requests are in flight; a request that would exceed that is not sent and is
// reported as skipped, so a slow service shows up as a shortfall rather than a queue. Progress goes
// to `write` every 5 s, then a summary. Exit status: 0 when every request succeeded.
import { parseArgs } from 'node:util'
import { mulberry32 } from './random.js'
import { createSampler, type DescribedInput } from './sampler.js'

export type LoadgenOptions = Readonly<{
  url: URL
  model: string
  shift: number
  /** Inputs to shift; empty for every numerical input. */
  features: readonly string[]
  rate: number
  durationMs: number
  batch: number
  concurrency: number
  seed: number
  /** Each request's time limit. */
  timeoutMs: number
}>

export type LoadgenSummary = Readonly<{ sent: number; ok: number; failed: number; skipped: number; rows: number; byStatus: Readonly<Record<string, number>> }>

/** A mistake in the command line: print it with the usage and exit 2. */
export class LoadgenUsageError extends Error {
  override name = 'LoadgenUsageError'
}

export const LOADGEN_USAGE = `Usage: svc loadgen --model NAME [options]

Sends prediction traffic drawn from the model's training distribution to a running svc.
  --model NAME        model to predict with (required)
  --url URL           the service (default http://127.0.0.1:8000)
  --shift K           move the shifted features by K training standard deviations (default 0)
  --features A,B      numerical inputs to shift (default: every numerical input)
  --rate N            requests per second (default 50)
  --duration D        how long: 90s, 2m, 500ms or seconds (default 60s)
  --batch N           rows per request (default 1)
  --concurrency N     most requests in flight (default 32)
  --seed N            seeds the inputs drawn, to repeat a run (default: random, printed)
  --timeout D         each request's time limit (default 10s)
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

export const parseLoadgenArgs = (argv: readonly string[]): LoadgenOptions => {
  const options = {
    model: { type: 'string' },
    url: { type: 'string' },
    shift: { type: 'string' },
    features: { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    batch: { type: 'string' },
    concurrency: { type: 'string' },
    seed: { type: 'string' },
    timeout: { type: 'string' },
  } as const
  let values: Partial<Record<keyof typeof options, string>>
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values
  } catch (error: unknown) {
    throw new LoadgenUsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''))
  }
  if (values.model === undefined || values.model === '') throw new LoadgenUsageError('--model is required')
  const url = values.url ?? 'http://127.0.0.1:8000'
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new LoadgenUsageError(`--url ${url}: expected an http:// or https:// URL`)
  return {
    url: parsed,
    model: values.model,
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
  }
}

/** The model's inputs as the service describes them; throws with the service's own problem detail. */
const describe = async (options: LoadgenOptions): Promise<readonly DescribedInput[]> => {
  const url = new URL(`api/v1/models/${encodeURIComponent(options.model)}`, withSlash(options.url))
  const response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs) })
  const body = (await response.json()) as { inputs?: DescribedInput[]; detail?: string; state?: string }
  if (!response.ok) throw new Error(`GET ${url.pathname}: ${response.status} ${body.detail ?? ''}`.trim())
  if (body.inputs === undefined) throw new Error(`model ${options.model} is ${body.state ?? 'not served'}: nothing to draw from`)
  return body.inputs
}

const withSlash = (url: URL): URL => new URL(url.pathname.endsWith('/') ? url.href : `${url.href}/`)

export const runLoadgen = async (options: LoadgenOptions, write: (line: string) => void, progressEveryMs = PROGRESS_EVERY_MS): Promise<LoadgenSummary> => {
  const inputs = await describe(options)
  const numericals = inputs.filter((input) => input.type === 'numerical').map((input) => input.name)
  const shifted = new Set(options.features.length > 0 ? options.features : numericals)
  const draw = createSampler({ inputs, shift: options.shift, shifted, random: mulberry32(options.seed) })
  const target = new URL('api/v1/predict', withSlash(options.url))
  const shiftText = options.shift === 0 ? 'no shift' : `${[...shifted].join(', ')} shifted by ${options.shift} sd`
  write(
    `loadgen: ${options.model} at ${target.origin}, ${options.rate} req/s × ${options.batch} rows for ${options.durationMs / 1000} s, ${shiftText}, seed ${options.seed}`,
  )

  const byStatus: Record<string, number> = {}
  let sent = 0
  let ok = 0
  let skipped = 0
  let inFlight = 0
  const pending = new Set<Promise<void>>()
  const send = async (): Promise<void> => {
    const instances = Array.from({ length: options.batch }, draw)
    let status: string
    try {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: options.model, instances }),
        signal: AbortSignal.timeout(options.timeoutMs),
      })
      await response.arrayBuffer()
      status = String(response.status)
      if (response.ok) ok++
    } catch (error: unknown) {
      status = (error as Error).name === 'TimeoutError' ? 'timeout' : 'connection_error'
    }
    byStatus[status] = (byStatus[status] ?? 0) + 1
  }

  const start = performance.now()
  let lastProgress = start
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now()
      const elapsed = Math.min(now - start, options.durationMs)
      const due = Math.floor((elapsed / 1000) * options.rate) - sent - skipped
      for (let i = 0; i < due; i++) {
        if (inFlight >= options.concurrency) {
          skipped++
          continue
        }
        sent++
        inFlight++
        const request = send().finally(() => {
          inFlight--
          pending.delete(request)
        })
        pending.add(request)
      }
      if (now - lastProgress >= progressEveryMs) {
        lastProgress = now
        write(`  ${Math.round(elapsed / 1000)} s: sent ${sent}, ok ${ok}, in flight ${inFlight}, skipped ${skipped}`)
      }
      if (elapsed >= options.durationMs) {
        clearInterval(timer)
        resolve()
      }
    }, TICK_MS)
  })
  await Promise.all(pending)
  const failed = sent - ok
  const seconds = (performance.now() - start) / 1000
  const statuses = Object.entries(byStatus)
    .sort()
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ')
  write(
    `loadgen: sent ${sent} requests (${sent * options.batch} rows) in ${seconds.toFixed(1)} s, ${ok} ok, ${failed} failed, ${skipped} skipped${statuses === '' ? '' : `; ${statuses}`}`,
  )
  return { sent, ok, failed, skipped, rows: ok * options.batch, byStatus }
}
