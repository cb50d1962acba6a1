// The heavy-models section of `npm run bench` ("heavy: mlp", "heavy: trees"; only when BENCH_ONLY
// names them; test/bench/README.md, "Heavy models"): models whose prediction costs milliseconds, not
// microseconds, and what serving them one row a request does to the service. The graphs come from
// `generate.py --heavy` (test/fixtures/onnx/generate.py) under Debian's /usr/bin/python3:
//   mlp    X float [N, 16] through three 2048-wide MatMul + Add + Relu layers to 3 classes and a
//          Softmax: 34 MB of float32 weights
//   trees  a TreeEnsembleClassifier of 300 full trees of depth 8 over X float [N, 32], 3 classes,
//          post_transform SOFTMAX, no ZipMap
// each as `<model>/1/model.onnx` in a store of the run, with a metadata.json naming the features
// x0 … x{F−1}. For each model:
// - the runtime's own limit: one session in a process of its own on CPU 0 (heavy-session.ts), 64-row
//   runs back to back for BENCH_SECONDS: rows/s;
// - the CLI serving the store (SVC_MODEL_MAX_BYTES raised for the 34 MB graph), wrk with 1, 16 and
//   64 connections, each request one row of 64 in turn (`POST /api/v1/predict`, `instances`), after
//   a warm-up at 16: rows/s, p50, p99; during the 64-connection load, a `GET /health` every 10 ms
//   from a client process of its own (scale-scraper.ts), on a socket of its own while others wait:
//   p50, p99, max; and the event loop's delay p99 (prom-client's `nodejs_eventloop_lag_p99_seconds`,
//   whose histogram each scrape resets: read once before the load and once at its end).
// Twice: pinned (the service on CPU 0, wrk and the probe on CPU 1) and unpinned (neither).
// The service inherits the bench's environment, SVC_ONNX_WORKERS, SVC_BATCH_MAX_ROWS and
// SVC_BATCH_MAX_DELAY_US included; BENCH_HEAVY_WORKERS (a comma-separated list, e.g. "0,2") runs
// the service once per value with SVC_ONNX_WORKERS set to it.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { metricTotal, parseWrk, run, wrkBodiesScript, wrkLatencyMs } from './load-tools.js'
import { normalRows, PYTHON, writeVersion } from './onnx-store.js'
import type { Probe } from './scale-scraper.js'
import { type ScaleOptions, startClient, startService, tell } from './scale.js'
import { wallNow } from './scale-scraper.js'

export const HEAVY_MODELS = ['mlp', 'trees'] as const
export type HeavyModel = (typeof HEAVY_MODELS)[number]
export const heavyName = (model: HeavyModel): string => `heavy: ${model}`

const FEATURES: Readonly<Record<HeavyModel, number>> = { mlp: 16, trees: 32 }
const TITLES: Readonly<Record<HeavyModel, string>> = {
  mlp: 'mlp: X [N, 16] → 3 × (MatMul + Add + Relu, 2048) → MatMul + Add, 3 → Softmax; 34 MB of weights',
  trees: 'trees: TreeEnsembleClassifier, 300 full trees of depth 8, 32 features, 3 classes, SOFTMAX',
}
const CONNECTIONS = [1, 16, 64] as const
const PROBED = 64
const PROBE_MS = 10
/** Enough that no probe waits for a socket (a 2 s stall holds 200): each is sent on time, as a prober on its own would be. */
const PROBE_SOCKETS = 1000
const ROWS = 64
const MODEL_MAX_BYTES = String(64 * 1024 * 1024)

type Load = Readonly<{ connections: number; rowsPerSecond: number; p50Ms: number; p99Ms: number; errors: number }>
type Served = Readonly<{
  workers: string | undefined
  isPinned: boolean
  loads: readonly Load[]
  health: Readonly<{ p50Ms: number; p99Ms: number; maxMs: number; probes: number }>
  loopP99Ms: number
}>
export type HeavyResult = Readonly<{ model: HeavyModel; runtimeRowsPerSecond: number; served: Served[] }>

