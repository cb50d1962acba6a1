// The scale section of `npm run bench` (test/bench/README.md, "Scale: many models"): what the service
// costs as its models grow. For each size N, a store of N copies of the shipped iris, each renamed
// and re-signed (artifactSha256), served by the CLI from dist in its own process on CPU 0, one
// prediction on every model, then:
// - the samples of /metrics (its lines that are not comments), the body, and a scrape's time, best of 5;
// - the longest event-loop stall during a scrape: the worst latency of a `GET /` sent every
//   millisecond by one client process while another scrapes (both scale-scraper.ts, on CPU 1 with
//   the load: this process is on neither CPU's side), over 5 scrapes;
// - RSS (VmRSS) after a second idle, before any scrape, the median of three readings;
// - under load from 8 connections (wrk, or autocannon), a prediction's p99.9 (every model in turn)
//   with no scrape and with one every second from the scraper's process, over the requests of 5
//   loads of each kind together.
// A second process per size runs drift checks every 5 s (SVC_DRIFT_SCHEDULE with seconds) over a
// full window of reference rows per model, logs at debug, and the check's time is its
// `drift_check_completed` line's duration_ms, with the worst `GET /` that overlapped it. The first
// process never checks (a yearly schedule), so no check falls into its figures.
import { type ChildProcess, spawn } from 'node:child_process'
import { openSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { artifactSha256 } from '../../lib/models/artifact.js'
import { asItsShebangRuns } from '../fixtures/shebang.js'
import { parseWrk, run, wrkBodiesScript } from './load-tools.js'
import { type Probe, type ScrapeTaken, type ScraperMessage, wallNow } from './scale-scraper.js'

export const SCALE_SIZES = [1, 10, 100, 500] as const
export const scaleName = (models: number): string => `scale: ${models} model${models === 1 ? '' : 's'}`

export type ScaleOptions = Readonly<{
  root: string
  logDir: string
  seconds: number
  warmupSeconds: number
  loadgen: string
  pinned: (cpu: number, command: string, args: readonly string[]) => [string, string[]]
  freePort: () => Promise<number>
}>

export type ScaleResult = Readonly<{
  models: number
  samples: number
  /** The Node process's own samples (process_*, nodejs_*): not the models', and a GC kind's series appear as it first runs. */
  processSamples: number
  bodyBytes: number
  scrapeMs: number
  stallMs: number
  idleWorstMs: number
  rssMiB: number
  driftCheckMs: number
  driftStallMs: number
  p999Ms: number
  p999ScrapedMs: number
  scrapesUnderLoad: number
  loadErrors: number
}>

const SCRAPES = 5
const PROCESS_SERIES = /^(process|nodejs)_/
const LOAD_CONNECTIONS = 8
const LOAD_ROUNDS = 5
const DRIFT_ROWS = 1000
const DRIFT_CHECKS = 3
const NEVER = '0 0 1 1 *'
export const name = (i: number): string => `iris-${String(i).padStart(4, '0')}`
export const predictBody = (model: string, instances: readonly Readonly<Record<string, number>>[]): string => JSON.stringify({ model, instances })
export const ROW = { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 }

/** N copies of the shipped iris as iris-0000…, each its own name, signed for it. */
export const writeStore = async (root: string, dir: string, models: number): Promise<void> => {
  const base = JSON.parse(readFileSync(join(root, 'lib/models/artifacts/iris/1/model.json'), 'utf8')) as Record<string, unknown>
  for (let i = 0; i < models; i++) {
    const artifact: Record<string, unknown> = { ...base, name: name(i) }
    artifact['sha256'] = artifactSha256(artifact)
    await mkdir(join(dir, name(i), '1'), { recursive: true })
    await writeFile(join(dir, name(i), 'manifest.json'), '{"default_version":"1"}\n')
    await writeFile(join(dir, name(i), '1', 'model.json'), JSON.stringify(artifact))
  }
}

/** The reference rows iris ships, cycled to `count`: rows that score as no drift. */
const referenceRows = (root: string, count: number): Record<string, number>[] => {
  const [head, ...lines] = readFileSync(join(root, 'lib/models/artifacts/iris/1/reference-rows.csv'), 'utf8').trim().split('\n')
  const columns = (head as string).split(',').slice(0, 4)
  const rows = lines.map((line) =>
    Object.fromEntries(
      line
        .split(',')
        .slice(0, 4)
        .map((v, i) => [columns[i] as string, Number(v)]),
    ),
  )
  return Array.from({ length: count }, (_, i) => rows[i % rows.length] as Record<string, number>)
}

export type Service = Readonly<{ port: number; process: ChildProcess; log: string }>

/** The CLI on CPU 0 as its `#!` line runs it, with `nodeFlags` after the line's, serving `store`; resolves once ready. */
export const startService = async (
  options: ScaleOptions,
  store: string,
  logLevel: string,
  env: Readonly<Record<string, string>>,
  nodeFlags: readonly string[] = [],
): Promise<Service> => {
  const port = await options.freePort()
  const log = join(options.logDir, `scale-${port}.log`)
  const cli = asItsShebangRuns(join(options.root, 'dist/bin/svc.js'), nodeFlags)
  const [cmd, args] = options.pinned(0, process.execPath, [...cli, '--log-level', logLevel, '--port', String(port)])
  const child = spawn(cmd, args, {
    cwd: options.root,
    stdio: ['ignore', openSync(log, 'w'), 'inherit'],
    env: { ...process.env, SVC_MODEL_STORE: store, ...env },
  })
  for (let i = 0; i < 1200; i++) {
    const status = await fetch(`http://127.0.0.1:${port}/ready`).then(
      (r) => r.status,
      () => 0,
    )
    if (status === 200) return { port, process: child, log }
    await sleep(100)
  }
  child.kill('SIGKILL')
  throw new Error(`the service on ${store} was not ready in 120 s`)
}

export const predictEach = async (port: number, models: number, instances: readonly Readonly<Record<string, number>>[]): Promise<void> => {
  for (let i = 0; i < models; i++) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: predictBody(name(i), instances),
    })
    if (res.status !== 200) throw new Error(`predict ${name(i)}: ${res.status} ${await res.text()}`)
  }
}

