// The probes (DESIGN §8–9): /health (liveness), /ready (readiness), /startup (start-up gate).
// One body for all three; they differ only in when they answer 503.
import { performance } from 'node:perf_hooks'
import type { Checks, HealthMonitor } from '../health/monitor.js'
import type { Handler, Reply } from '../pipeline.js'
import type { Lifecycle } from '../server.js'

export type HealthStatus = 'ok' | 'degraded' | 'starting' | 'draining'
export type HealthBody = Readonly<{ status: HealthStatus; checks: Checks; version: string; uptime_s: number }>

type Probe = 'health' | 'ready' | 'startup'

const NO_STORE = Object.freeze({ 'cache-control': 'no-store' })

export const overallStatus = (lifecycle: Lifecycle, checks: Checks): HealthStatus => {
  if (lifecycle.state === 'starting') return 'starting'
  if (lifecycle.state === 'draining' || lifecycle.state === 'stopped') return 'draining'
  return Object.values(checks).some((c) => c.status === 'fail') ? 'degraded' : 'ok'
}

/**
 * - liveness stays 200 while the process serves: a dependency outage shows in the body, never as a
 *   failed liveness probe, since a restart cannot fix a database;
 * - readiness is 200 only when started, not draining, and every configured check passes;
 * - the start-up gate is 503 until initialisation completes.
 */
const statusCode = (probe: Probe, status: HealthStatus): number => {
  if (probe === 'health') return 200
  if (probe === 'startup') return status === 'starting' ? 503 : 200
  return status === 'ok' ? 200 : 503
}

const probeEndpoint = (probe: Probe, monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => async () => {
  const checks = await monitor.checks()
  const status = overallStatus(lifecycle, checks)
  const uptime = Math.round(performance.now() - lifecycle.startedAt) / 1000
  const body: HealthBody = { status, checks, version, uptime_s: uptime }
  const reply: Reply = { status: statusCode(probe, status), headers: NO_STORE, body }
  return reply
}

export const getHealth = (monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => probeEndpoint('health', monitor, lifecycle, version)
export const getReady = (monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => probeEndpoint('ready', monitor, lifecycle, version)
export const getStartup = (monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => probeEndpoint('startup', monitor, lifecycle, version)
