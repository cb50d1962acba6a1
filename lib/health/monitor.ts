// Runs the configured dependency checks for the probes (lib/README.md §9): concurrently, each bounded by
// its own timeout, with results reused for a short window and concurrent probes sharing the one
// round in flight, so a probe storm never becomes a dependency storm.
//
// The checks: `database` sends PostgreSQL's SSLRequest and expects exactly `S` or `N`; `cache`
// sends Redis `PING` (after `AUTH` when a password is set) and expects `+PONG`; `external_api`
// sends a GET expecting 2xx, following no redirect and reading no body; `models` asks the registry
// and fails only when no model can serve. A TCP connect alone never counts as healthy. Each check's
// socket is destroyed on every path; error texts come from lib/core/net/ and never hold addresses
// or stacks. A component is `ok`, `fail` (with a short `error`) or `skipped` (its variable unset);
// the body also holds `version` and `uptime_s`. Probe request lines are logged at `debug`; the
// probes and /metrics are operational routes, never shed, and served only on the admin listener
// when there is one.
import { performance } from 'node:perf_hooks'
import { Gauge, Histogram, type Registry } from 'prom-client'
import type { HealthConfig } from '../config/config.js'
import { CHECK_STATUSES, type Check, type CheckResult, type CheckStatus } from './check.js'
import { httpCheck } from './http.js'
import { postgresCheck } from './postgres.js'
import { redisCheck } from './redis.js'

export const COMPONENTS = ['database', 'cache', 'external_api', 'models'] as const
export type Component = (typeof COMPONENTS)[number]
/** What a component's report may say: a check's own `ok` or `fail` (check.ts), or `skipped` when it is not configured. */
export { CHECK_STATUSES, type CheckStatus }
export type ComponentReport = CheckResult | Readonly<{ status: Exclude<CheckStatus, CheckResult['status']> }>
export type Checks = Readonly<Record<Component, ComponentReport>>

export type HealthMonitor = Readonly<{
  /** The latest round of results: fresh within the cache window, else a new round. */
  checks(): Promise<Checks>
}>

export type MonitorOptions = Readonly<{
  checks: Readonly<Partial<Record<Component, Check>>>
  cacheMs: number
  metrics?: Registry
  now?: () => number
}>

const SKIPPED: ComponentReport = Object.freeze({ status: 'skipped' })

/** The checks the configuration asks for; components left unset are skipped. */
export const configuredChecks = (health: HealthConfig): Partial<Record<Component, Check>> => {
  const checks: Partial<Record<Component, Check>> = {}
  if (health.database !== undefined) checks.database = postgresCheck(health.database, health.timeoutMs)
  if (health.cache !== undefined) {
    const { host, port, password } = health.cache
    checks.cache = redisCheck(password === undefined ? { host, port } : { host, port, password }, health.timeoutMs)
  }
  if (health.externalApi !== undefined) checks.external_api = httpCheck(health.externalApi, health.timeoutMs)
  return checks
}

export const createHealthMonitor = ({ checks, cacheMs, metrics, now = () => performance.now() }: MonitorOptions): HealthMonitor => {
  const configured = COMPONENTS.filter((c) => checks[c] !== undefined)
  const status = new Gauge({
    name: 'svc_health_check_status',
    help: 'Result of the last dependency check: 1 ok, 0 failed (absent when the check is not configured).',
    labelNames: ['component'],
    registers: metrics === undefined ? [] : [metrics],
  })
  const duration = new Histogram({
    name: 'svc_health_check_duration_seconds',
    help: 'Duration of dependency checks in seconds.',
    labelNames: ['component'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: metrics === undefined ? [] : [metrics],
  })

  // With nothing configured there is nothing to wait for: one constant answer.
  if (configured.length === 0) {
    const allSkipped: Checks = Object.freeze({ database: SKIPPED, cache: SKIPPED, external_api: SKIPPED, models: SKIPPED })
    return { checks: () => Promise.resolve(allSkipped) }
  }

  let latest: { checks: Checks; at: number } | undefined
  let running: Promise<Checks> | undefined

  const round = async (): Promise<Checks> => {
    // Checks never reject; should one ever, the next probe starts a new round rather than
    // inheriting a failed one forever.
    const results = await Promise.all(configured.map((c) => (checks[c] as Check)())).finally(() => (running = undefined))
    const report: Record<Component, ComponentReport> = { database: SKIPPED, cache: SKIPPED, external_api: SKIPPED, models: SKIPPED }
    configured.forEach((component, i) => {
      const result = results[i] as CheckResult
      report[component] = result
      status.set({ component }, result.status === 'ok' ? 1 : 0)
      duration.observe({ component }, result.latency_ms / 1000)
    })
    latest = { checks: Object.freeze(report), at: now() }
    return latest.checks
  }

  return {
    checks: () => {
      if (latest !== undefined && now() - latest.at < cacheMs) return Promise.resolve(latest.checks)
      return (running ??= round())
    },
  }
}
