// Wires the service once at start-up: telemetry, the route table with its pipelines, the server.
//
// What is absent costs nothing: with no exporter there is no tracing layer, with no token no auth
// layer, with neither shedding limit no shedding layer and no lag sampler. The constant replies
// built once and frozen: 404, 405, OPTIONS, GET / as JSON text, OIP liveness, 401s, shed answers,
// parameter errors.
import { hostname } from 'node:os'
import type { AddressInfo } from 'node:net'
import type { Config } from './config/config.js'
import { EXTERNAL_DATA_DOC, getExternalData } from './endpoints/external-data.js'
import { getHealth, getReady, getStartup, HEALTH_DOC, READY_DOC, STARTUP_DOC } from './endpoints/health.js'
import { createStreamLimit, getInsights, INSIGHTS_DOC } from './endpoints/insights.js'
import { getMetrics, METRICS_DOC } from './endpoints/metrics.js'
import { apiV1Routes } from './endpoints/api-v1.js'
import { v2Routes } from './endpoints/v2.js'
import { type BinCounters, createBinCounters } from './drift/bin-counters.js'
import { createDriftMonitor, type DriftMonitor } from './drift/monitor.js'
import { createDriftScheduler, type DriftScheduler } from './drift/scheduler.js'
import { createModelMetrics, type ModelMetrics } from './serving/metrics.js'
import { modelsCheck } from './health/models.js'
import { configuredChecks, createHealthMonitor } from './health/monitor.js'
import { createModelRegistry, type ModelRegistry } from './models/registry/registry.js'
import { servedRuntimes } from './models/registry/runtimes.js'
import { createStore } from './models/store/open.js'
import type { Store } from './models/store/store.js'
import type { Runtime } from './models/runtime.js'
import { createShadowCopies, type ShadowCopies } from './serving/shadow/copies.js'
import { createFeedback, type Feedback } from './serving/feedback/feedback.js'
import { createPayloadWriter, type PayloadWriter } from './serving/payload/writer.js'
import { createPayloadEvents } from './serving/payload/events.js'
import { createPayloadLog, type PayloadLog } from './serving/payload/log.js'
import { feedbackRoutes } from './endpoints/feedback.js'
import { createFigures } from './insights/figures.js'
import { getRoot, ROOT_DOC } from './endpoints/root.js'
import { logging } from './layers/logging.js'
import { bearerAuth } from './layers/auth.js'
import { metrics } from './layers/metrics.js'
import { tracing as tracingLayer } from './layers/tracing.js'
import { createShedding, type Shedding } from './layers/shedding.js'
import { OPENAPI_PATH, openApiRoute } from './openapi/endpoint.js'
import { pageRoutes } from './pages/routes.js'
import { createRates } from './rates/rates.js'
import { createUpstreamMetrics } from './rates/upstream-metrics.js'
import { createLifecycle, type Lifecycle } from './core/lifecycle.js'
import type { RouteDef } from './core/pipeline.js'
import { createRouter } from './core/router.js'
import { createServer, type SvcServer } from './server/server.js'
import type { Logger } from './telemetry/logger.js'
import { createMetricsRegistry, type MetricsRegistry } from './telemetry/metrics/registry.js'
import { createTracing, type Tracing } from './telemetry/tracer.js'
import { VERSION } from './config/version.js'

export type AppOptions = Readonly<{
  config: Config
  logger: Logger
  /** Routes added to the built-in ones (tests use this for endpoints that fail on purpose). */
  routes?: readonly RouteDef[]
  /** Where ENABLE_CONSOLE_TRACES prints spans: the writer behind the logger's stdout. */
  writeConsole: (chunk: string) => void
  /** Log lines lost because stdout or stderr went away (the line writers' count): svc_log_lines_dropped_total. */
  droppedLogLines?: (() => number) | undefined
  /** The model runtimes, in the order they are tried; the served ones unless a test brings its own (one that fails on purpose). */
  runtimes?: readonly Runtime[]
}>

