// ops/haproxy/haproxy.cfg in front of two real instances of the CLI, under a steady load of GET
// requests (autocannon). (a) A rolling restart, as ops/README.md describes it: SIGTERM to one
// instance, its exit, its restart, HAProxy taking it back, then the same for the other; no request
// fails and no socket errs. (b) SIGKILL to one instance: HAProxy retries what it had sent there or
// could not send, on the other one, and no GET fails.
//
// HAProxy runs the shipped configuration with only addresses changed (test/fixtures/haproxy.ts):
// checks every 1 s, 2 failures to take an instance out, 2 successes to take it back. The
// instances get production's SVC_SHUTDOWN_DELAY_MS (5 s), which the configuration's rule must fit.
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { readConfig } from '../../lib/config/config.js'
import { type RunningHaproxy, readShipped, startHaproxy, timings, waitForStatus } from '../fixtures/haproxy.js'
import { type Child, spawnTs } from '../fixtures/spawn.js'
import { closedPort as freePort } from '../fixtures/tcp.js'
import { findTool } from '../fixtures/tools.js'

/** Load: a bounded rate over keep-alive connections, and a hard cap on the requests it may send. */
const RATE = 200
const CONNECTIONS = 8
const MAX_LOAD_S = 90
const PATHS = ['/', '/api/v1/models', '/api/v1/models/iris'] as const

// autocannon ships no types; this is the part of its API the test uses.
type AutocannonResult = Readonly<{
  requests: Readonly<{ total: number }>
  non2xx: number
  errors: number
  timeouts: number
  resets: number
  statusCodeStats: Readonly<Record<string, { count: number }>>
}>
type AutocannonInstance = Readonly<{ stop(): void; on(event: string, listener: (...args: never[]) => void): void }>
type AutocannonOptions = Readonly<{
  url: string
  connections: number
  overallRate: number
  duration: number
  maxOverallRequests: number
  timeout: number
  requests: ReadonlyArray<Readonly<{ method: string; path: string }>>
}>
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: AutocannonOptions,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance

type Load = Readonly<{ stop(): Promise<AutocannonResult>; errors: readonly string[]; statuses: readonly number[] }>

/** Starts the load; `stop` ends it and resolves with autocannon's result. */
const startLoad = (base: string): Load => {
  const errors: string[] = []
  const statuses: number[] = []
  let resolveDone: (result: AutocannonResult) => void = () => {}
  let rejectDone: (error: Error) => void = () => {}
  const done = new Promise<AutocannonResult>((resolve, reject) => {
    resolveDone = resolve
    rejectDone = reject
  })
  const instance = autocannon(
    {
      url: base,
      connections: CONNECTIONS,
      overallRate: RATE,
      duration: MAX_LOAD_S,
      maxOverallRequests: RATE * MAX_LOAD_S,
      timeout: 10,
      requests: PATHS.map((path) => ({ method: 'GET', path })),
    },
    (error, result) => (error === null ? resolveDone(result) : rejectDone(error)),
  )
  instance.on('reqError', (error: Error) => void errors.push(error.message))
  instance.on('response', (_client: unknown, status: number) => void (status < 200 || status > 299 ? statuses.push(status) : undefined))
  return {
    stop: () => {
      instance.stop()
      return done
    },
    errors,
    statuses,
  }
}

type Instance = { name: string; port: number; child: Child }

/** Every process started, for the teardown to kill whatever is left. */
const spawned: Child[] = []
t.teardown(() => {
  for (const child of spawned) if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL')
})

const launch = async (port: number, shutdownDelayMs: number): Promise<Child> => {
  const child = spawnTs('bin/svc.ts', ['--host', '127.0.0.1', '--port', String(port)], {
    SVC_SHUTDOWN_DELAY_MS: String(shutdownDelayMs),
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'WARNING',
  })
  spawned.push(child)
  await waitForReady(port, child)
  return child
}

