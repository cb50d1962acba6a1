import { trace } from '@opentelemetry/api'
import { Registry } from 'prom-client'
import t from 'tap'
import { readConfig } from '../../lib/config/config.js'
import { createTracing, getTracer } from '../../lib/telemetry/tracer.js'
import { captureLogger } from '../fixtures/app.js'
import { silentServer } from '../fixtures/tcp.js'

const service = { name: 'svc', version: '1.0.0', environment: 'dev' } as const

t.test('with no exporter, nothing is set up and getTracer() records nothing', async (t) => {
  const config = readConfig({})
  const { logger } = captureLogger(config)
  const tracing = createTracing({ config: config.tracing, service, logger, metrics: new Registry(), writeConsole: () => t.fail('nothing to print') })
  t.equal(tracing.server, undefined)
  const span = getTracer().startSpan('custom')
  t.equal(span.isRecording(), false)
  span.end()
  t.same(await tracing.shutdown(10), { isComplete: true })
})

t.test('shutdown gives up after its bound when the collector never answers', async (t) => {
  // Accepts connections and never speaks HTTP/2: an export waits for its deadline.
  const { port } = await silentServer(t)
  const config = readConfig({ OTLP_ENDPOINT: `127.0.0.1:${port}`, OTEL_BSP_EXPORT_TIMEOUT: '2000' })
  const { logger } = captureLogger(config)
  const tracing = createTracing({ config: config.tracing, service, logger, metrics: new Registry(), writeConsole: () => {} })
  getTracer().startSpan('queued').end()
  const started = performance.now()
  t.same(await tracing.shutdown(100), { isComplete: false })
  t.ok(performance.now() - started < 1000, 'bounded by the shutdown timeout, not the export deadline')
  t.equal(trace.getTracer('x').startSpan('after').isRecording(), false, 'the SDK is unregistered')
  // The export the first call gave up on is still stuck: a second call must not wait on it again.
  const again = performance.now()
  t.same(await tracing.shutdown(5000), { isComplete: true }, 'a second shutdown answers at once')
  t.ok(performance.now() - again < 1000, 'without waiting for its bound')
})
