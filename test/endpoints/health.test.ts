import t from 'tap'
import { getHealth, getReady, getStartup } from '../../lib/endpoints/health.js'
import type { Checks, HealthMonitor } from '../../lib/health/monitor.js'
import type { JsonReply } from '../../lib/core/pipeline.js'
import { createLifecycle, type ServerState } from '../../lib/core/lifecycle.js'
import { makeCtx } from '../fixtures/ctx.js'

const ok: Checks = {
  database: { status: 'ok', latency_ms: 1 },
  cache: { status: 'skipped' },
  external_api: { status: 'skipped' },
  models: { status: 'ok', latency_ms: 0 },
}
const failing: Checks = { ...ok, database: { status: 'fail', latency_ms: 500, error: 'timeout after 500 ms' } }
const monitorOf = (checks: Checks): HealthMonitor => ({ checks: () => Promise.resolve(checks) })

// [lifecycle state, checks, expected body status, /health, /ready, /startup]
const TABLE: ReadonlyArray<[ServerState, Checks, string, number, number, number]> = [
  ['starting', ok, 'starting', 200, 503, 503],
  ['ready', ok, 'ok', 200, 200, 200],
  ['ready', failing, 'degraded', 200, 503, 200],
  ['draining', ok, 'draining', 200, 503, 200],
  ['stopped', ok, 'draining', 200, 503, 200],
]

for (const [state, checks, bodyStatus, health, ready, startup] of TABLE) {
  t.test(`${state} with ${checks === ok ? 'passing' : 'failing'} checks: /health ${health}, /ready ${ready}, /startup ${startup}`, async (t) => {
    const lifecycle = createLifecycle()
    lifecycle.state = state
    const monitor = monitorOf(checks)
    for (const [endpoint, expected] of [
      [getHealth, health],
      [getReady, ready],
      [getStartup, startup],
    ] as const) {
      const reply = (await endpoint(monitor, lifecycle, '1.2.3')(makeCtx())) as JsonReply
      t.equal(reply.status, expected)
      t.same(reply.headers, { 'cache-control': 'no-store' })
      t.match(reply.body, { status: bodyStatus, checks, version: '1.2.3', uptime_s: Number })
    }
  })
}
