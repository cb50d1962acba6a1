// `npm run soak`: the compiled CLI under a steady load mixing every endpoint for SOAK_SECONDS
// (300), then 1 000 000 requests to random paths, each used once. It samples the service's own
// /metrics every SOAK_SAMPLE_SECONDS: resident memory, heap used and active handles. The
// figures compared are the lowest of each window, right after warm-up and at the end, so a
// garbage collection that has not run yet does not count as growth. It fails (exit 1) when any of
// the three grew by 10 % or more after warm-up, when a request failed, or when the random paths
// changed the number of series (or were not each counted once under endpoint="<unmatched>").
//
// Environment: SOAK_SECONDS (300), SOAK_RATE (500 req/s), SOAK_CONNECTIONS (16),
// SOAK_WARMUP_SECONDS (a fifth of the run, at least 10), SOAK_SAMPLE_SECONDS (2),
// SOAK_RANDOM_PATHS (1000000), SOAK_SETTLE_SECONDS (20: the steady mix again after the random
// paths, whose lowest heap must be back within 10 % of the one at the end of the steady load).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { startCollector } from '../bench/collector.js'
import { fakeCoinbase, fakeCoingecko } from '../fixtures/rate-upstreams.js'
import { asItsShebangRuns } from '../fixtures/shebang.js'
import { closedPort } from '../fixtures/tcp.js'
import { createClient, drive, roundRobin, SHOTS, summarise, type Outcome } from './load.js'
import { createScope } from './scope.js'
import { sumOf } from './service.js'
import { figure, table } from './table.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const setting = (name: string, fallback: number): number => Number(process.env[name] ?? String(fallback))
const SECONDS = setting('SOAK_SECONDS', 300)
const RATE = setting('SOAK_RATE', 500)
const CONNECTIONS = setting('SOAK_CONNECTIONS', 16)
const WARMUP_SECONDS = setting('SOAK_WARMUP_SECONDS', Math.max(10, SECONDS / 5))
const SAMPLE_SECONDS = setting('SOAK_SAMPLE_SECONDS', 2)
const RANDOM_PATHS = setting('SOAK_RANDOM_PATHS', 1_000_000)
const SETTLE_SECONDS = setting('SOAK_SETTLE_SECONDS', 20)
/** Each compared window: a tenth of the run, at least 10 s. */
const WINDOW_SECONDS = Math.max(10, SECONDS / 10)
const MAX_GROWTH = 0.1
/** Families whose label values the runtime picks (handle types, GC kinds): not the service's own series. */
const RUNTIME_LABELLED = /^nodejs_(active_handles|active_resources|gc_duration_seconds)/

const say = (line: string): void => void process.stdout.write(`${line}\n`)

type Sample = Readonly<{ atS: number; rss: number; heap: number; handles: number; series: number; allSeries: number }>

const series = (text: string): { own: number; all: number } => {
  const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'))
  return { own: samples.filter((line) => !RUNTIME_LABELLED.test(line)).length, all: samples.length }
}

