// How the process ends (lib/README.md §8): graceful shutdown on SIGTERM/SIGINT, and an orderly death
// on an uncaught exception or unhandled rejection. `exit` is injected so tests can watch it.
//
// The sequence, on the first SIGTERM or SIGINT: hot reload, drift checks and the lag sampler stop
// (it then reads 0: lag sheds nothing while the balancer still routes here, SVC_MAX_IN_FLIGHT still
// does); `shutdown_started`; the state turns `draining`, so /ready answers 503 at once and every
// answer carries `Connection: close`, while the listeners keep accepting for SVC_SHUTDOWN_DELAY_MS
// (time for a load balancer to stop routing); then both listeners close, idle keep-alive sockets at
// once, and `closing` aborts: an open /api/insights stream ends at once with its `shutdown` event
// (its client reconnects elsewhere), so it holds no drain; in-flight requests get
// SVC_DRAIN_TIMEOUT_MS, after which open connections are closed (`application_stopped` is then a
// warning); queued spans, and payload log events, are flushed for at most 5 s, side by side (events
// left then count as dropped); `application_stopped`; exit 0, and the `exit` hook flushes the logs.
// A second signal logs `shutdown_forced` and exits 128 + its number. An uncaught exception or
// unhandled rejection is logged on stderr and exits 1.
import { constants } from 'node:os'
import type { SvcServer } from '../server/server.js'
import type { DriftScheduler } from '../drift/scheduler.js'
import type { Shedding } from '../layers/shedding.js'
import type { PayloadWriter } from '../serving/payload/writer.js'
import type { ModelRegistry } from '../models/registry/registry.js'
import type { Tracing } from '../telemetry/tracer.js'
import { errorFields, type Logger } from '../telemetry/logger.js'

export type Exit = (code: number) => void

/** Logs the failure with its stack and exits 1; the 'exit' hook flushes logs, systemd restarts. */
export const exitOnFatal = (processLog: Logger, exit: Exit): void => {
  const die =
    (event: string) =>
    (error: unknown): void => {
      processLog.error(event, { error: errorFields(error) })
      exit(1)
    }
  process.on('uncaughtException', die('uncaught_exception'))
  process.on('unhandledRejection', die('unhandled_rejection'))
}

/** How long queued spans may take to reach the collector once the drain is over. */
export const SPAN_FLUSH_TIMEOUT_MS = 5000
/** How long queued payload log events may take to be written, alongside the spans: what is left is counted dropped. */
export const PAYLOAD_FLUSH_TIMEOUT_MS = SPAN_FLUSH_TIMEOUT_MS

/**
 * First signal: readiness turns 503 (the server state is `draining`), the listener closes after
 * the shutdown delay, in-flight requests and streams finish within the drain timeout, queued
 * spans and payload log events are flushed (those of the drain included), exit 0 — the 'exit'
 * hook then flushes logs.
 * A second signal exits at once with 128 + its number, as a shell reports a process killed by it.
 */
export const stopOnSignals = (
  {
    server,
    admin,
    tracing,
    models,
    drift,
    shedding,
    payloadLog,
  }: Readonly<{
    server: SvcServer
    admin?: SvcServer | undefined
    tracing: Tracing
    models: Pick<ModelRegistry, 'stop'>
    drift?: Readonly<{ scheduler: Pick<DriftScheduler, 'stop'> }> | undefined
    shedding?: Pick<Shedding, 'stop'>
    payloadLog?: Pick<PayloadWriter, 'stop'> | undefined
  }>,
  logger: Logger,
  limits: Readonly<{ drainTimeoutMs: number; shutdownDelayMs: number }>,
  exit: Exit,
): void => {
  let isStopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (isStopping) {
      logger.warning('shutdown_forced', { signal })
      return exit(128 + constants.signals[signal])
    }
    isStopping = true
    models.stop()
    drift?.scheduler.stop()
    shedding?.stop()
    logger.info('shutdown_started', { signal, shutdown_delay_ms: limits.shutdownDelayMs, drain_timeout_ms: limits.drainTimeoutMs })
    // The admin listener drains alongside: its /ready answers 503 for the same delay, then closes.
    void Promise.all([server.drain(), admin?.drain()]).then(async ([{ isComplete }]) => {
      const [spans] = await Promise.all([tracing.shutdown(SPAN_FLUSH_TIMEOUT_MS), payloadLog?.stop(PAYLOAD_FLUSH_TIMEOUT_MS)])
      if (!spans.isComplete) logger.warning('trace_flush_incomplete', { timeout_ms: SPAN_FLUSH_TIMEOUT_MS })
      if (isComplete) logger.info('application_stopped', { signal })
      else logger.warning('application_stopped', { signal, reason: `drain timeout after ${limits.drainTimeoutMs} ms; open connections were closed` })
      exit(0)
    })
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