const names = (model: HeavyModel): string[] => Array.from({ length: FEATURES[model] }, (_, i) => `x${i}`)

/** The two graphs as a model store in `store`, written through a directory of its own. */
const writeHeavyStore = async (root: string, store: string): Promise<void> => {
  const graphs = await mkdtemp(join(tmpdir(), 'svc-bench-heavy-graphs-'))
  try {
    await run(PYTHON, [join(root, 'test/fixtures/onnx/generate.py'), '--heavy', graphs])
    for (const model of HEAVY_MODELS) {
      const type = model === 'mlp' ? 'MLP' : 'TreeEnsembleClassifier'
      await writeVersion(store, model, {
        'model.onnx': await readFile(join(graphs, `${model}.onnx`)),
        'metadata.json': `${JSON.stringify({ features: names(model), type })}\n`,
      })
    }
  } finally {
    await rm(graphs, { recursive: true, force: true })
  }
}

/** heavy-session.ts on CPU 0: the runtime alone, rows/s. */
const runtimeLimit = async (options: ScaleOptions, store: string, model: HeavyModel): Promise<number> => {
  const script = join(options.root, 'dist/test/bench/heavy-session.js')
  const [cmd, args] = options.pinned(0, process.execPath, [script, join(store, model, '1', 'model.onnx'), String(FEATURES[model]), String(options.seconds)])
  const { rows, seconds } = JSON.parse((await run(cmd, args)).stdout) as { rows: number; seconds: number }
  return rows / seconds
}

const wrk = async (options: ScaleOptions, port: number, script: string, connections: number, seconds: number): Promise<Load> => {
  const url = `http://127.0.0.1:${port}/api/v1/predict`
  const [cmd, args] = options.pinned(1, 'wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '--latency', '-s', script, url])
  const { stdout } = await run(cmd, args)
  const { rps, p99Ms, errors } = parseWrk(stdout)
  return { connections, rowsPerSecond: rps, p50Ms: wrkLatencyMs(stdout, 50), p99Ms, errors }
}

/** The event loop's delay p99 in ms since the last scrape (prom-client resets its histogram on each). */
const loopP99Ms = async (port: number): Promise<number> =>
  metricTotal(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), 'nodejs_eventloop_lag_p99_seconds') * 1000

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN

/** The 64-connection load with /health probed and the loop's delay read around it. */
const probedLoad = async (options: ScaleOptions, port: number, script: string): Promise<Pick<Served, 'health' | 'loopP99Ms'> & { load: Load }> => {
  const prober = startClient(options)
  try {
    await loopP99Ms(port)
    prober.send({ probe: `http://127.0.0.1:${port}/health`, ms: PROBE_MS, sockets: PROBE_SOCKETS })
    const from = wallNow()
    const load = await wrk(options, port, script, PROBED, options.seconds)
    const to = wallNow()
    const lag = await loopP99Ms(port)
    const { probes } = await tell<{ probes: Probe[] }>(prober, { stop: true })
    const ms = probes
      .filter(({ sent }) => sent >= from && sent <= to)
      .map((probe) => probe.ms)
      .sort((a, b) => a - b)
    const health = { p50Ms: percentile(ms, 0.5), p99Ms: percentile(ms, 0.99), maxMs: ms.at(-1) ?? Number.NaN, probes: ms.length }
    return { load, health, loopP99Ms: lag }
  } finally {
    prober.disconnect()
  }
}

