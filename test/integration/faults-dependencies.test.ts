// Faults: PostgreSQL and Redis going away and coming back while the probes are polled, as a load
// balancer and an orchestrator poll them. Real servers (Debian's packages), really stopped and run
// again on the same port; the service is never touched: /ready follows each dependency down and
// back up by itself, and /health stays 200 throughout (lib/README.md §8: a restart cannot fix a database).
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { restartablePostgres, restartableRedis, type Restartable } from '../fixtures/restartable.js'

type Check = { status: string; latency_ms?: number; error?: string }
type Body = { status: string; checks: Record<string, Check> }
type Probe = Readonly<{ path: string; status: number; ms: number; body: Body }> | Readonly<{ path: string; failure: string }>

const TIMEOUT_MS = 300
/** Every probe answers within its check's bound plus this much (scheduling, a busy test machine). */
const SLACK_MS = 700
const PROBE_ENV = { SVC_HEALTH_TIMEOUT_MS: String(TIMEOUT_MS), SVC_HEALTH_CACHE_MS: '0' }

/** Polls /health and /ready back to back, every `intervalMs`, and keeps every answer. */
const startProber = (base: string, intervalMs = 20) => {
  const seen: Probe[] = []
  let isRunning = true
  const loop = (async () => {
    while (isRunning) {
      for (const path of ['/health', '/ready']) {
        const started = performance.now()
        try {
          const res = await fetch(base + path)
          seen.push({ path, status: res.status, ms: performance.now() - started, body: (await res.json()) as Body })
        } catch (error: unknown) {
          seen.push({ path, failure: String(error) })
        }
      }
      await sleep(intervalMs)
    }
  })()
  /** Resolves with the first /ready answer from now on that `isWanted`; fails the wait after `timeoutMs`. */
  const next = async (isWanted: (status: number, check: Check | undefined) => boolean, component: string, timeoutMs = 10_000) => {
    const from = seen.length
    const deadline = performance.now() + timeoutMs
    for (;;) {
      const found = seen.slice(from).find((p) => p.path === '/ready' && 'status' in p && isWanted(p.status, p.body.checks[component]))
      if (found !== undefined && 'body' in found) return found
      if (performance.now() > deadline) throw new Error(`no such /ready answer within ${timeoutMs} ms; last: ${JSON.stringify(seen.at(-1))}`)
      await sleep(10)
    }
  }
  const stop = async (): Promise<void> => {
    isRunning = false
    await loop
  }
  return { seen, next, stop }
}

const isUp = (status: number, check: Check | undefined): boolean => status === 200 && check?.status === 'ok'
const isDown = (status: number, check: Check | undefined): boolean => status === 503 && check?.status === 'fail'

/** The /ready statuses in order, each run of equal ones collapsed to one. */
const transitions = (seen: readonly Probe[]): number[] =>
  seen.flatMap((p) => (p.path === '/ready' && 'status' in p ? [p.status] : [])).filter((status, i, all) => i === 0 || all[i - 1] !== status)

/** Every probe was answered, in time; /health always 200, /ready 200 or 503. */
const checkProbes = (t: Test, seen: readonly Probe[]): void => {
  t.same(
    seen.filter((p) => 'failure' in p),
    [],
    'every probe was answered',
  )
  const answered = seen.flatMap((p) => ('status' in p ? [p] : []))
  t.same(
    answered.filter((p) => p.path === '/health' && p.status !== 200),
    [],
    'liveness stayed 200 throughout',
  )
  t.same(
    answered.filter((p) => p.path === '/ready' && p.status !== 200 && p.status !== 503),
    [],
    'readiness only ever 200 or 503',
  )
  const slowest = Math.max(...answered.map((p) => p.ms))
  t.ok(slowest < TIMEOUT_MS + SLACK_MS, `the slowest of ${answered.length} probes took ${slowest.toFixed(0)} ms`)
}

const gauge = async (base: string, component: string): Promise<number | undefined> =>
  sample(await (await fetch(`${base}/metrics`)).text(), 'svc_health_check_status', { component, environment: 'dev' })

const CASES: ReadonlyArray<Readonly<{ name: string; component: string; start(t: Test): Promise<Restartable | undefined>; env(dep: Restartable): Env }>> = [
  {
    name: 'PostgreSQL',
    component: 'database',
    start: restartablePostgres,
    env: ({ target }) => ({ SVC_DB_HOST: target.host, SVC_DB_PORT: String(target.port) }),
  },
  {
    name: 'Redis',
    component: 'cache',
    start: restartableRedis,
    env: ({ target }) => ({ SVC_CACHE_HOST: target.host, SVC_CACHE_PORT: String(target.port) }),
  },
]

for (const { name, component, start, env } of CASES) {
  t.test(`${name} going away and coming back while probed: /ready follows it down and back up by itself, /health stays 200`, async (t) => {
    const dependency = await start(t)
    if (dependency === undefined) return
    const { base, lines } = await startApp(t, { ...env(dependency), ...PROBE_ENV })
    const prober = startProber(base)
    t.teardown(prober.stop)

    await prober.next(isUp, component)
    t.equal(await gauge(base, component), 1)

    await dependency.stop()
    const down = await prober.next(isDown, component)
    t.match(down.body, { status: 'degraded', checks: { [component]: { status: 'fail', error: 'connection refused' } } })
    const health = (await (await fetch(`${base}/health`)).json()) as Body
    t.match(health, { status: 'degraded', checks: { [component]: { status: 'fail' } } }, '/health reports the outage in its body')
    t.equal(await gauge(base, component), 0, 'the status gauge shows the outage')

    await dependency.start()
    const up = await prober.next(isUp, component)
    t.notOk('error' in (up.body.checks[component] ?? {}))
    // A second round of the same: nothing was left in a state that only works once.
    await dependency.stop()
    await prober.next(isDown, component)
    await dependency.start()
    await prober.next(isUp, component)
    await prober.stop()

    checkProbes(t, prober.seen)
    t.same(transitions(prober.seen), [200, 503, 200, 503, 200], 'ready, not ready, ready again, twice; no flapping')
    t.equal(await gauge(base, component), 1, 'the status gauge is back to 1')
    t.equal((await fetch(`${base}/`)).status, 200, 'and the service serves as before')
    t.same(
      lines().filter((l) => l.level === 'error' && l.event !== 'request_completed'),
      [],
      'no error logged but the failed probes themselves',
    )
  })
}

t.test('Redis frozen (its port accepts, nothing answers): /ready fails by timeout within the bound, and recovers when it thaws', async (t) => {
  const redis = await restartableRedis(t)
  if (redis === undefined) return
  t.teardown(() => redis.thaw())
  const { base } = await startApp(t, { SVC_CACHE_HOST: redis.target.host, SVC_CACHE_PORT: String(redis.target.port), ...PROBE_ENV })
  const prober = startProber(base)
  t.teardown(prober.stop)
  await prober.next(isUp, 'cache')

  redis.freeze()
  const down = await prober.next(isDown, 'cache')
  t.match(down.body.checks['cache'], { status: 'fail', error: `timeout after ${TIMEOUT_MS} ms` })
  // Probes keep arriving while every check waits out its bound: each still answers in time.
  await sleep(4 * TIMEOUT_MS)

  redis.thaw()
  await prober.next(isUp, 'cache')
  await prober.stop()
  checkProbes(t, prober.seen)
  t.same(transitions(prober.seen), [200, 503, 200])
  t.equal(await gauge(base, 'cache'), 1)
})
