// Nothing lost: a steady load over keep-alive connections mixing GET /,
// POST /api/v1/predict and GET /api/v1/models against the real CLI, exporting spans over OTLP/gRPC
// to a live receiver with a ratio sampler. Afterwards every answer is accounted for three ways:
// one request_completed line per response (matched by X-Request-ID), one span per sampled request
// (the trace ids of the log lines against those the receiver decoded), and http_requests_total
// equal to the client's count, with svc_spans_dropped_total at 0.
import { startReceiver } from '../fixtures/otlp-receiver.js'
import { createClient, drive, roundRobin, SHOTS, summarise, type Outcome } from './load.js'
import { completedById, logLines, startService, stopService, sumOf, type Launch } from './service.js'

export type NothingLostOptions = Readonly<{
  launch: Launch
  /** Requests a second, and for how long. */
  rate: number
  durationMs: number
  connections: number
  /** parentbased_traceidratio's ratio. */
  ratio: number
}>

export type RouteCount = Readonly<{ route: string; sent: number; counted: number }>

export type NothingLost = Readonly<{
  /** Answers received, /metrics scrapes included. */
  responses: number
  /** Requests without a complete answer, and answers that were not 200. */
  failed: readonly Outcome[]
  notOk: readonly Outcome[]
  rps: number
  p99Ms: number
  lines: Readonly<{ completed: number; missing: readonly string[]; extra: readonly string[]; duplicated: readonly string[] }>
  /** Trace ids in request_completed lines (the sampled requests) against SERVER spans received. */
  spans: Readonly<{ sampled: number; received: number; missing: readonly string[]; extra: readonly string[]; duplicated: readonly string[] }>
  /** svc_spans_dropped_total summed over its reasons, and whether the series exists at all. */
  dropped: number
  hasDroppedSeries: boolean
  /** http_requests_total per route used, against what the client sent (scrapes are not counted). */
  routes: readonly RouteCount[]
  countedTotal: number
  sentTotal: number
  exit: Readonly<{ code: number | null; signal: NodeJS.Signals | null }>
}>

const MIX = [SHOTS.root, SHOTS.predict, SHOTS.models]

const difference = (a: Iterable<string>, b: ReadonlySet<string>): string[] => [...a].filter((x) => !b.has(x))

/** Values that occur more than once, each listed once. */
export const duplicates = (values: readonly string[]): string[] => {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const value of values) (seen.has(value) ? twice : seen).add(value)
  return [...twice]
}

export const nothingLost = async ({ launch, rate, durationMs, connections, ratio }: NothingLostOptions): Promise<NothingLost> => {
  const receiver = await startReceiver()
  try {
    const service = await startService(launch, {
      OTLP_ENDPOINT: receiver.hostPort,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(ratio),
      OTEL_BSP_SCHEDULE_DELAY: '50',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    })
    let exit: NothingLost['exit'] | undefined
    try {
      const client = createClient({ port: service.port, connections })
      const end = performance.now() + durationMs
      await drive(client, { workers: connections, rate, pick: roundRobin(MIX), isDone: () => performance.now() >= end })
      const load = client.outcomes()
      const { rps, p99Ms } = summarise(load)

      // Scraped once the load is answered: every request of it is counted by then.
      const scrape = await fetch(`${service.base}/metrics`)
      const text = await scrape.text()
      const scrapeId = scrape.headers.get('x-request-id') as string
      client.close()
      exit = await stopService(service)

      const answered = load.filter((o) => o.kind === 'response')
      const expectedIds = new Set([...answered.map((o) => o.requestId as string), scrapeId])
      const completed = completedById(logLines(service.child))
      const sampled = new Set([...completed.values()].flatMap((c) => (c.traceId === undefined ? [] : [c.traceId])))
      const spanIds = receiver.spans().map((s) => s.traceId)
      const spanSet = new Set(spanIds)
      const sentByRoute = new Map(MIX.map((shot) => [shot.route, answered.filter((o) => o.shot.route === shot.route).length]))
      const routes = [...sentByRoute].map(([route, sent]) => ({ route, sent, counted: sumOf(text, 'http_requests_total', { endpoint: route }) }))
      return {
        responses: expectedIds.size,
        failed: load.filter((o) => o.kind !== 'response'),
        notOk: answered.filter((o) => o.status !== 200),
        rps,
        p99Ms,
        lines: {
          completed: [...completed.values()].reduce((sum, c) => sum + c.count, 0),
          missing: difference(expectedIds, new Set(completed.keys())),
          extra: difference(completed.keys(), expectedIds),
          duplicated: [...completed].filter(([, c]) => c.count > 1).map(([id]) => id),
        },
        spans: {
          sampled: sampled.size,
          received: spanIds.length,
          missing: difference(sampled, spanSet),
          extra: difference(spanSet, sampled),
          duplicated: duplicates(spanIds),
        },
        dropped: sumOf(text, 'svc_spans_dropped_total'),
        // A sample line, not the HELP or TYPE line alone.
        hasDroppedSeries: /^svc_spans_dropped_total\{/m.test(text),
        routes,
        countedTotal: sumOf(text, 'http_requests_total'),
        sentTotal: answered.length,
        exit,
      }
    } finally {
      if (exit === undefined) await stopService(service)
    }
  } finally {
    await receiver.close()
  }
}
