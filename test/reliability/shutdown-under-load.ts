// Graceful shutdown under load: the real CLI serves a closed-loop load on
// keep-alive connections, every request with a sampled traceparent of its own, while a probe polls
// /ready on fresh connections as a load balancer would. SIGTERM arrives mid-load and the load keeps
// going until the process has exited. What is recorded lets a caller check that no request failed
// (only connections refused after the listener closed), that refusals began only after /ready had
// answered 503 for the shutdown delay, that answers during the drain closed their connections, and
// that each answer has exactly one request_completed line and one span.
//
// A client that keeps opening connections after /ready says 503 (this one does on purpose; a load
// balancer stops within the shutdown delay) races the listener's close: connections the kernel has
// completed but the process has not read yet are reset when the listener closes (Linux resets its
// accept queue). Such a request never reached the service, like a refused one, so it is counted
// apart as `unread`, and only when the service shows no trace of it: a fresh connection reset
// before any answer, whose trace id is in no log line and no span. Any other reset is a failure.
import { setTimeout as sleep } from 'node:timers/promises'
import { startReceiver } from '../fixtures/otlp-receiver.js'
import { createClient, drive, roundRobin, SHOTS, summarise, type Outcome, type Shot } from './load.js'
import { duplicates } from './nothing-lost.js'
import { completedById, logLines, startService, stopService, type Launch } from './service.js'

export type ShutdownOptions = Readonly<{
  launch: Launch
  connections: number
  /** Load before the signal. */
  loadBeforeMs: number
  /** SVC_SHUTDOWN_DELAY_MS. */
  shutdownDelayMs: number
  /** How often the probe asks /ready. */
  probeEveryMs?: number
}>

export type ShutdownUnderLoad = Readonly<{
  exit: Readonly<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Answers received, probes included; connections refused; requests that failed otherwise. */
  responses: number
  refused: number
  /** Fresh connections reset before the service read their request (see above). */
  unread: number
  failed: readonly Outcome[]
  /** Load answers (not probes) other than 200. */
  notOk: readonly Outcome[]
  rps: number
  p99Ms: number
  /** performance.now() instants: the signal, the last /ready 200 sent, the first 503 received, the first refusal or unread reset. */
  signalAt: number
  lastReadySentAt: number
  firstUnreadyAt: number
  firstRefusedAt: number
  /** Load answers to requests sent after /ready first answered 503, and those of them kept alive. */
  drained: number
  drainedKeptAlive: readonly Outcome[]
  /** Of those, answers on new connections: the listener still accepted during the delay. */
  acceptedWhileDraining: number
  /** Answers before the signal that left their connection open, reused by a later request. */
  keptAliveBefore: number
  lines: Readonly<{ missing: readonly string[]; extra: readonly string[]; duplicated: readonly string[]; wrongTrace: readonly string[] }>
  spans: Readonly<{ received: number; missing: readonly string[]; extra: readonly string[]; duplicated: readonly string[] }>
}>

/** The load: short JSON answers, predictions, and a stream of 3 events 100 ms apart still running when the drain begins. */
const STREAM: Shot = { method: 'GET', path: '/api/insights?count=3&interval=0.1', route: '/api/insights' }
const MIX: readonly Shot[] = [...Array.from({ length: 5 }, () => [SHOTS.root, SHOTS.predict, SHOTS.models]).flat(), SHOTS.model, STREAM]

export const shutdownUnderLoad = async ({
  launch,
  connections,
  loadBeforeMs,
  shutdownDelayMs,
  probeEveryMs = 20,
}: ShutdownOptions): Promise<ShutdownUnderLoad> => {
  const receiver = await startReceiver()
  try {
    const service = await startService(launch, {
      OTLP_ENDPOINT: receiver.hostPort,
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      SVC_SHUTDOWN_DELAY_MS: String(shutdownDelayMs),
      // The probes log their request lines at debug.
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
    })
    let hasExited = false
    const exited = service.child.exited.then((exit) => {
      hasExited = true
      return exit
    })
    const client = createClient({ port: service.port, connections, isTraced: true })
    try {
      const load = drive(client, { workers: connections, pick: roundRobin(MIX), isDone: () => hasExited })
      const probing = (async () => {
        while (!hasExited) {
          await client.probe(SHOTS.ready)
          await sleep(probeEveryMs)
        }
      })()
      await sleep(loadBeforeMs)
      const signalAt = performance.now()
      const exit = await stopService(service)
      await Promise.all([load, probing, exited])

      const all = client.outcomes()
      const answered = all.filter((o) => o.kind === 'response')
      const work = answered.filter((o) => o.shot !== SHOTS.ready)
      const ready = answered.filter((o) => o.shot === SHOTS.ready)
      const firstUnreadyAt = Math.min(...ready.filter((o) => o.status === 503).map((o) => o.doneAt))
      const drained = work.filter((o) => o.sentAt > firstUnreadyAt)

      const lines = logLines(service.child)
      const completed = completedById(lines)
      const answeredIds = new Set(answered.map((o) => o.requestId as string))
      const spans = receiver.spans().map((s) => s.traceId)
      const spanSet = new Set(spans)
      const sentTraces = new Set(answered.map((o) => o.traceId as string))
      const seen = new Set([...spans, ...lines.flatMap((l) => (typeof l['trace_id'] === 'string' ? [l['trace_id']] : []))])
      const isUnread = (o: Outcome): boolean => o.kind === 'failed' && o.error === 'ECONNRESET' && !o.isReused && !seen.has(o.traceId as string)
      const refusals = all.filter((o) => o.kind === 'refused' || isUnread(o))
      const { rps, p99Ms } = summarise(work)
      return {
        exit,
        responses: answered.length,
        refused: all.filter((o) => o.kind === 'refused').length,
        unread: all.filter(isUnread).length,
        failed: all.filter((o) => o.kind === 'failed' && !isUnread(o)),
        notOk: work.filter((o) => o.status !== 200),
        rps,
        p99Ms,
        signalAt,
        lastReadySentAt: Math.max(...ready.filter((o) => o.status === 200).map((o) => o.sentAt)),
        firstUnreadyAt,
        firstRefusedAt: Math.min(...refusals.map((o) => o.doneAt)),
        drained: drained.length,
        drainedKeptAlive: drained.filter((o) => !o.isClosing),
        acceptedWhileDraining: drained.filter((o) => !o.isReused).length,
        keptAliveBefore: work.filter((o) => o.doneAt < signalAt && !o.isClosing && o.isReused).length,
        lines: {
          missing: [...answeredIds].filter((id) => !completed.has(id)),
          extra: [...completed.keys()].filter((id) => !answeredIds.has(id)),
          duplicated: [...completed].filter(([, c]) => c.count > 1).map(([id]) => id),
          wrongTrace: answered.filter((o) => completed.get(o.requestId as string)?.traceId !== o.traceId).map((o) => o.requestId as string),
        },
        spans: {
          received: spans.length,
          missing: [...sentTraces].filter((id) => !spanSet.has(id)),
          extra: [...spanSet].filter((id) => !sentTraces.has(id)),
          duplicated: duplicates(spans),
        },
      }
    } finally {
      client.close()
      if (!hasExited) await stopService(service)
    }
  } finally {
    await receiver.close()
  }
}