export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

export const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

/** A GET / every millisecond from a client process of its own, until `stop`. */
const startProber = (options: ScaleOptions, port: number): { stop(): Promise<Probe[]> } => {
  const client = startClient(options)
  client.send({ probe: `http://127.0.0.1:${port}/` } satisfies ScraperMessage)
  return {
    stop: async () => {
      const { probes } = await tell<{ probes: Probe[] }>(client, { stop: true })
      client.disconnect()
      return probes
    },
  }
}

/** The worst latency of the probes in flight at some moment of [from, to]. */
const worstDuring = (probes: readonly Probe[], from: number, to: number): number =>
  probes.reduce((worst, { sent, ms }) => (sent <= to && sent + ms >= from ? Math.max(worst, ms) : worst), 0)

/** A scale-scraper.ts process on CPU 1, with the load: the service's CPU stays its own. */
export const startClient = (options: ScaleOptions): ChildProcess => {
  const [cmd, args] = options.pinned(1, process.execPath, [join(options.root, 'dist/test/bench/scale-scraper.js')])
  return spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
}
export const tell = <T>(scraper: ChildProcess, message: ScraperMessage): Promise<T> =>
  new Promise((resolve) => {
    scraper.once('message', (answer) => resolve(answer as T))
    scraper.send(message)
  })

/** Best-of-5 scrape time, then the worst `GET /` during each of 5 more scrapes, and during a second of none. */
const scrapes = async (options: ScaleOptions, port: number, scraper: ChildProcess): Promise<Pick<ScaleResult, 'scrapeMs' | 'stallMs' | 'idleWorstMs'>> => {
  const url = `http://127.0.0.1:${port}/metrics`
  const times: number[] = []
  for (let i = 0; i < SCRAPES; i++) times.push((await tell<ScrapeTaken>(scraper, { scrape: url })).ms)
  const prober = startProber(options, port)
  await sleep(200)
  const idleFrom = wallNow()
  await sleep(1000)
  const idleTo = wallNow()
  const windows: [number, number][] = []
  for (let i = 0; i < SCRAPES; i++) {
    const from = wallNow()
    await tell<ScrapeTaken>(scraper, { scrape: url })
    windows.push([from, wallNow()])
    await sleep(100)
  }
  const probes = await prober.stop()
  return {
    scrapeMs: Math.min(...times),
    stallMs: Math.max(...windows.map(([from, to]) => worstDuring(probes, from, to))),
    idleWorstMs: worstDuring(probes, idleFrom, idleTo),
  }
}

