import { Registry } from 'prom-client'
import t from 'tap'
import type { Check, CheckResult } from '../../lib/health/check.js'
import { configuredChecks, createHealthMonitor } from '../../lib/health/monitor.js'
import { readConfig } from '../../lib/config/config.js'

const counting = (result: CheckResult): { check: Check; calls: () => number; release: () => void } => {
  let calls = 0
  let release: () => void = () => {}
  const check: Check = () => {
    calls++
    return new Promise((resolve) => (release = () => resolve(result)))
  }
  return { check, calls: () => calls, release: () => release() }
}

t.test('nothing configured: every component skipped, no check runs', async (t) => {
  const monitor = createHealthMonitor({ checks: {}, cacheMs: 1000 })
  t.same(await monitor.checks(), {
    database: { status: 'skipped' },
    cache: { status: 'skipped' },
    external_api: { status: 'skipped' },
    models: { status: 'skipped' },
  })
})

t.test('concurrent callers share one round; results are reused until the window passes', async (t) => {
  let now = 0
  const db = counting({ status: 'ok', latency_ms: 2 })
  const monitor = createHealthMonitor({ checks: { database: db.check }, cacheMs: 1000, now: () => now })
  const a = monitor.checks()
  const b = monitor.checks()
  t.equal(db.calls(), 1)
  db.release()
  t.equal(await a, await b)
  t.match(await a, { database: { status: 'ok' }, cache: { status: 'skipped' } })
  now = 999
  await monitor.checks()
  t.equal(db.calls(), 1, 'within the window')
  now = 1000
  const c = monitor.checks()
  t.equal(db.calls(), 2, 'after the window')
  db.release()
  await c
})

t.test('a check that rejects does not wedge the monitor', async (t) => {
  let calls = 0
  const broken: Check = () => {
    calls++
    return Promise.reject(new Error('bug'))
  }
  const monitor = createHealthMonitor({ checks: { cache: broken }, cacheMs: 1000 })
  await t.rejects(monitor.checks(), { message: 'bug' })
  await t.rejects(monitor.checks(), { message: 'bug' })
  t.equal(calls, 2, 'each call after a failed round starts a new one')
})

t.test('results are published as gauges and histograms, only for configured components', async (t) => {
  const registry = new Registry()
  const monitor = createHealthMonitor({
    checks: {
      database: () => Promise.resolve({ status: 'ok', latency_ms: 3 }),
      external_api: () => Promise.resolve({ status: 'fail', latency_ms: 7, error: 'HTTP 500' }),
    },
    cacheMs: 0,
    metrics: registry,
  })
  await monitor.checks()
  const text = await registry.metrics()
  t.match(text, /^svc_health_check_status\{component="database"\} 1$/m)
  t.match(text, /^svc_health_check_status\{component="external_api"\} 0$/m)
  t.notMatch(text, /component="cache"/)
  t.match(text, /^svc_health_check_duration_seconds_sum\{component="external_api"\} 0\.007$/m)
})

t.test('the configuration decides which checks exist', async (t) => {
  t.same(Object.keys(configuredChecks(readConfig({}).health)), [])
  const all = readConfig({ SVC_DB_HOST: 'db', SVC_CACHE_HOST: 'cache', SVC_CACHE_PASSWORD: 'x', SVC_EXTERNAL_API_URL: 'https://api.example/health' }).health
  t.same(Object.keys(configuredChecks(all)), ['database', 'cache', 'external_api'])
  t.same(all.database, { host: 'db', port: 5432 })
  t.same(all.cache, { host: 'cache', port: 6379, password: 'x' })
  t.same(readConfig({ SVC_CACHE_HOST: 'cache', SVC_CACHE_PASSWORD: '' }).health.cache, { host: 'cache', port: 6379, password: undefined })
})