export type App = Readonly<{
  server: SvcServer
  /** The admin listener (SVC_ADMIN_PORT) with the probes and /metrics; undefined when not configured. */
  admin: SvcServer | undefined
  metrics: MetricsRegistry
  lifecycle: Lifecycle
  tracing: Tracing
  /** Load before listening (lib/README.md §8: models, then listen); `start` the hot reload after. */
  models: ModelRegistry
  /** Drift monitoring, undefined when SVC_DRIFT_ENABLED=false; `start` its schedule after listening. */
  drift: Readonly<{ monitor: DriftMonitor; scheduler: DriftScheduler }> | undefined
  /** Load shedding; `stop` ends its event-loop sampler (shutdown). */
  shedding: Shedding
  /** The shadow copies waiting or running (lib/serving/shadow/). */
  shadows: ShadowCopies
  /** The payload log's writer (lib/serving/payload/), undefined when SVC_PAYLOAD_LOG is unset; `stop` flushes it (shutdown). */
  payloadLog: PayloadWriter | undefined
}>

export const createApp = ({ config, logger, routes = [], writeConsole, droppedLogLines, runtimes }: AppOptions): App => {
  const metricsRegistry = createMetricsRegistry({ environment: config.environment, version: VERSION, droppedLogLines })
  const service = { name: config.name, version: VERSION, environment: config.environment }
  const tracing = createTracing({ config: config.tracing, service, logger, metrics: metricsRegistry.prom, writeConsole })
  const lifecycle = createLifecycle()
  const shedding = createShedding({ maxInFlight: config.maxInFlight, maxEventLoopDelayMs: config.maxEventLoopDelayMs, metrics: metricsRegistry.prom })
  const source = listenerSource()
  const modelRuntimes = runtimes ?? serviceRuntimes(config, metricsRegistry, logger, lifecycle)
  const { models, drift, shadows, predictions, feedback, payload, payloadLog } = createModels(
    config,
    logger,
    metricsRegistry,
    shedding,
    modelRuntimes,
    source.read,
  )
  const checks = { ...configuredChecks(config.health), models: modelsCheck(models) }
  const monitor = createHealthMonitor({ checks, cacheMs: config.health.cacheMs, metrics: metricsRegistry.prom })
  const rates = createRates({ config: config.rates, metrics: createUpstreamMetrics(metricsRegistry.prom, config.rates.providers), logger })
  const insights = getInsights({
    figures: createFigures({ metrics: metricsRegistry }),
    limit: createStreamLimit(config.maxStreams),
    closing: lifecycle.closing,
  })
  const probe = { requestLogLevel: 'debug', isOperational: true } as const
  const serving = {
    models,
    metrics: predictions,
    maxBatch: config.models.maxBatch,
    drift: drift?.monitor,
    shadows,
    routingHeader: config.models.routingHeader,
    feedback,
    payload,
  }
  const table: RouteDef[] = [
    {
      method: 'GET',
      path: '/metrics',
      handler: getMetrics(metricsRegistry),
      isExcludedFromMetrics: true,
      isOperational: true,
      auth: 'metrics',
      doc: METRICS_DOC,
    },
    { method: 'GET', path: '/health', handler: getHealth(monitor, lifecycle, VERSION), ...probe, doc: HEALTH_DOC },
    { method: 'GET', path: '/ready', handler: getReady(monitor, lifecycle, VERSION), ...probe, doc: READY_DOC },
    { method: 'GET', path: '/startup', handler: getStartup(monitor, lifecycle, VERSION), ...probe, doc: STARTUP_DOC },
    { method: 'GET', path: '/api/external-data', handler: getExternalData(rates), doc: EXTERNAL_DATA_DOC },
    { method: 'GET', path: '/api/insights', handler: insights, doc: INSIGHTS_DOC },
    ...apiV1Routes(serving),
    ...feedbackRoutes(feedback, config.models.maxBatch),
    ...v2Routes(serving),
    ...pageRoutes(),
  ]
  // With an admin listener, the operational routes (probes, /metrics) live there and only there;
  // the public listener, its index and its API description no longer have them.
  const isAdminSplit = config.admin !== undefined
  const operational = isAdminSplit ? table.filter((route) => route.isOperational === true) : []
  const served = isAdminSplit ? table.filter((route) => route.isOperational !== true) : table
  const links = (defs: readonly RouteDef[]): Array<{ method: string; path: string }> => defs.map(({ method, path }) => ({ method, path }))
  const endpoints = [{ method: 'GET', path: '/' }, ...links(served), { method: 'GET', path: OPENAPI_PATH }, ...links(routes)]
  served.push({
    method: 'GET',
    path: '/',
    handler: getRoot({ name: config.name, version: VERSION, environment: config.environment }, endpoints),
    doc: ROOT_DOC,
  })
  // Built once from every route of the service, itself included (start-up fails on an undescribed
  // one); the extra `routes` tests bring are not part of the service and are left out. Tokens and
  // shedding are read from what the layers are given, so the description says what they answer:
  // 401 where a token is needed, 503 OVERLOADED where a request may be shed.
  const security = { api: config.auth.apiTokens.length > 0, metrics: config.auth.metricsToken !== undefined }
  const isShedding = shedding.layer !== undefined
  served.push(openApiRoute({ routes: served, info: { title: config.name, version: VERSION }, security, isShedding }), ...routes)

  const { server, admin } = listenersOf({ config, logger, lifecycle, metricsRegistry, tracing, shedding }, served, operational)
  source.follow(server)
  return { server, admin, metrics: metricsRegistry, lifecycle, tracing, models, drift, shedding, shadows, payloadLog }
}