/**
 * A wrk script sending a batch-1 predict to every model in turn, and printing when done its
 * latencies: `µs count`, a line for each latency it saw.
 */
const wrkScript = (dir: string, models: number): Promise<string> =>
  wrkBodiesScript(
    dir,
    Array.from({ length: models }, (_, i) => predictBody(name(i), [ROW])),
    'done = function(summary, latency, requests)\n  for i = 1, #latency do\n    local us, count = latency(i)\n' +
      '    io.write(string.format("latency %d %d\\n", us, count))\n  end\nend\n',
  )

/** A load's latencies as [ms, requests] pairs, from wrk; autocannon reports its p99.9 alone. */
export type Load = Readonly<{ latencies?: readonly (readonly [number, number])[]; p999Ms?: number; errors: number }>
const predictLoad = async (options: ScaleOptions, port: number, script: string, seconds: number): Promise<Load> => {
  const url = `http://127.0.0.1:${port}/api/v1/predict`
  if (options.loadgen === 'wrk') {
    const [cmd, args] = options.pinned(1, 'wrk', ['-t1', `-c${LOAD_CONNECTIONS}`, `-d${seconds}s`, '-s', script, url])
    const { stdout } = await run(cmd, args)
    const latencies = [...stdout.matchAll(/^latency (\d+) (\d+)$/gm)].map(([, us, count]) => [Number(us) / 1000, Number(count)] as const)
    return { latencies, errors: parseWrk(stdout).errors }
  }
  // autocannon sends one body: the first model's.
  const body = predictBody(name(0), [ROW])
  const autocannon = join(options.root, 'node_modules/autocannon/autocannon.js')
  const [cmd, args] = options.pinned(1, process.execPath, [autocannon, '-j', '-c', String(LOAD_CONNECTIONS), '-d', String(seconds), '-m', 'POST'])
  const { stdout } = await run(cmd, [...args, '-H', 'content-type=application/json', '-b', body, url], { maxBuffer: 64 * 1024 * 1024 })
  const report = JSON.parse(stdout) as { latency: { p99_9: number }; non2xx: number; errors: number; timeouts: number }
  return { p999Ms: report.latency.p99_9, errors: report.non2xx + report.errors + report.timeouts }
}

/**
 * The p99.9 of the requests of `loads` together. A 10 s p99.9 is the 200th-odd slowest request,
 * set by a few dozen pauses (a major collection, the load's own CPU): between two loads of one
 * kind it swung from 2 to 13 ms at one model, and the median of three such figures moved as much.
 * Pooled, five loads put several hundred requests above it. Autocannon's loads give the median of
 * their own p99.9s.
 */
export const pooledP999 = (loads: readonly Load[]): number => {
  if (loads.some(({ latencies }) => latencies === undefined)) return median(loads.map(({ p999Ms }) => p999Ms ?? Number.NaN))
  const latencies = loads.flatMap((load) => load.latencies ?? []).sort(([a], [b]) => a - b)
  const total = latencies.reduce((sum, [, count]) => sum + count, 0)
  let seen = 0
  for (const [ms, count] of latencies) {
    seen += count
    if (seen >= 0.999 * total) return ms
  }
  return Number.NaN
}

/** A load of `seconds` with a scrape every second from the scraper's process: the load, and how many scrapes it saw. */
const scrapedLoad = async (options: ScaleOptions, port: number, script: string, scraper: ChildProcess): Promise<Load & { scrapes: number }> => {
  const scraped = tell<{ scrapes: number }>(scraper, { every: `http://127.0.0.1:${port}/metrics`, ms: 1000 })
  const load = await predictLoad(options, port, script, options.seconds)
  scraper.send({ stop: true } satisfies ScraperMessage)
  return { ...load, scrapes: (await scraped).scrapes }
}

/**
 * p99.9 with no scrape and with one every second, over LOAD_ROUNDS loads of each. Rounds
 * alternate which goes first: taken quiet first, the scraped load always ran on the older heap,
 * and a 10 s p99.9 swings twofold between two loads of one kind.
 */
