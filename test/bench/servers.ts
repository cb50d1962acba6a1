// The servers the benchmark compares, one per process; the GET ones answer a JSON of the CLI's GET / shape (its two first endpoints).
// Logs go to stdout, which the benchmark points at a file. Usage: servers.ts <variant> <port>
//
// The limits each svc variant is a ratio to, node:http with nothing of svc's:
//   bare-get        GET: a small fixed JSON, `{"ok":true}`, with Content-Type and Content-Length
//   bare-post       POST: reads the body, runs JSON.parse on it and answers a fixed JSON of a
//                   batch-1 iris prediction's size (296 bytes), whatever body it is sent
//   bare-post-spin-N  bare-post plus N µs of pure CPU per request: the calibration
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
//   post-*          the POST ladder (POST_LADDER below)
//   body            `none` with POST /api/v1/predict reading the body and answering a fixed reply:
//                   what reading a body costs the server before any JSON is parsed
import { randomUUID } from 'node:crypto'
import { createServer as createHttpServer } from 'node:http'
import { readConfig } from '../../lib/config/config.js'
import { getRoot } from '../../lib/endpoints/root.js'
import { logging } from '../../lib/layers/logging.js'
import { tracing as tracingLayer } from '../../lib/layers/tracing.js'
import { metrics } from '../../lib/layers/metrics.js'
import type { Handler, Layer, Reply, RouteDef } from '../../lib/core/pipeline.js'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { kernelRuntime } from '../../lib/models/kernel/runtime.js'
import { encodeInputs } from '../../lib/models/inference/features.js'
import { readPredictRequest } from '../../lib/models/inference/request.js'
import { inferResponseJson } from '../../lib/models/inference/response.js'
import type { Prediction, Predictor } from '../../lib/models/runtime.js'
import { createRouter } from '../../lib/core/router.js'
import { createServer } from '../../lib/server/server.js'
import { createLineWriter } from '../../lib/telemetry/line-writer.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { createMetricsRegistry } from '../../lib/telemetry/metrics/registry.js'
import { createTracing, type ServerTracing } from '../../lib/telemetry/tracer.js'
import { VERSION } from '../../lib/config/version.js'

const [variant = 'bare', port = '0'] = process.argv.slice(2)
// A normal exit on SIGTERM, so `node --cpu-prof` writes its profile (the CLI exits so on its own).
process.once('SIGTERM', () => process.exit(0))
const config = readConfig({ ...process.env, PORT: port })
const info = { name: config.name, version: VERSION, environment: config.environment }
const endpoints = [
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/metrics' },
]

/**
 * The POST ladder, each rung the one before plus one piece of a batch-1 prediction, on svc's server
 * and router without layers (`post-logging` and `post-both` add them to the last rung):
 *   post-body       the body read by the server (route `body: 'json'`), ctx.jsonNow(), a fixed answer
 *   post-validate   + readPredictRequest
 *   post-predict    + encodeInputs and the kernel's predict (the shipped iris)
 *   post-response   + the OIP response text instead of the fixed answer
 */
const POST_LADDER = ['post-body', 'post-validate', 'post-predict', 'post-response'] as const

const postHandler = (rung: number): Handler => {
  const { model, payload } = kernelRuntime.read([readFileSync(fileURLToPath(new URL('../../../lib/models/artifacts/iris/1/model.json', import.meta.url)))], {
    name: 'iris',
    version: '1',
  })
  // The kernel predicts synchronously: its predictor is never a promise.
  const predictor = kernelRuntime.load(model, payload) as Predictor
  const fixed: Reply = Object.freeze({ kind: 'json', status: 200, json: JSON.stringify({ ok: true, pad: 'x'.repeat(PREDICTION_BYTES - 20) }) })
  const options = { maxBatch: config.models.maxBatch }
  return (ctx) => {
    const body = ctx.jsonNow()
    if (rung === 0) return fixed
    const request = readPredictRequest(body, options)
    if (rung === 1) return fixed
    const prediction = predictor.predict(encodeInputs(request, model), request.rows) as Prediction
    if (rung === 2) return fixed
    return { kind: 'json', status: 200, json: inferResponseJson(model, prediction, request.rows, request.id ?? ctx.requestId) }
  }
}

const BARE_HEADERS: Readonly<Record<string, number>> = { 'bare-no-date': 0, bare: 0, 'bare-id': 1, 'bare-headers': 2 }

const spin = (ns: bigint): void => {
  const end = process.hrtime.bigint() + ns
  while (process.hrtime.bigint() < end);
}

/** A batch-1 iris answer's size, so the bare POST writes what the prediction writes. */
const PREDICTION_BYTES = 296

if (variant === 'bare-get') {
  const body = '{"ok":true}'
  createHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    res.end(body)
  }).listen(config.port, config.host)
} else if (variant === 'bare-post' || variant.startsWith('bare-post-spin-')) {
  const body = JSON.stringify({ ok: true, pad: 'x'.repeat(PREDICTION_BYTES - 20) })
  // The calibration, bare-post-spin-<µs>: the bare POST plus that much pure CPU per request, to show
  // what an added microsecond costs per request at saturation (test/bench/README.md).
  const spinNs = BigInt(Number(variant.slice('bare-post-spin-'.length) || '0') * 1000)
  createHttpServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      // Parsed and dropped, as an endpoint that ignored its input would; the answer never varies.
      try {
        JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        res.writeHead(400).end()
        return
      }
      if (spinNs !== 0n) spin(spinNs)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
      res.end(body)
    })
  }).listen(config.port, config.host)
} else if (variant in BARE_HEADERS) {
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
  const rung = (POST_LADDER as readonly string[]).indexOf(variant.replace(/^post-(logging|both)$/, 'post-response'))
  if (rung !== -1) routes.push({ method: 'POST', path: '/api/v1/predict', body: 'json', handler: postHandler(rung) })
  if (variant === 'post-logging' || variant === 'post-both') layers.push(logging(logger))
  if (variant === 'post-both') layers.push(metrics(registry.http))
  void createServer({ config, router: createRouter(routes, layers), logger }).listen()
}
