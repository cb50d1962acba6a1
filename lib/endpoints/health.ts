// The probes (lib/README.md §8–9): /health (liveness), /ready (readiness), /startup (start-up gate).
// One body for all three; they differ only in when they answer 503.
import { performance } from 'node:perf_hooks'
import { Type } from 'typebox'
import { CHECK_STATUSES, type Checks, type Component, type HealthMonitor } from '../health/monitor.js'
import { json, named, schemasOf, stringEnum, type BodyOf, type RouteDoc } from '../core/route-doc.js'
import type { Handler, Reply } from '../core/pipeline.js'
import type { Lifecycle } from '../core/lifecycle.js'

export const HEALTH_STATUSES = ['ok', 'degraded', 'starting', 'draining'] as const
export type HealthStatus = (typeof HEALTH_STATUSES)[number]

const COMPONENT_CHECK = named(
  'ComponentCheck',
  Type.Object(
    {
      status: stringEnum(CHECK_STATUSES),
      latency_ms: Type.Optional(Type.Number({ minimum: 0 })),
      error: Type.Optional(Type.String({ description: 'Why it failed, short: `timeout after 500 ms`, `connection refused`, `HTTP 503`…' })),
    },
    { description: 'One dependency check: `skipped` when its variable is unset. Results are reused for SVC_HEALTH_CACHE_MS.' },
  ),
)

// One property per component, each a ComponentCheck, in COMPONENTS' order; the type checks that none is missing.
const CHECKS: Readonly<Record<Component, typeof COMPONENT_CHECK.ref>> = {
  database: COMPONENT_CHECK.ref,
  cache: COMPONENT_CHECK.ref,
  external_api: COMPONENT_CHECK.ref,
  models: COMPONENT_CHECK.ref,
}

const HEALTH = named(
  'Health',
  Type.Object({
    status: stringEnum(HEALTH_STATUSES, {
      description: '`degraded`: a configured check failed; `starting`: initialisation not complete; `draining`: a graceful shutdown has begun',
    }),
    checks: Type.Object(CHECKS, { additionalProperties: false }),
    version: Type.String(),
    uptime_s: Type.Number({ minimum: 0, description: 'Seconds since the process started' }),
  }),
)

/** The body of the three probes. */
export type HealthBody = BodyOf<typeof HEALTH.schema>

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

const probeEndpoint =
  (probe: Probe, monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler =>
  async () => {
    const checks = await monitor.checks()
    const status = overallStatus(lifecycle, checks)
    const uptime = Math.round(performance.now() - lifecycle.startedAt) / 1000
    const body: HealthBody = { status, checks, version, uptime_s: uptime }
    const reply: Reply = { kind: 'json', status: statusCode(probe, status), headers: NO_STORE, body }
    return reply
  }

export const getHealth = (monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => probeEndpoint('health', monitor, lifecycle, version)
export const getReady = (monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => probeEndpoint('ready', monitor, lifecycle, version)
export const getStartup = (monitor: HealthMonitor, lifecycle: Lifecycle, version: string): Handler => probeEndpoint('startup', monitor, lifecycle, version)

const HEALTH_EXAMPLE = {
  status: 'degraded',
  checks: {
    database: { status: 'ok', latency_ms: 1.2 },
    cache: { status: 'fail', latency_ms: 500.4, error: 'timeout after 500 ms' },
    external_api: { status: 'skipped' },
    models: { status: 'ok', latency_ms: 0 },
  },
  version: '1.0.0',
  uptime_s: 12.3,
} satisfies HealthBody

const probeDoc = (operationId: string, summary: string, description: string, unavailable?: string): RouteDoc => ({
  operationId,
  summary,
  description: `${description} The body is the same for the three probes; \`Cache-Control: no-store\`.`,
  tags: ['probes'],
  responses: {
    '200': json(unavailable === undefined ? 'Always, while the process serves' : 'Ready', HEALTH.ref, { example: HEALTH_EXAMPLE }),
    ...(unavailable === undefined ? {} : { '503': json(unavailable, HEALTH.ref, { example: { ...HEALTH_EXAMPLE, status: 'starting' } }) }),
  },
  schemas: schemasOf([HEALTH, COMPONENT_CHECK]),
})

export const HEALTH_DOC: RouteDoc = probeDoc(
  'getHealth',
  'Liveness',
  'Stays 200 while the process can serve: a dependency outage shows in the body, never as a failed liveness probe, since a restart cannot fix a database.',
)
export const READY_DOC: RouteDoc = probeDoc(
  'getReady',
  'Readiness',
  'Whether to send traffic here: 503 while starting, while draining, while a configured check fails, or when no model can serve.',
  'Not ready: starting, draining, or a configured check failed',
)
export const STARTUP_DOC: RouteDoc = probeDoc('getStartup', 'Start-up gate', '503 until initialisation completes, then 200.', 'Still starting')