/** Resolves once the instance answers /ready 200 (60 s at most: start-up under coverage is slow). */
const waitForReady = async (port: number, child: Child): Promise<void> => {
  const deadline = performance.now() + 60_000
  for (;;) {
    if (child.proc.exitCode !== null) throw new Error(`instance on ${port} exited ${child.proc.exitCode}: ${child.stderr()}`)
    const ok = await fetch(`http://127.0.0.1:${port}/ready`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (ok) return
    if (performance.now() > deadline) throw new Error(`instance on ${port} not ready within 60 s: ${child.stderr()}`)
    await sleep(100)
  }
}

/** The load's outcome, for an assertion message: totals, and the first few failures. */
const describe = (result: AutocannonResult, load: Load): string =>
  `${result.requests.total} requests, ${result.non2xx} non-2xx ${JSON.stringify(load.statuses.slice(0, 5))}, ` +
  `${result.errors} socket errors (${result.timeouts} timeouts) ${JSON.stringify(load.errors.slice(0, 5))}`

/**
 * HAProxy's log lines (option httplog) for answers other than 2xx, or ended otherwise than
 * normally (termination state other than "----"): the first few, to explain a failure.
 */
const troubles = (haproxy: RunningHaproxy): string[] =>
  haproxy
    .log()
    .split('\n')
    .filter((line) => {
      // client [date] frontend backend/server Tq/Tw/Tc/Tr/Ta status bytes cookies(2) state ...
      const fields = line.split(' ')
      if (!/^(?:-?\d+\/){4}-?\d+$/.test(fields[4] ?? '')) return false
      return !/^2\d\d$/.test(fields[5] ?? '') || fields[9] !== '----'
    })
    .slice(0, 10)

t.test('HAProxy with ops/haproxy/haproxy.cfg in front of two instances under load', async (t) => {
  const binary = await findTool(t, 'haproxy', 'haproxy')
  if (binary === undefined) return
  const shipped = await readShipped()
  const { inter, fall, timeout } = timings(shipped)
  const shutdownDelayMs = readConfig({ SVC_ENVIRONMENT: 'prod' }).shutdownDelayMs
  const outWithinMs = fall * (inter + (timeout['check'] ?? inter))
  t.ok(outWithinMs < shutdownDelayMs, `checks take an instance out within ${outWithinMs} ms, inside the ${shutdownDelayMs} ms shutdown delay`)

  const instances: Instance[] = []
  const ports = [await freePort(), await freePort()]
  const children = await Promise.all(ports.map((port) => launch(port, shutdownDelayMs)))
  for (const [i, name] of ['svc-a', 'svc-b'].entries()) instances.push({ name, port: ports[i] as number, child: children[i] as Child })
  const haproxy = await startHaproxy(t, binary, instances)
  for (const { name } of instances) await waitForStatus(haproxy, name, 'UP')
  t.teardown(() => {
    const lines = troubles(haproxy)
    if (lines.length > 0) t.comment(`HAProxy logged:\n${lines.join('\n')}`)
  })

  await t.test('(a) rolling restart with SIGTERM: no request fails, no socket error', async (t) => {
    const before = await haproxy.backend()
    const load = startLoad(haproxy.base)
    t.teardown(() =>
      load.stop().then(
        () => {},
        () => {},
      ),
    )
    await sleep(1000)
    for (const instance of instances) {
      const signalAt = performance.now()
      instance.child.proc.kill('SIGTERM')
      const downAt = await waitForStatus(haproxy, instance.name, 'DOWN', shutdownDelayMs * 2)
      const exit = await instance.child.exited
      const exitAt = performance.now()
      t.same(exit, { code: 0, signal: null }, `${instance.name} exits 0`)
      t.ok(
        downAt - signalAt < shutdownDelayMs,
        `${instance.name} out of rotation ${(downAt - signalAt).toFixed(0)} ms after SIGTERM, inside the ${shutdownDelayMs} ms delay (exit after ${(exitAt - signalAt).toFixed(0)} ms)`,
      )
      instance.child = await launch(instance.port, shutdownDelayMs)
      // What a rolling restart must do before it stops the next instance: wait until the
      // balancer has taken this one back.
      await waitForStatus(haproxy, instance.name, 'UP')
    }
    await sleep(1000)
    const result = await load.stop()
    const after = await haproxy.backend()
    t.comment(describe(result, load))
    t.ok(result.requests.total > RATE * 5, `the load ran throughout (${result.requests.total} requests)`)
    t.equal(result.non2xx, 0, `every answer is a 2xx: ${describe(result, load)}`)
    t.equal(result.errors, 0, `no socket error, no timeout: ${describe(result, load)}`)
    // HAProxy would have retried a GET sent to a closed listener, so the load alone cannot show
    // that a POST would have come through too: no attempt failed at all, so none needed a retry.
    t.same(
      { retries: Number(after['wretr']) - Number(before['wretr']), redispatches: Number(after['wredis']) - Number(before['wredis']) },
      { retries: 0, redispatches: 0 },
      'no request needed a retry: the graceful path alone served them all',
    )
  })

  await t.test('(b) SIGKILL to one instance: no GET fails, HAProxy retries on the other', async (t) => {
    const before = await haproxy.backend()
    const load = startLoad(haproxy.base)
    t.teardown(() =>
      load.stop().then(
        () => {},
        () => {},
      ),
    )
    await sleep(1000)
    const victim = instances[0] as Instance
    const killedAt = performance.now()
    victim.child.proc.kill('SIGKILL')
    await victim.child.exited
    const downAt = await waitForStatus(haproxy, victim.name, 'DOWN')
    await sleep(1000)
    const result = await load.stop()
    const after = await haproxy.backend()
    const retries = Number(after['wretr']) - Number(before['wretr'])
    const redispatches = Number(after['wredis']) - Number(before['wredis'])
    t.comment(`${describe(result, load)}; out of rotation ${(downAt - killedAt).toFixed(0)} ms after SIGKILL; ${retries} retries, ${redispatches} redispatches`)
    t.ok(result.requests.total > RATE, `the load ran throughout (${result.requests.total} requests)`)
    t.equal(result.non2xx, 0, `every answer is a 2xx: ${describe(result, load)}`)
    t.equal(result.errors, 0, `no socket error, no timeout: ${describe(result, load)}`)
    t.ok(retries + redispatches > 0, 'requests that went to the dead instance were retried on the other')
  })
})
