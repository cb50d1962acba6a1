// Wires the service once at start-up: telemetry, the route table with its pipelines, the server.
import type { Config } from './config.js'
import { getHealth, getReady, getStartup } from './endpoints/health.js'
import { getMetrics } from './endpoints/metrics.js'
import { configuredChecks, createHealthMonitor } from './health/monitor.js'
import { getRoot } from './endpoints/root.js'
import { logging } from './layers/logging.js'
import { metrics } from './layers/metrics.js'
import { createRouter, type RouteDef } from './router.js'
import { createLifecycle, createServer, type Lifecycle, type SvcServer } from './server.js'
import type { Logger } from './telemetry/logger.js'
import { createMetricsRegistry, type MetricsRegistry } from './telemetry/registry.js'
import { VERSION } from './version.js'

export type AppOptions = Readonly<{
  config: Config
  logger: Logger
  /** Routes added to the built-in ones (tests use this for endpoints that fail on purpose). */
  routes?: readonly RouteDef[]
}>

export type App = Readonly<{ server: SvcServer; metrics: MetricsRegistry; lifecycle: Lifecycle }>

export const createApp = ({ config, logger, routes = [] }: AppOptions): App => {
  const registry = createMetricsRegistry({ environment: config.environment, version: VERSION })
  const lifecycle = createLifecycle()
  const monitor = createHealthMonitor({ checks: configuredChecks(config.health), cacheMs: config.health.cacheMs, registry: registry.registry })
  const probe = { requestLogLevel: 'debug' } as const
  const table: RouteDef[] = [
    { method: 'GET', path: '/metrics', handler: getMetrics(registry), isExcludedFromMetrics: true },
    { method: 'GET', path: '/health', handler: getHealth(monitor, lifecycle, VERSION), ...probe },
    { method: 'GET', path: '/ready', handler: getReady(monitor, lifecycle, VERSION), ...probe },
    { method: 'GET', path: '/startup', handler: getStartup(monitor, lifecycle, VERSION), ...probe },
    ...routes,
  ]
  const endpoints = [{ method: 'GET', path: '/' }, ...table.map(({ method, path }) => ({ method, path }))]
  table.push({ method: 'GET', path: '/', handler: getRoot({ name: config.name, version: VERSION, environment: config.environment }, endpoints) })

  // Outermost first, as DESIGN §1 orders them.
  const router = createRouter(table, [logging(logger), metrics(registry.http)])
  return { server: createServer({ config, router, logger, lifecycle }), metrics: registry, lifecycle }
}
