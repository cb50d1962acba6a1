// Reports the health of a span exporter on the application's output, once per failing period:
// the first failed export logs an error carrying its gRPC status code name (the seed's
// `StatusCode.UNAVAILABLE` when the collector cannot be reached), later failures of the same kind
// are only counted, and the first success after them logs how long the outage lasted and what it
// cost. Every lost span is counted in svc_spans_dropped_total.
import type { Counter } from 'prom-client'
import type { Logger } from './logger.js'
import type { DropReason, ExportEvents } from './span-processor.js'

/** gRPC status codes by number (grpc/grpc doc/statuscodes.md), named as Python's grpc prints them. */
const GRPC_STATUS = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const

/** `StatusCode.<NAME>` of a failed export; an error without a gRPC code is UNKNOWN. */
export const statusCodeName = (error: unknown): string => {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return `StatusCode.${(typeof code === 'number' && GRPC_STATUS[code]) || 'UNKNOWN'}`
}

/** The gRPC `details` when there are some: the message repeats the code in front of them. */
const describe = (error: unknown): string => {
  if (typeof error !== 'object' || error === null) return String(error)
  const { details, message } = error as { details?: unknown; message?: unknown }
  return typeof details === 'string' && details !== '' ? details : String(message)
}

export type ExporterInfo = Readonly<{ exporter: string; endpoint: string }>

export const exportReporter = (info: ExporterInfo, logger: Logger, dropped: Counter<'exporter' | 'reason'>, now: () => number = Date.now): ExportEvents => {
  const count = (reason: DropReason, n: number): void => dropped.inc({ exporter: info.exporter, reason }, n)
  // Both series exist from start-up, so rate() and increase() see the first loss.
  count('queue_full', 0)
  count('export_failed', 0)
  let failure: { code: string; since: number; lost: number } | undefined
  return {
    exported() {
      if (failure === undefined) return
      logger.info('trace_export_recovered', { ...info, failed_for_ms: now() - failure.since, spans_dropped: failure.lost })
      failure = undefined
    },
    failed(error, n) {
      count('export_failed', n)
      const code = statusCodeName(error)
      // A new cause is a new failing period: the operator's fix for the first may have exposed it.
      if (failure === undefined || failure.code !== code) {
        logger.error('trace_export_failed', { ...info, code, message: describe(error), spans_dropped: n })
        failure = { code, since: failure?.since ?? now(), lost: (failure?.lost ?? 0) + n }
      } else {
        failure.lost += n
      }
    },
    dropped(reason, n) {
      count(reason, n)
      if (failure !== undefined) failure.lost += n
    },
  }
}