type ListenerParts = Readonly<{
  config: Config
  logger: Logger
  lifecycle: Lifecycle
  metricsRegistry: MetricsRegistry
  tracing: Tracing
  shedding: Shedding
}>

/** The public listener and, with SVC_ADMIN_PORT, the admin one, each routing through the layers. */
const listenersOf = (
  { config, logger, lifecycle, metricsRegistry, tracing, shedding }: ListenerParts,
  served: readonly RouteDef[],
  operational: readonly RouteDef[],
): Readonly<{ server: SvcServer; admin: SvcServer | undefined }> => {
  // Outermost first, as lib/README.md §11 orders them (and says why); tracing only when an exporter is configured. Refusals
  // (a missing token, shed load) happen inside, so they are logged, counted and traced like any answer.
  const traced = tracing.server === undefined ? undefined : tracingLayer(tracing.server.tracer, tracing.server.decideRoot)
  const optional = [traced, bearerAuth(config.auth), shedding.layer].filter((layer) => layer !== undefined)
  const layers = [logging(logger), metrics(metricsRegistry.http), ...optional]
  const server = createServer({ config, router: createRouter(served, layers), logger, lifecycle, metrics: metricsRegistry.http })
  const admin =
    config.admin === undefined
      ? undefined
      : createServer({ config, router: createRouter(operational, layers), logger, lifecycle, metrics: metricsRegistry.http, address: config.admin })
  return { server, admin }
}

/** The payload log's writer when SVC_PAYLOAD_LOG is set; unset, nothing is built. It drops events first when the service nears shedding. */
const payloadWriterOf = (config: Config, logger: Logger, metricsRegistry: MetricsRegistry, shedding: Shedding): PayloadWriter | undefined => {
  const log = config.models.payloadLog
  if (log === undefined) return undefined
  const { target, queue: capacity, queueBytes: capacityBytes, flushMs, maxBytes, files } = log
  return createPayloadWriter({
    target,
    capacity,
    capacityBytes,
    flushMs,
    maxBytes,
    files,
    metrics: metricsRegistry.prom,
    logger,
    isUnderPressure: shedding.isUnderPressure,
  })
}

/**
 * A payload log event's `source`, `svc://<hostname>:<port>`: taken when the listener is bound, since a
 * shutdown's flush builds events after it has closed.
 */
const listenerSource = (): Readonly<{ read: () => string; follow: (server: SvcServer) => void }> => {
  let text = ''
  const bound = (server: SvcServer): void => {
    text = `svc://${hostname()}:${(server.http.address() as AddressInfo).port}`
  }
  return { read: () => text, follow: (server) => void server.http.once('listening', () => bound(server)) }
}

