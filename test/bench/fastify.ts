// The conventional stack svc is compared with: fastify 5 with its pino request logging, fastify-metrics
// and, when OTLP_ENDPOINT (host:port of an OTLP/gRPC receiver, plaintext) is set, OpenTelemetry tracing
// always-on, set up as the fastify and OpenTelemetry docs show. It answers GET / with the CLI's body and
// the headers svc sends on every answer, so the benchmark can put "svc with tracing always-on reaches X×
// bare node:http's req/s" beside "fastify's stack reaches Y×". Logs go to stdout, which the benchmark
// points at a file. Usage: fastify.js <port>
//
// Each part is there because the usual deployment of each has it, left at its defaults:
//   logger: true      pino JSON on stdout, fastify's "incoming request" and "request completed" lines
//                     (svc's request_started and request_completed)
//   genReqId          a random UUID per request, as svc's request id; pino logs it as reqId
//   onRequest hook    X-Request-ID, X-Content-Type-Options and Cache-Control on every answer, 404 and
//                     /metrics included, as svc sends them
//   fastify-metrics   route metrics (http_request_duration_seconds histogram and summary) and
//                     prom-client's default metrics, served at /metrics (svc's metrics layer)
//   tracing           @opentelemetry/instrumentation-http for the SERVER span and propagation (the
//                     @fastify/otel README asks for it), @fastify/otel for the request, hook and
//                     handler spans, a BatchSpanProcessor and the OTLP/gRPC exporter svc uses
//
// Versions checked (package-lock.json): fastify 5.12.8, pino 10.4.0 (fastify's), fastify-metrics
// 13.2.1 (the last on prom-client 15, which it shares with svc; 14.x moved to @prometheus-io/client,
// which needs Node 22), @fastify/otel 0.21.2 and @opentelemetry/instrumentation-http 0.223.0 (the
// exporter's line; @fastify/otel brings its own @opentelemetry/instrumentation 0.222, all else dedupes).
import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler } from '@opentelemetry/sdk-trace-node'
import { FastifyOtelInstrumentation } from '@fastify/otel'

const [port = '0'] = process.argv.slice(2)
// A normal exit on SIGTERM, as servers.ts does, so `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0))

/**
 * The CLI's GET / body, captured from `node dist/bin/svc.js` (APP_NAME and the environment unset) on
 * this tree: its 24 routes, 1 097 bytes. Hard-coded rather than built from lib/app.ts, which would load
 * the whole service. Sent as a ready string, as svc sends it, so the comparison is of the stacks and
 * not of a JSON.stringify per request.
 */
const ROOT_BODY =
  '{"service":"svc","version":"1.0.0","environment":"dev","endpoints":[{"method":"GET","path":"/"},{"method":"GET","path":"/metrics"},' +
  '{"method":"GET","path":"/health"},{"method":"GET","path":"/ready"},{"method":"GET","path":"/startup"},{"method":"GET","path":"/api/external-data"},' +
  '{"method":"GET","path":"/api/insights"},{"method":"POST","path":"/api/v1/predict"},{"method":"GET","path":"/api/v1/models"},' +
  '{"method":"GET","path":"/api/v1/models/{name}"},{"method":"POST","path":"/v2/models/{name}/infer"},' +
  '{"method":"POST","path":"/v2/models/{name}/versions/{version}/infer"},{"method":"GET","path":"/v2/models/{name}"},' +
  '{"method":"GET","path":"/v2/models/{name}/versions/{version}"},{"method":"GET","path":"/v2/models/{name}/ready"},' +
  '{"method":"GET","path":"/v2/models/{name}/versions/{version}/ready"},{"method":"GET","path":"/v2/health/live"},' +
  '{"method":"GET","path":"/v2/health/ready"},{"method":"GET","path":"/v2"},{"method":"GET","path":"/docs"},{"method":"GET","path":"/docs/{asset}"},' +
  '{"method":"GET","path":"/demo"},{"method":"GET","path":"/demo/{asset}"},{"method":"GET","path":"/openapi.json"}]}'

const endpoint = process.env['OTLP_ENDPOINT']
let fastifyOtel: FastifyOtelInstrumentation | undefined
if (endpoint !== undefined && endpoint !== '') {
  // Always on whatever OTEL_TRACES_SAMPLER says: the bench's always-on row is parentbased_always_on.
  // The batch processor reads the same OTEL_BSP_* variables as svc's.
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'fastify-bench' })),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `http://${endpoint}` }))],
  })
  provider.register()
  fastifyOtel = new FastifyOtelInstrumentation()
  // Before fastify is loaded: instrumentation-http patches node:http when it is next required.
  registerInstrumentations({ tracerProvider: provider, instrumentations: [new HttpInstrumentation(), fastifyOtel] })
}

// Loaded with require, after the instrumentations are registered: instrumentation-http patches through
// require-in-the-middle, which sees CommonJS requires only (an ESM import would need its
// import-in-the-middle loader). fastify is CommonJS, so its require('node:http') is the one seen.
const requireCjs = createRequire(import.meta.url)
const { fastify } = requireCjs('fastify') as typeof import('fastify')
const fastifyMetrics = (requireCjs('fastify-metrics') as { default: typeof import('fastify-metrics').default }).default

const app = fastify({ logger: true, genReqId: () => randomUUID() })
// First, as its README asks, so every hook and route registered after it is traced.
if (fastifyOtel !== undefined) await app.register(fastifyOtel.plugin())
app.addHook('onRequest', (request, reply, done) => {
  reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store')
  done()
})
await app.register(fastifyMetrics)
app.get('/', (_request, reply) => {
  reply.header('content-type', 'application/json').send(ROOT_BODY)
})
await app.listen({ host: '127.0.0.1', port: Number(port) })
