// The memory-reducer section of `npm run bench` ("scale: memory reducer" in BENCH_ONLY;
// test/bench/README.md, "V8's memory reducer"): the CLI at 500 models as its `#!` line runs it, with
// `--memory-reducer` (V8's default) and with `--no-memory-reducer` after the line's flags, so that
// the line does not decide, in one run on one machine.
// - p99.9 under scrapes: the scale section's loads (scale.ts `underLoad`: five 10 s loads without
//   scrapes and five with one a second, alternating, after a warm-up), on one process per setting,
//   the settings one after the other. Reported pooled, as the scale section does, and as the median
//   and the worst of the five scraped loads' own p99.9: V8's reducer fires about every 100 s, so it
//   falls in at most one or two of them.
// - RSS after a peak: a fresh process per setting, both started together; one prediction a model,
//   RSS idle, then a peak (PEAK_WAVES waves of PEAK_SCRAPES concurrent scrapes of the whole
//   /metrics and PEAK_BATCHES concurrent 1 000-row predictions), VmHWM and RSS once it is over, then
//   RSS (VmRSS, /proc) AFTER_PEAK_S seconds after the peak's end, each process idle meanwhile.
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  type Load,
  median,
  name,
  pooledP999,
  predictBody,
  predictEach,
  ROW,
  rssMiB,
  type ScaleOptions,
  startClient,
  startService,
  underLoad,
  writeStore,
} from './scale.js'

export const REDUCER_NAME = 'scale: memory reducer'
const MODELS = 500
const NEVER = '0 0 1 1 *'
const PEAK_WAVES = 3
const PEAK_SCRAPES = 48
const PEAK_BATCHES = 96
const BATCH_ROWS = 1000
const AFTER_PEAK_S = 130

/** The settings compared: V8's default, then the reducer off. */
const SETTINGS: readonly (readonly string[])[] = [['--memory-reducer'], ['--no-memory-reducer']]

export type ReducerResult = Readonly<{
  flags: string
  p999Ms: number
  p999ScrapedMs: number
  /** The median and the worst of the scraped loads' own p99.9. */
  scrapedLoadMedianMs: number
  scrapedLoadWorstMs: number
  loadErrors: number
  idleMiB: number
  peakMiB: number
  afterPeakMiB: number
  laterMiB: number
}>

const hwmMiB = (pid: number): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024

/** PEAK_WAVES waves of whole scrapes and 1 000-row predictions at once, every model's body in turn. */
const peak = async (port: number): Promise<void> => {
  const rows = Array.from({ length: BATCH_ROWS }, () => ROW)
  let next = 0
  const predict = async (): Promise<void> => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: predictBody(name(next++ % MODELS), rows),
    })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`a ${BATCH_ROWS}-row predict: ${res.status}`)
  }
  const scrape = async (): Promise<void> => void (await (await fetch(`http://127.0.0.1:${port}/metrics`)).arrayBuffer())
  for (let wave = 0; wave < PEAK_WAVES; wave++) {
    await Promise.all([...Array.from({ length: PEAK_SCRAPES }, scrape), ...Array.from({ length: PEAK_BATCHES }, predict)])
  }
}

type Memory = Pick<ReducerResult, 'idleMiB' | 'peakMiB' | 'afterPeakMiB' | 'laterMiB'>

/** A fresh service with `flags`: RSS idle, the peak, then RSS AFTER_PEAK_S after it. */
const afterPeak = async (options: ScaleOptions, store: string, flags: readonly string[]): Promise<Memory> => {
  const service = await startService(options, store, 'info', { SVC_DRIFT_SCHEDULE: NEVER }, flags)
  try {
    const pid = service.process.pid as number
    await predictEach(service.port, MODELS, [ROW])
    await sleep(1000)
    const idleMiB = rssMiB(pid)
    await peak(service.port)
    const peakMiB = hwmMiB(pid)
    const afterPeakMiB = rssMiB(pid)
    await sleep(AFTER_PEAK_S * 1000)
    return { idleMiB, peakMiB, afterPeakMiB, laterMiB: rssMiB(pid) }
  } finally {
    service.process.kill('SIGKILL')
  }
}

const p999 = (load: Load): number => pooledP999([load])

/** Both figures for each setting, in one run. */
export const measureReducer = async (options: ScaleOptions): Promise<ReducerResult[]> => {
  const store = await mkdtemp(join(tmpdir(), 'svc-bench-reducer-'))
  await writeStore(options.root, store, MODELS)
  try {
    const loads: Awaited<ReturnType<typeof underLoad>>[] = []
    for (const flags of SETTINGS) {
      const service = await startService(options, store, 'info', { SVC_DRIFT_SCHEDULE: NEVER }, flags)
      const scraper = startClient(options)
      try {
        await predictEach(service.port, MODELS, [ROW])
        loads.push(await underLoad(options, service.port, MODELS, scraper))
      } finally {
        scraper.disconnect()
        service.process.kill('SIGKILL')
      }
    }
    const memory = await Promise.all(SETTINGS.map((flags) => afterPeak(options, store, flags)))
    return SETTINGS.map((flags, i) => {
      const { p999Ms, p999ScrapedMs, scraped, loadErrors } = loads[i] as (typeof loads)[number]
      const scrapedLoads = scraped.map(p999)
      return {
        flags: flags.join(' '),
        p999Ms,
        p999ScrapedMs,
        scrapedLoadMedianMs: median(scrapedLoads),
        scrapedLoadWorstMs: Math.max(...scrapedLoads),
        loadErrors,
        ...(memory[i] as Memory),
      }
    })
  } finally {
    await rm(store, { recursive: true, force: true })
  }
}

const cells = (values: readonly (string | number)[]): string =>
  `${values.map((v, i) => String(v)[i === 0 ? 'padEnd' : 'padStart'](i === 0 ? 20 : 11)).join('')}\n`

/** The section's text: p99.9 and RSS for each setting, then the ratios of the reducer off to on. */
export const reducerReport = (results: readonly ReducerResult[]): string => {
  let text = `\nV8's memory reducer at ${MODELS} models, Node ${process.version}: the CLI as its #! line runs it, with either flag after the line's\n`
  text += cells([
    'after #! flags',
    'p99.9 ms',
    'scraped',
    'ratio',
    'load med',
    'load worst',
    'errors',
    'idle MiB',
    'peak MiB',
    'after',
    `${AFTER_PEAK_S} s later`,
  ])
  for (const r of results) {
    text += cells([
      r.flags,
      r.p999Ms.toFixed(2),
      r.p999ScrapedMs.toFixed(2),
      (r.p999ScrapedMs / r.p999Ms).toFixed(2),
      r.scrapedLoadMedianMs.toFixed(2),
      r.scrapedLoadWorstMs.toFixed(2),
      r.loadErrors,
      r.idleMiB.toFixed(1),
      r.peakMiB.toFixed(1),
      r.afterPeakMiB.toFixed(1),
      r.laterMiB.toFixed(1),
    ])
  }
  text += "  p99.9: as the scale section, pooled over 5 loads of each kind; load med, load worst: the scraped loads' own p99.9\n"
  text += `  peak: VmHWM after ${PEAK_WAVES} waves of ${PEAK_SCRAPES} whole scrapes and ${PEAK_BATCHES} ${BATCH_ROWS}-row predictions at once; after: RSS then\n`
  return text
}