const waitForPort = async (port: number): Promise<void> => {
  for (let i = 0; i < 300; i++) {
    if (
      (await fetch(`http://127.0.0.1:${port}/startup`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return
    await sleep(50)
  }
  throw new Error(`svc did not start on ${port}`)
}

/**
 * GET requests to `count` paths no one asked before, pipelined `depth` deep on each of
 * `connections` keep-alive sockets (the fastest way to make a million requests from one process).
 * Resolves with the statuses received.
 */
const randomPaths = (port: number, count: number, connections = 8, depth = 64): Promise<Map<number, number>> => {
  const statuses = new Map<number, number>()
  let next = 0
  const salt = randomBytes(4).toString('hex')
  const path = (i: number): string => `/${randomBytes(3).toString('hex')}/${salt}-${i.toString(36)}${i % 3 === 0 ? `/${randomBytes(2).toString('hex')}` : ''}`
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket: Socket = connect(port, '127.0.0.1')
      let pending = 0
      let buffer: Buffer = Buffer.alloc(0)
      const send = (): void => {
        if (next >= count) return void socket.end()
        const batch: string[] = []
        while (batch.length < depth && next < count) batch.push(`GET ${path(next++)} HTTP/1.1\r\nHost: soak\r\n\r\n`)
        pending = batch.length
        socket.write(batch.join(''))
      }
      socket.on('connect', send)
      socket.on('data', (chunk: Buffer) => {
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
        for (;;) {
          const end = buffer.indexOf('\r\n\r\n')
          if (end === -1) break
          const head = buffer.subarray(0, end).toString('latin1')
          const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? '0')
          if (buffer.length < end + 4 + length) break
          const status = Number(head.slice(9, 12))
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
          buffer = buffer.subarray(end + 4 + length)
          if (--pending === 0) send()
        }
      })
      socket.on('error', reject)
      socket.on('close', () => (pending === 0 ? resolve() : reject(new Error(`connection closed with ${pending} requests unanswered`))))
    })
  return Promise.all(Array.from({ length: connections }, one)).then(() => statuses)
}