/** Every load of one model on a running service. */
const serve = async (options: ScaleOptions, port: number, model: HeavyModel, workers: string | undefined, isPinned: boolean): Promise<Served> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-heavy-wrk-'))
  try {
    const bodies = normalRows(names(model), ROWS, 20240615).map((row) => JSON.stringify({ model, instances: [row] }))
    const script = await wrkBodiesScript(dir, bodies)
    await wrk(options, port, script, 16, options.warmupSeconds)
    const loads: Load[] = []
    for (const connections of CONNECTIONS.filter((c) => c !== PROBED)) loads.push(await wrk(options, port, script, connections, options.seconds))
    const { load, health, loopP99Ms } = await probedLoad(options, port, script)
    return { workers, isPinned, loads: [...loads, load], health, loopP99Ms }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** BENCH_HEAVY_WORKERS's values, or one run with the environment as it is. */
const workerSettings = (): readonly (string | undefined)[] => process.env['BENCH_HEAVY_WORKERS']?.split(',').map((w) => w.trim()) ?? [undefined]

/** Every figure for each of `models`. */
export const measureHeavy = async (options: ScaleOptions, models: readonly HeavyModel[]): Promise<HeavyResult[]> => {
  const store = await mkdtemp(join(tmpdir(), 'svc-bench-heavy-'))
  const unpinned = { ...options, pinned: (_cpu: number, command: string, args: readonly string[]): [string, string[]] => [command, [...args]] }
  const canPin = options.pinned(0, 'node', [])[0] === 'taskset'
  try {
    await writeHeavyStore(options.root, store)
    const results: { model: HeavyModel; runtimeRowsPerSecond: number; served: Served[] }[] = []
    for (const model of models) results.push({ model, runtimeRowsPerSecond: await runtimeLimit(options, store, model), served: [] })
    for (const workers of workerSettings()) {
      for (const isPinned of canPin ? [true, false] : [false]) {
        const env = { SVC_MODEL_MAX_BYTES: MODEL_MAX_BYTES, ...(workers === undefined ? {} : { SVC_ONNX_WORKERS: workers }) }
        const used = isPinned ? options : unpinned
        const service = await startService(used, store, 'info', env)
        try {
          for (const result of results) result.served.push(await serve(used, service.port, result.model, workers, isPinned))
        } finally {
          service.process.kill('SIGKILL')
        }
      }
    }
    return results
  } finally {
    await rm(store, { recursive: true, force: true })
  }
}

const cells = (values: readonly (string | number)[]): string => `${values.map((v, i) => String(v)[i < 2 ? 'padEnd' : 'padStart'](i < 2 ? 12 : 9)).join('')}\n`

/** The section's text: per model, the runtime's limit, then a row per service, pinning and connections. */
export const heavyReport = (results: readonly HeavyResult[]): string => {
  const workersSet = ['SVC_ONNX_WORKERS', 'SVC_BATCH_MAX_ROWS', 'SVC_BATCH_MAX_DELAY_US'].filter((v) => process.env[v] !== undefined)
  let text = `\nHeavy models, Node ${process.version}; one row a request; ${workersSet.map((v) => `${v}=${process.env[v]}`).join(' ') || 'no ONNX variables set'}\n`
  for (const { model, runtimeRowsPerSecond, served } of results) {
    text += `${TITLES[model]}\n  the runtime alone, one session, 1 thread, CPU 0, 64-row runs: ${runtimeRowsPerSecond.toFixed(0)} rows/s\n`
    text += cells(['  workers', 'CPU', 'conns', 'rows/s', 'p50 ms', 'p99 ms', 'errors', 'health', 'p99', 'max', 'loop p99'])
    for (const { workers, isPinned, loads, health, loopP99Ms } of served) {
      for (const load of loads) {
        const probed = load.connections === PROBED
        text += cells([
          `  ${workers ?? 'as set'}`,
          isPinned ? 'pinned' : 'unpinned',
          load.connections,
          load.rowsPerSecond.toFixed(0),
          load.p50Ms.toFixed(2),
          load.p99Ms.toFixed(2),
          load.errors,
          probed ? health.p50Ms.toFixed(2) : '',
          probed ? health.p99Ms.toFixed(2) : '',
          probed ? health.maxMs.toFixed(2) : '',
          probed ? loopP99Ms.toFixed(2) : '',
        ])
      }
    }
  }
  return `${text}  health: GET /health every ${PROBE_MS} ms during the ${PROBED}-connection load, ms; loop p99: nodejs_eventloop_lag_p99_seconds over that load, ms\n`
}