/** What the endpoints log through, when there is a writer: events, sampling (each model's manifest percent, else the configured one). */
const payloadLogOf = (config: Config, writer: PayloadWriter | undefined, source: () => string): PayloadLog | undefined => {
  const log = config.models.payloadLog
  if (writer === undefined || log === undefined) return undefined
  const events = createPayloadEvents({ source, exclude: log.exclude })
  return createPayloadLog({ writer, events, percent: log.percent })
}

/** The runtimes a service serves with: its ONNX worker pool answers what it holds within the drain. */
const serviceRuntimes = (config: Config, metricsRegistry: MetricsRegistry, logger: Logger, lifecycle: Lifecycle): readonly Runtime[] =>
  servedRuntimes({
    onnxThreads: config.models.onnxThreads,
    pool: { settings: config.models.onnxPool, metrics: metricsRegistry.prom, logger, closing: lifecycle.closing, drainTimeoutMs: config.drainTimeoutMs },
  })

/**
 * The model registry, drift monitoring, shadow copies, prediction series, feedback and the payload
 * log, wired together: each publish makes the series of the bin counters, the shadows and the
 * feedback of the builds it serves, before any request reaches them, and drops the per-version
 * series of the versions it no longer serves (feedback's once their tokens expire). An accepted
 * label goes to the payload log.
 */
const createModels = (
  config: Config,
  logger: Logger,
  metricsRegistry: MetricsRegistry,
  shedding: Shedding,
  runtimes: readonly Runtime[],
  source: () => string,
): Readonly<{
  models: ModelRegistry
  drift: App['drift']
  shadows: ShadowCopies
  predictions: ModelMetrics
  feedback: Feedback | undefined
  payload: PayloadLog | undefined
  payloadLog: PayloadWriter | undefined
}> => {
  const predictions = createModelMetrics(metricsRegistry.prom)
  const payloadLog = payloadWriterOf(config, logger, metricsRegistry, shedding)
  const payload = payloadLogOf(config, payloadLog, source)
  const feedback =
    config.models.feedback === undefined
      ? undefined
      : createFeedback({ config: config.models.feedback, metrics: metricsRegistry.prom, onLabel: payload?.label })
  const counters = config.drift.isEnabled ? createBinCounters({ metrics: metricsRegistry.prom, logger, hasBinSeries: config.drift.hasBinSeries }) : undefined
  const store: Store = createStore(config.models.store, {
    maxBytes: config.models.maxBytes,
    s3: config.models.s3,
    // Called only after the store is built, from a pass.
    onCredentialsStale: (error) => logger.warning('model_store_credentials_stale', { store: store.description, detail: error.message }),
  })
  const models = createModelRegistry({
    store,
    logger,
    metrics: metricsRegistry.prom,
    reloadIntervalS: config.models.reloadIntervalS,
    runtimes,
    // Called once a pass has published, so `shadows` exists by then.
    onPublish: (builds) => {
      predictions.track(builds)
      counters?.track(builds)
      feedback?.publish(builds)
      shadows.track(models.entries().flatMap((entry) => models.shadowOf(entry.name)?.served ?? []))
    },
  })
  const drift = counters === undefined ? undefined : createDrift(config, models, metricsRegistry, logger, counters)
  const { queue: capacity, timeoutMs, tolerance } = config.models.shadow
  const shadows = createShadowCopies({
    metrics: metricsRegistry.prom,
    logger,
    capacity,
    timeoutMs,
    tolerance,
    isUnderPressure: shedding.isUnderPressure,
    onRows: drift?.monitor.count,
  })
  return { models, drift, shadows, predictions, feedback, payload, payloadLog }
}

const createDrift = (config: Config, models: ModelRegistry, metricsRegistry: MetricsRegistry, logger: Logger, counters: BinCounters): App['drift'] => {
  const { window, minSamples, thresholds, schedule } = config.drift
  const monitor = createDriftMonitor({ models, settings: { window, minSamples, thresholds }, metrics: metricsRegistry.prom, logger, counters })
  return { monitor, scheduler: createDriftScheduler({ expression: schedule, run: monitor.check, logger }) }
}
