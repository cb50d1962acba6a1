// The OpenTelemetry SDK, set up once at start-up (lib/README.md §6): resource, sampler, a bounded
// batch processor per exporter (OTLP/gRPC, console), the request-store context manager. With no
// exporter configured nothing is set up: no provider, no tracing layer (lib/app.ts leaves it out),
// and getTracer() hands out the API's no-op tracer, so custom spans in endpoints cost nothing either.
import { context, propagation, trace, type Tracer } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import { NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { Counter, type Registry } from 'prom-client'
import type { Environment, TracingConfig } from '../config/config.js'
import { consoleExporter } from './console-exporter.js'
import { contextManager } from './context-manager.js'
import { exportReporter, type ExporterInfo } from './export-reporter.js'
import type { Logger } from './logger.js'
import { createSampling, type Sampling } from './sampling.js'
import { BoundedBatchProcessor } from './span-processor.js'

/** The instrumentation scope of the service's own spans, and of getTracer()'s. */
export const TRACER_NAME = 'svc'

/**
 * The tracer for custom spans. Started inside an endpoint, a span is a child of the request's
 * SERVER span; when tracing is off it is a no-op that records nothing.
 */
export const getTracer = (): Tracer => trace.getTracer(TRACER_NAME)

/** What the tracing layer (lib/layers/tracing.ts) needs to open a SERVER span per request. */
export type ServerTracing = Readonly<{ tracer: Tracer; decideRoot: Sampling['decideRoot'] }>

export type Tracing = Readonly<{
  /** For the tracing layer; undefined when no exporter is configured, and the layer is left out. */
  server: ServerTracing | undefined
  /**
   * Exports every span still queued, then closes the exporters and unregisters the SDK. Bounded:
   * spans not out after `timeoutMs` are given up (and counted as dropped by a later export).
   */
  shutdown(timeoutMs: number): Promise<{ isComplete: boolean }>
}>

export type TracingOptions = Readonly<{
  config: TracingConfig
  service: Readonly<{ name: string; version: string; environment: Environment }>
  logger: Logger
  metrics: Registry
  /** Where console spans are written: the service's stdout writer. */
  writeConsole: (chunk: string) => void
}>

const OFF: Tracing = Object.freeze({ server: undefined, shutdown: () => Promise.resolve({ isComplete: true }) })

export const createTracing = ({ config, service, logger, metrics, writeConsole }: TracingOptions): Tracing => {
  const sinks: Array<ExporterInfo & { sink: SpanExporter }> = []
  if (config.otlp !== undefined) sinks.push({ exporter: 'otlp', endpoint: config.otlp.url, sink: new OTLPTraceExporter({ url: config.otlp.url }) })
  if (config.isConsole) sinks.push({ exporter: 'console', endpoint: 'stdout', sink: consoleExporter(writeConsole) })
  if (sinks.length === 0) return OFF

  const dropped = new Counter({
    name: 'svc_spans_dropped_total',
    help: 'Spans lost: the export queue was full, or their batch failed to export.',
    labelNames: ['exporter', 'reason'] as const,
    registers: [metrics],
  })
  const processors = sinks.map(({ sink, ...info }) => new BoundedBatchProcessor(sink, config.batch, exportReporter(info, logger, dropped)))
  const resource = defaultResource().merge(
    resourceFromAttributes({ 'service.name': service.name, 'service.version': service.version, 'deployment.environment': service.environment }),
  )
  const { sampler, decideRoot } = createSampling(config)
  const provider = new NodeTracerProvider({ resource, sampler, spanProcessors: processors })
  // Registers the global tracer provider (getTracer), our context manager and the W3C propagator.
  provider.register({ contextManager })

  let isShutDown = false
  return {
    server: Object.freeze({ tracer: provider.getTracer(TRACER_NAME, service.version), decideRoot }),
    shutdown: async (timeoutMs) => {
      // Once is enough: a second call, after one that gave up, must not wait on a stuck export again.
      if (isShutDown) return { isComplete: true }
      isShutDown = true
      let timer: NodeJS.Timeout | undefined
      const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)))
      const isComplete = await Promise.race([provider.shutdown().then(() => true), timedOut])
      clearTimeout(timer)
      trace.disable()
      context.disable()
      propagation.disable()
      return { isComplete }
    },
  }
}
