// The payload log's series (lib/README.md §10), made at 0 when the writer is built, with
// SVC_PAYLOAD_LOG set; none exist without it. Declared in lib/telemetry/contract/metrics.ts; a write
// is timed whether it is done or failed.
import type { Registry } from 'prom-client'
import {
  counterCell,
  counterSeries,
  gaugeSeries,
  histogramCell,
  histogramSeries,
  registerSeries,
  type CounterCell,
  type HistogramCell,
} from '../../telemetry/metrics/cells.js'

export const PAYLOAD_OUTCOMES = ['written', 'dropped', 'failed'] as const
export type PayloadOutcome = (typeof PAYLOAD_OUTCOMES)[number]

/** A local append takes well under a millisecond; a sink's POST up to its timeout. */
export const WRITE_DURATION_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10] as const

/** Why an event was dropped: past SVC_PAYLOAD_LOG_QUEUE, past SVC_PAYLOAD_LOG_QUEUE_BYTES, near shedding, or left at shutdown. */
export const DROP_REASONS = ['queue', 'bytes', 'pressure', 'shutdown'] as const
export type DropReason = (typeof DROP_REASONS)[number]

export type PayloadCells = Readonly<{
  outcomes: Readonly<Record<PayloadOutcome, CounterCell>>
  /** Each also counted in `outcomes.dropped`. */
  drops: Readonly<Record<DropReason, CounterCell>>
  duration: HistogramCell
}>

/** The cells, registered in `registry`; `depth` is read at each scrape. */
export const createPayloadMetrics = (registry: Registry, depth: () => number): PayloadCells => {
  const outcomes = { written: counterCell({ outcome: 'written' }), dropped: counterCell({ outcome: 'dropped' }), failed: counterCell({ outcome: 'failed' }) }
  const drops = {
    queue: counterCell({ reason: 'queue' }),
    bytes: counterCell({ reason: 'bytes' }),
    pressure: counterCell({ reason: 'pressure' }),
    shutdown: counterCell({ reason: 'shutdown' }),
  }
  const duration = histogramCell({}, WRITE_DURATION_BUCKETS)
  registerSeries(registry, [
    counterSeries(
      'svc_payload_log_events_total',
      'Payload log events by outcome: written, dropped (queue full, under load, left at shutdown) or failed (the file or the sink refused them).',
      { values: () => Object.values(outcomes) },
    ),
    counterSeries(
      'svc_payload_log_dropped_total',
      'Payload log events dropped, by reason: queue (SVC_PAYLOAD_LOG_QUEUE events waiting), bytes (SVC_PAYLOAD_LOG_QUEUE_BYTES held), ' +
        'pressure (near shedding) or shutdown (left at its budget).',
      { values: () => Object.values(drops) },
    ),
    gaugeSeries('svc_payload_log_queue_depth', 'Payload log events waiting to be written.', () => [{ labels: {}, value: depth() }]),
    histogramSeries('svc_payload_log_write_duration_seconds', 'Time to write one batch of payload log events to the file or the sink, in seconds.', {
      values: () => [duration],
    }),
  ])
  return { outcomes: Object.freeze(outcomes), drops: Object.freeze(drops), duration }
}
