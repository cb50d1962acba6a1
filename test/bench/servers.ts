// The servers the benchmark compares, one per process: `bare` is node:http answering the same JSON
// as GET /; the others are the service's own server with a chosen set of layers. Logs go to
// stdout, which the benchmark points at a file. `tracing` reads the tracing variables from the
// environment. Usage: servers.ts <bare|none|logging|metrics|both|tracing> <port>
import { createServer as createHttpServer } from 'node:http'
import { readConfig } from '../../lib/config.js'
import { getRoot } from '../../lib/endpoints/root.js'
import { logging } from '../../lib/layers/logging.js'
import { tracing as tracingLayer } from '../../lib/layers/tracing.js'
import { metrics } from '../../lib/layers/metrics.js'
import type { Layer } from '../../lib/pipeline.js'
import { createRouter } from '../../lib/router.js'
import { createServer } from '../../lib/server.js'
import { createLineWriter } from '../../lib/telemetry/line-writer.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { createMetricsRegistry } from '../../lib/telemetry/registry.js'
import { createTracing, type ServerTracing } from '../../lib/telemetry/tracer.js'
import { VERSION } from '../../lib/version.js'

const [variant = 'bare', port = '0'] = process.argv.slice(2)
const config = readConfig({ ...process.env, PORT: port })
const info = { name: config.name, version: VERSION, environment: config.environment }
const endpoints = [
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/metrics' },
]

if (variant === 'bare') {
  const body = JSON.stringify({ service: info.name, version: info.version, environment: info.environment, endpoints })
  const length = Buffer.byteLength(body)
  createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': length })
    res.end(body)
  }).listen(config.port, config.host)
} else {
  const out = createLineWriter(1)
  const logger = createLogger({ name: config.name, level: 'info', format: 'json', write: out.write })
  const registry = createMetricsRegistry({ environment: config.environment, version: VERSION })
  const layers: Layer[] = []
  if (variant === 'logging' || variant === 'both') layers.push(logging(logger))
  if (variant === 'metrics' || variant === 'both') layers.push(metrics(registry.http))
  if (variant === 'tracing') {
    const tracing = createTracing({ config: config.tracing, service: info, logger, metrics: registry.prom, writeConsole: out.write })
    const server = tracing.server as ServerTracing
    layers.push(tracingLayer(server.tracer, server.decideRoot))
  }
  const router = createRouter([{ method: 'GET', path: '/', handler: getRoot(info, endpoints) }], layers)
  void createServer({ config, router, logger }).listen()
}