const scope = createScope()
const collector = await startCollector()
let exitCode = 0
try {
  const gecko = await fakeCoingecko(scope.test)
  const coinbase = await fakeCoinbase(scope.test)
  const port = await closedPort()
  // Logs go nowhere: a million request lines are not the point here, the process's memory is.
  const server = spawn(process.execPath, [...asItsShebangRuns(`${ROOT}dist/bin/svc.js`), '--port', String(port)], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      SVC_RATE_COINGECKO_URL: gecko.url,
      SVC_RATE_COINBASE_URL: coinbase.url,
      SVC_RATE_CACHE_TTL_MS: '1000',
      OTLP_ENDPOINT: `127.0.0.1:${collector.port}`,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
    },
  })
  scope.test.teardown(() => void server.kill('SIGKILL'))
  await waitForPort(port)
  const base = `http://127.0.0.1:${port}`
  say(
    `svc soak: node ${process.version}, ${RATE} req/s for ${SECONDS} s on ${CONNECTIONS} keep-alive connections (warm-up ${WARMUP_SECONDS} s), then ${figure(RANDOM_PATHS)} random paths`,
  )

  const scrape = async (): Promise<string> => (await fetch(`${base}/metrics`)).text()
  const sampleNow = async (since: number): Promise<Sample> => {
    const text = await scrape()
    const { own, all } = series(text)
    return {
      atS: (performance.now() - since) / 1000,
      rss: sumOf(text, 'process_resident_memory_bytes'),
      heap: sumOf(text, 'nodejs_heap_size_used_bytes'),
      handles: sumOf(text, 'nodejs_active_handles'),
      series: own,
      allSeries: all,
    }
  }

  // Every endpoint, round robin, at a steady rate, with a sample every SAMPLE_SECONDS.
  const client = createClient({ port, connections: CONNECTIONS })
  const mix = [SHOTS.root, SHOTS.health, SHOTS.ready, SHOTS.metrics, SHOTS.externalData, SHOTS.insights, SHOTS.predict, SHOTS.model, SHOTS.infer]
  const steady = async (seconds: number, isReporting: boolean): Promise<Sample[]> => {
    const started = performance.now()
    const samples: Sample[] = [await sampleNow(started)]
    let isLoading = true
    const sampling = (async () => {
      let lastReport = 0
      while (isLoading) {
        await sleep(SAMPLE_SECONDS * 1000)
        const sample = await sampleNow(started)
        samples.push(sample)
        if (isReporting && sample.atS - lastReport >= 30) {
          lastReport = sample.atS
          say(
            `  ${sample.atS.toFixed(0)} s: ${figure(client.outcomes().length)} requests, RSS ${(sample.rss / 2 ** 20).toFixed(1)} MiB, heap ${(sample.heap / 2 ** 20).toFixed(1)} MiB, ${sample.handles} handles`,
          )
        }
      }
    })()
    const end = started + seconds * 1000
    await drive(client, { workers: CONNECTIONS, rate: RATE, pick: roundRobin(mix), isDone: () => performance.now() >= end })
    isLoading = false
    await sampling
    return samples
  }
  /** The lowest of each figure over the samples taken between `from` and `to` seconds. */
  const lowest = (samples: readonly Sample[], from: number, to: number): Sample => {
    const inWindow = samples.filter((s) => s.atS >= from && s.atS <= to)
    const min = (pick: (s: Sample) => number): number => Math.min(...inWindow.map(pick))
    return {
      atS: from,
      rss: min((s) => s.rss),
      heap: min((s) => s.heap),
      handles: min((s) => s.handles),
      series: min((s) => s.series),
      allSeries: min((s) => s.allSeries),
    }
  }

  const samples = await steady(SECONDS, true)
  const outcomes = [...client.outcomes()]
  const { responses, rps, p99Ms } = summarise(outcomes)
  const first = samples[0] as Sample
  const warm = lowest(samples, WARMUP_SECONDS, WARMUP_SECONDS + WINDOW_SECONDS)
  const last = lowest(samples, SECONDS - WINDOW_SECONDS, SECONDS + SAMPLE_SECONDS)
  const growth = (pick: (s: Sample) => number, from = warm, to = last): number => (pick(to) - pick(from)) / pick(from)
  const percent = (g: number): string => `${g >= 0 ? '+' : ''}${(g * 100).toFixed(1)} %`
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1)
  const breaches = (
    [
      ['RSS', growth((s) => s.rss)],
      ['heap used', growth((s) => s.heap)],
      ['active handles', growth((s) => s.handles)],
    ] as const
  ).filter(([, g]) => !(g < MAX_GROWTH))

  const failedOf = (list: readonly Outcome[]): Outcome[] => list.filter((o) => o.kind !== 'response')
  const notOkOf = (list: readonly Outcome[]): Outcome[] => list.filter((o) => o.kind === 'response' && o.status !== 200)
  say(
    `\nSteady load: ${figure(responses)} answers in ${SECONDS} s (${figure(rps)}/s, p99 ${p99Ms.toFixed(2)} ms), ${failedOf(outcomes).length} failed, ${notOkOf(outcomes).length} not 200\n`,
  )
  say(
    table(
      ['Phase', 'RSS MiB', 'Heap used MiB', 'Active handles', 'Series'],
      [
        ['start (before warm-up)', mib(first.rss), mib(first.heap), String(first.handles), String(first.series)],
        [
          `after warm-up (lowest in ${WARMUP_SECONDS.toFixed(0)}–${(WARMUP_SECONDS + WINDOW_SECONDS).toFixed(0)} s)`,
          mib(warm.rss),
          mib(warm.heap),
          String(warm.handles),
          String(warm.series),
        ],
        [`end (lowest in ${(SECONDS - WINDOW_SECONDS).toFixed(0)}–${SECONDS} s)`, mib(last.rss), mib(last.heap), String(last.handles), String(last.series)],
        ['growth after warm-up (limit +10 %)', percent(growth((s) => s.rss)), percent(growth((s) => s.heap)), percent(growth((s) => s.handles)), ''],
      ],
    ),
  )
  say(
    "Series: the service's own samples (runtime-labelled nodejs_* families aside). They grow as each label set is first used and when the first drift check (each minute) writes its gauges; the random paths below must add none.\n",
  )

  // Phase 2: a million paths never seen before. The first few create the <unmatched> series; after
  // that, whatever the paths, no series may appear.
  await randomPaths(port, 100, 1, 100)
  const before = await scrape()
  const seriesBefore = series(before)
  const unmatchedBefore = sumOf(before, 'http_requests_total', { endpoint: '<unmatched>' })
  const pathsStarted = performance.now()
  const statuses = await randomPaths(port, RANDOM_PATHS)
  const pathsSeconds = (performance.now() - pathsStarted) / 1000
  const after = await scrape()
  const seriesAfter = series(after)
  const counted = sumOf(after, 'http_requests_total', { endpoint: '<unmatched>' }) - unmatchedBefore
  const answered = [...statuses.values()].reduce((sum, n) => sum + n, 0)
  say(
    `Random paths: ${figure(RANDOM_PATHS)} sent in ${pathsSeconds.toFixed(1)} s (${figure(RANDOM_PATHS / pathsSeconds)}/s), statuses ${JSON.stringify(Object.fromEntries(statuses))}\n`,
  )
  say(
    table(
      ['', 'Series (service)', 'Series (all)', 'http_requests_total{endpoint="<unmatched>"}'],
      [
        ['before', String(seriesBefore.own), String(seriesBefore.all), figure(unmatchedBefore)],
        ['after', String(seriesAfter.own), String(seriesAfter.all), `${figure(unmatchedBefore + counted)} (+${figure(counted)})`],
      ],
    ),
  )

  // Phase 3: the steady mix again. Nothing of the million paths may stay behind: the heap comes back
  // to where it was before them (resident memory is reported only: freed pages are kept for later).
  const settled = lowest(await steady(SETTLE_SECONDS, false), 0, SETTLE_SECONDS + SAMPLE_SECONDS)
  const settleOutcomes = client.outcomes().slice(outcomes.length)
  client.close()
  const heapAfterPaths = growth((s) => s.heap, last, settled)
  say(
    table(
      ['After the random paths', 'RSS MiB', 'Heap used MiB', 'Active handles'],
      [
        [`steady mix again (lowest in ${SETTLE_SECONDS} s)`, mib(settled.rss), mib(settled.heap), String(settled.handles)],
        [
          'against the end of the steady load (heap limit +10 %)',
          percent(growth((s) => s.rss, last, settled)),
          percent(heapAfterPaths),
          percent(growth((s) => s.handles, last, settled)),
        ],
      ],
    ),
  )

  const problems = [
    ...breaches.map(([what, g]) => `${what} grew ${percent(g)} after warm-up`),
    !(heapAfterPaths < MAX_GROWTH) ? `heap used after the random paths ${percent(heapAfterPaths)} over before them` : '',
    ...[outcomes, settleOutcomes].flatMap((list) => {
      const failed = failedOf(list)
      const notOk = notOkOf(list)
      return [
        failed.length > 0 ? `${failed.length} requests failed (${[...new Set(failed.map((o) => o.error))].join(', ')})` : '',
        notOk.length > 0 ? `${notOk.length} answers not 200 (${[...new Set(notOk.map((o) => `${o.shot.route} ${o.status}`))].join(', ')})` : '',
      ]
    }),
    seriesAfter.own !== seriesBefore.own ? `the random paths changed the series count from ${seriesBefore.own} to ${seriesAfter.own}` : '',
    answered !== RANDOM_PATHS || statuses.get(404) !== RANDOM_PATHS
      ? `${figure(RANDOM_PATHS)} random paths got ${JSON.stringify(Object.fromEntries(statuses))}`
      : '',
    counted !== RANDOM_PATHS ? `${figure(counted)} counted under endpoint="<unmatched>" for ${figure(RANDOM_PATHS)} sent` : '',
  ].filter(Boolean)
  say(
    problems.length === 0
      ? 'Soak passed: no growth past 10 % after warm-up, no failed request, series unchanged by the random paths and the heap back after them.'
      : `Soak FAILED:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
  )
  exitCode = problems.length === 0 ? 0 : 1
} finally {
  await scope.close()
  collector.close()
}
process.exitCode = exitCode
