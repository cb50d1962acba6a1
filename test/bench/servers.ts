// The servers the benchmark compares, one per process, answering the same JSON as the CLI's GET /.
// Logs go to stdout, which the benchmark points at a file. Usage: servers.ts <variant> <port>
//
// The account's ladder, each rung the one before plus one thing the CLI does per request, so the
// differences between neighbours add up to the CLI's cost over bare node:http:
//   bare-no-date    node:http without its Date header (what that header costs bare node:http too)
//   bare            node:http, a precomputed body
//   bare-id         + a request id: a random UUID, sent as X-Request-ID
//   bare-headers    + X-Content-Type-Options and Cache-Control
//   none            svc's own server instead: Ctx, the head checks, the router, the reply writer
//   store           + the logging layer with its lines off: entering AsyncLocalStorage only
//   lines-encoded   + request_started and request_completed built, then thrown away
//   logging         + the lines written to stdout (the line writer)
//   both            + the metrics layer
// (the CLI itself is the last rung, run by the benchmark), and beside them:
//   metrics         the metrics layer alone
//   tracing         the tracing layer alone, with the tracing variables from the environment
//   body            `none` with POST /api/v1/predict reading the body and answering a fixed reply:
//                   what reading a body costs the server before any JSON is parsed
import { randomUUID } from 'node:crypto'
import { createServer as createHttpServer } from 'node:http'
import { readConfig } from '../../lib/process/config/config.js'
import { getRoot } from '../../lib/endpoints/root.js'
import { logging } from '../../lib/layers/logging.js'
import { tracing as tracingLayer } from '../../lib/layers/tracing.js'
import { metrics } from '../../lib/layers/metrics.js'
import type { Layer, Reply, RouteDef } from '../../lib/core/pipeline.js'
import { createRouter } from '../../lib/core/router.js'
import { createServer } from '../../lib/core/server/server.js'
import { createLineWriter } from '../../lib/telemetry/line-writer.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { createMetricsRegistry } from '../../lib/telemetry/registry.js'
import { createTracing, type ServerTracing } from '../../lib/telemetry/tracer.js'
import { VERSION } from '../../lib/process/version.js'

const [variant = 'bare', port = '0'] = process.argv.slice(2)
// A normal exit on SIGTERM, so `node --cpu-prof` writes its profile (the CLI exits so on its own).
process.once('SIGTERM', () => process.exit(0))
const config = readConfig({ ...process.env, PORT: port })
const info = { name: config.name, version: VERSION, environment: config.environment }
const endpoints = [
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/metrics' },
]

const BARE_HEADERS: Readonly<Record<string, number>> = { 'bare-no-date': 0, bare: 0, 'bare-id': 1, 'bare-headers': 2 }

if (variant in BARE_HEADERS) {
  const body = JSON.stringify({ service: info.name, version: info.version, environment: info.environment, endpoints })
  const length = Buffer.byteLength(body)
  const extra = BARE_HEADERS[variant] as number
  const sendDate = variant !== 'bare-no-date'
  createHttpServer((_req, res) => {
    res.sendDate = sendDate
    if (extra === 0) res.writeHead(200, { 'content-type': 'application/json', 'content-length': length })
    else if (extra === 1) res.writeHead(200, { 'content-type': 'application/json', 'content-length': length, 'x-request-id': randomUUID() })
    else {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': length,
        'x-request-id': randomUUID(),
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      })
    }
    res.end(body)
  }).listen(config.port, config.host)
} else {
  const out = createLineWriter(1)
  const level = variant === 'store' ? 'warning' : 'info'
  const write = variant === 'lines-encoded' ? (_chunk: string): void => {} : out.write
  const logger = createLogger({ name: config.name, level, format: 'json', write })
  const registry = createMetricsRegistry({ environment: config.environment, version: VERSION })
  const layers: Layer[] = []
  if (['store', 'lines-encoded', 'logging', 'both'].includes(variant)) layers.push(logging(logger))
  if (variant === 'metrics' || variant === 'both') layers.push(metrics(registry.http))
  if (variant === 'tracing') {
    const tracing = createTracing({ config: config.tracing, service: info, logger, metrics: registry.prom, writeConsole: out.write })
    const server = tracing.server as ServerTracing
    layers.push(tracingLayer(server.tracer, server.decideRoot))
  }
  const routes: RouteDef[] = [{ method: 'GET', path: '/', handler: getRoot(info, endpoints) }]
  if (variant === 'body') {
    const answered: Reply = Object.freeze({ kind: 'json', status: 200, json: '{"read":true}' })
    routes.push({
      method: 'POST',
      path: '/api/v1/predict',
      handler: async (ctx) => {
        await ctx.body()
        return answered
      },
    })
  }
  void createServer({ config, router: createRouter(routes, layers), logger }).listen()
}
