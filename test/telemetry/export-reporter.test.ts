import { Counter, Registry } from 'prom-client'
import t from 'tap'
import { exportReporter, statusCodeName } from '../../lib/telemetry/export-reporter.js'
import { ExportTimeoutError } from '../../lib/telemetry/span-processor.js'
import { captureLogger } from '../fixtures/app.js'
import { readConfig } from '../../lib/config/config.js'

const grpcError = (code: number, details: string): Error => Object.assign(new Error(`${code} X: ${details}`), { code, details })

t.test('statusCodeName names gRPC codes as StatusCode.<NAME>', async (t) => {
  t.equal(statusCodeName(grpcError(14, 'down')), 'StatusCode.UNAVAILABLE')
  t.equal(statusCodeName(grpcError(3, 'bad')), 'StatusCode.INVALID_ARGUMENT')
  t.equal(statusCodeName(new ExportTimeoutError('slow')), 'StatusCode.DEADLINE_EXCEEDED')
  t.equal(statusCodeName(grpcError(99, '?')), 'StatusCode.UNKNOWN')
  t.equal(statusCodeName(new Error('no code')), 'StatusCode.UNKNOWN')
  t.equal(statusCodeName('text'), 'StatusCode.UNKNOWN')
  t.equal(statusCodeName(undefined), 'StatusCode.UNKNOWN')
})

const setup = () => {
  const { logger, lines } = captureLogger(readConfig({}))
  const registry = new Registry()
  const dropped = new Counter({ name: 'svc_spans_dropped_total', help: 'h', labelNames: ['exporter', 'reason'] as const, registers: [registry] })
  let now = 1000
  const events = exportReporter({ exporter: 'otlp', endpoint: 'http://c:4317' }, logger, dropped, () => now)
  const droppedBy = async (reason: string): Promise<number | undefined> =>
    (await registry.getSingleMetric('svc_spans_dropped_total')?.get())?.values.find((v) => v.labels['reason'] === reason)?.value
  return { events, lines, droppedBy, tick: (ms: number) => void (now += ms) }
}

t.test('one error line per failing period, a new one when the cause changes, one recovery line', async (t) => {
  const { events, lines, droppedBy, tick } = setup()
  t.equal(await droppedBy('export_failed'), 0, 'the series exist from the start')
  t.equal(await droppedBy('queue_full'), 0)
  events.exported(10)
  t.same(lines(), [], 'success while healthy says nothing')
  events.failed(grpcError(14, 'No connection established'), 5)
  tick(500)
  events.failed(grpcError(14, 'No connection established'), 5)
  events.dropped('queue_full', 2)
  tick(500)
  events.failed(grpcError(3, 'bad data'), 1)
  tick(1000)
  events.exported(3)
  events.exported(3)
  const reported = lines().map(({ timestamp: _, ...rest }) => rest)
  t.same(reported, [
    {
      level: 'error',
      event: 'trace_export_failed',
      'service.name': 'svc',
      exporter: 'otlp',
      endpoint: 'http://c:4317',
      code: 'StatusCode.UNAVAILABLE',
      message: 'No connection established',
      spans_dropped: 5,
    },
    {
      level: 'error',
      event: 'trace_export_failed',
      'service.name': 'svc',
      exporter: 'otlp',
      endpoint: 'http://c:4317',
      code: 'StatusCode.INVALID_ARGUMENT',
      message: 'bad data',
      spans_dropped: 1,
    },
    {
      level: 'info',
      event: 'trace_export_recovered',
      'service.name': 'svc',
      exporter: 'otlp',
      endpoint: 'http://c:4317',
      failed_for_ms: 2000,
      spans_dropped: 13,
    },
  ])
  t.equal(await droppedBy('export_failed'), 11)
  t.equal(await droppedBy('queue_full'), 2)
})

t.test('a failure without gRPC details reports its message; a non-error its text', async (t) => {
  const { events, lines } = setup()
  events.failed(new TypeError('cannot serialise'), 1)
  events.exported(1)
  events.failed('plain text', 1)
  t.same(
    lines()
      .filter((l) => l.event === 'trace_export_failed')
      .map((l) => [l['code'], l['message']]),
    [
      ['StatusCode.UNKNOWN', 'cannot serialise'],
      ['StatusCode.UNKNOWN', 'plain text'],
    ],
  )
})

t.test('drops while healthy are counted, not logged', async (t) => {
  const { events, lines, droppedBy } = setup()
  events.dropped('queue_full', 3)
  t.same(lines(), [])
  t.equal(await droppedBy('queue_full'), 3)
})