export const underLoad = async (
  options: ScaleOptions,
  port: number,
  models: number,
  scraper: ChildProcess,
): Promise<Pick<ScaleResult, 'p999Ms' | 'p999ScrapedMs' | 'scrapesUnderLoad' | 'loadErrors'> & Readonly<{ quiet: Load[]; scraped: Load[] }>> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-scale-wrk-'))
  const script = await wrkScript(dir, models)
  await predictLoad(options, port, script, options.warmupSeconds)
  const quiet: Load[] = []
  const scraped: (Load & { scrapes: number })[] = []
  for (let round = 0; round < LOAD_ROUNDS; round++) {
    if (round % 2 === 1) scraped.push(await scrapedLoad(options, port, script, scraper))
    quiet.push(await predictLoad(options, port, script, options.seconds))
    if (round % 2 === 0) scraped.push(await scrapedLoad(options, port, script, scraper))
  }
  await rm(dir, { recursive: true, force: true })
  return {
    p999Ms: pooledP999(quiet),
    p999ScrapedMs: pooledP999(scraped),
    scrapesUnderLoad: scraped.reduce((sum, { scrapes }) => sum + scrapes, 0),
    loadErrors: [...quiet, ...scraped].reduce((sum, { errors }) => sum + errors, 0),
    quiet,
    scraped,
  }
}

type CheckLine = Readonly<{ end: number; durationMs: number }>
const checkLines = (log: string): CheckLine[] =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"event":"drift_check_completed"'))
    .map((line) => JSON.parse(line) as { timestamp: string; duration_ms: number })
    .map(({ timestamp, duration_ms }) => ({ end: Date.parse(timestamp), durationMs: duration_ms }))

/** A full window of reference rows on every model, then 3 checks every 5 s, each with the worst `GET /` during it. */
const driftChecks = async (options: ScaleOptions, store: string, models: number): Promise<Pick<ScaleResult, 'driftCheckMs' | 'driftStallMs'>> => {
  const env = { SVC_DRIFT_SCHEDULE: '*/5 * * * * *', SVC_DRIFT_WINDOW: String(DRIFT_ROWS), SVC_DRIFT_MIN_SAMPLES: '100' }
  const service = await startService(options, store, 'debug', env)
  try {
    await predictEach(service.port, models, referenceRows(options.root, DRIFT_ROWS))
    const prober = startProber(options, service.port)
    const since = wallNow()
    let checks: CheckLine[] = []
    for (let waited = 0; checks.length < DRIFT_CHECKS && waited < 60_000; waited += 250) {
      await sleep(250)
      checks = checkLines(service.log).filter(({ end, durationMs }) => end - durationMs >= since)
    }
    const probes = await prober.stop()
    if (checks.length === 0) return { driftCheckMs: Number.NaN, driftStallMs: Number.NaN }
    return {
      driftCheckMs: median(checks.map(({ durationMs }) => durationMs)),
      driftStallMs: Math.max(...checks.map(({ end, durationMs }) => worstDuring(probes, end - durationMs, end))),
    }
  } finally {
    service.process.kill('SIGKILL')
  }
}

/** Every figure for a store of `models` copies of iris. */
export const measureScale = async (options: ScaleOptions, models: number): Promise<ScaleResult> => {
  const store = await mkdtemp(join(tmpdir(), 'svc-bench-scale-'))
  await writeStore(options.root, store, models)
  const service = await startService(options, store, 'info', { SVC_DRIFT_SCHEDULE: NEVER })
  const scraper = startClient(options)
  try {
    await predictEach(service.port, models, [ROW])
    await sleep(1000)
    const readings: number[] = []
    for (let i = 0; i < 3; i++) {
      readings.push(rssMiB(service.process.pid as number))
      await sleep(100)
    }
    const body = await (await fetch(`http://127.0.0.1:${service.port}/metrics`)).text()
    const lines = body.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
    const samples = lines.length
    const processSamples = lines.filter((line) => PROCESS_SERIES.test(line)).length
    const scraped = await scrapes(options, service.port, scraper)
    const { quiet: _, scraped: __, ...loaded } = await underLoad(options, service.port, models, scraper)
    service.process.kill('SIGKILL')
    const drift = await driftChecks(options, store, models)
    return { models, samples, processSamples, bodyBytes: Buffer.byteLength(body), rssMiB: median(readings), ...scraped, ...loaded, ...drift }
  } finally {
    scraper.disconnect()
    service.process.kill('SIGKILL')
    await rm(store, { recursive: true, force: true })
  }
}

// The targets at 500 models, on the 2-core machine, Node 20: a scrape in at most half the 130.8 ms
// measured before the /metrics writer was sliced, no stall over 15 ms, at most 70 samples and
// 0.06 MiB of RSS a model, and p99.9 under a scrape a second within 1.5× of none.
const TARGET_MODELS = 500
const TARGETS = { scrapeMs: 130.8 / 2, stallMs: 15, samplesPerModel: 70, rssPerModelMiB: 0.06, p999Ratio: 1.5 }

const verdict = (isMet: boolean): string => (isMet ? 'met' : 'NOT met')
const cells = (values: readonly (string | number)[]): string =>
  `${values.map((v, i) => String(v)[i === 0 ? 'padEnd' : 'padStart'](i === 0 ? 8 : 12)).join('')}\n`

/** The section's text: one table per measurement, then the targets at 500 models. */
export const scaleReport = (results: readonly ScaleResult[]): string => {
  let text = `\nScale: N copies of iris, one prediction each; the service on CPU 0, the load and the scraper on CPU 1\n`
  text += cells(['models', 'samples', 'per model', 'body KiB', 'scrape ms', 'stall ms', 'idle ms', 'RSS MiB'])
  for (const r of results) {
    text += cells([
      r.models,
      r.samples,
      (r.samples / r.models).toFixed(1),
      (r.bodyBytes / 1024).toFixed(0),
      r.scrapeMs.toFixed(1),
      r.stallMs.toFixed(1),
      r.idleWorstMs.toFixed(1),
      r.rssMiB.toFixed(1),
    ])
  }
  text += '  scrape: best of 5; stall: worst GET / (one a ms) during 5 scrapes; idle: the same over a second of none\n'
  text += cells(['models', 'check ms', 'stall ms', 'p99.9 ms', 'scraped', 'ratio', 'scrapes', 'errors'])
  for (const r of results) {
    text += cells([
      r.models,
      r.driftCheckMs.toFixed(1),
      r.driftStallMs.toFixed(1),
      r.p999Ms.toFixed(2),
      r.p999ScrapedMs.toFixed(2),
      (r.p999ScrapedMs / r.p999Ms).toFixed(2),
      r.scrapesUnderLoad,
      r.loadErrors,
    ])
  }
  text += `  check: drift_check_completed's duration_ms, median of ${DRIFT_CHECKS}, ${DRIFT_ROWS} rows a model; its stall: the worst GET / during one\n`
  text += `  p99.9: a batch-1 predict, ${LOAD_CONNECTIONS} connections, every model in turn, over the requests of ${LOAD_ROUNDS} loads; scraped: with a scrape a second\n`
  const one = results.find((r) => r.models === 1)
  const most = results.find((r) => r.models === TARGET_MODELS)
  if (one === undefined || most === undefined) return text
  const perModel = (most.samples - most.processSamples - (one.samples - one.processSamples)) / (TARGET_MODELS - 1)
  const rssPerModel = (most.rssMiB - one.rssMiB) / (TARGET_MODELS - 1)
  const ratio = most.p999ScrapedMs / most.p999Ms
  return (
    `${text}Targets at ${TARGET_MODELS} models:\n` +
    `  scrape ${most.scrapeMs.toFixed(1)} ms (≤ ${TARGETS.scrapeMs.toFixed(1)}: ${verdict(most.scrapeMs <= TARGETS.scrapeMs)}); ` +
    `stall ${most.stallMs.toFixed(1)} ms (≤ ${TARGETS.stallMs}: ${verdict(most.stallMs <= TARGETS.stallMs)})\n` +
    `  samples a model, less the process's own, (at ${TARGET_MODELS} − at 1) / ${TARGET_MODELS - 1}: ${perModel.toFixed(1)} (≤ ${TARGETS.samplesPerModel}: ` +
    `${verdict(perModel <= TARGETS.samplesPerModel)}); RSS a model, likewise: ${rssPerModel.toFixed(3)} MiB (≤ ${TARGETS.rssPerModelMiB}: ` +
    `${verdict(rssPerModel <= TARGETS.rssPerModelMiB)})\n` +
    `  p99.9 with a scrape a second ÷ without: ${ratio.toFixed(2)} (≤ ${TARGETS.p999Ratio}: ${verdict(ratio <= TARGETS.p999Ratio)})\n`
  )
}
