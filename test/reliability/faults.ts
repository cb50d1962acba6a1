// Compact fault scenarios for `npm run reliability`, each against the real CLI: a dependency fails
// while requests keep coming, then recovers, and nothing is done to the service. A scenario is
// survived when every request got its expected answer in bounded time, the process lived through
// it, and the service was back to normal by itself afterwards. The full versions, with every
// assertion, are the tests in test/integration/faults-*.test.ts.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DEFAULT_STORE_ROOT } from '../../lib/config/model-store.js'
import { startReceiver, type Receiver } from '../fixtures/otlp-receiver.js'
import { fakeCoinbase, fakeCoingecko, type Behaviour } from '../fixtures/rate-upstreams.js'
import { restartablePostgres, restartableRedis } from '../fixtures/restartable.js'
import { closedPort } from '../fixtures/tcp.js'
import { SHOTS } from './load.js'
import type { Scope } from './scope.js'
import { logLines, startService, stopService, sumOf, type Launch, type Service } from './service.js'

export type FaultResult = Readonly<{
  name: string
  /** undefined: not run (a tool missing), with the reason in `detail`. */
  isSurvived: boolean | undefined
  requests: number
  detail: string
}>

type Answer = Readonly<{ status: number; ms: number; text: string }>

const get = async (base: string, path: string, init: RequestInit = {}): Promise<Answer> => {
  const started = performance.now()
  try {
    const res = await fetch(base + path, { ...init, signal: AbortSignal.timeout(10_000) })
    const text = await res.text()
    return { status: res.status, ms: performance.now() - started, text }
  } catch (error: unknown) {
    return { status: 0, ms: performance.now() - started, text: String(error) }
  }
}
const predict = (base: string): Promise<Answer> =>
  get(base, SHOTS.predict.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: SHOTS.predict.body })

const waitFor = async (isDone: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<boolean> => {
  const deadline = performance.now() + timeoutMs
  while (!(await isDone())) {
    if (performance.now() > deadline) return false
    await sleep(everyMs)
  }
  return true
}

const events = (service: Service, event: string): number => logLines(service.child).filter((l) => l['event'] === event).length
const isAlive = (service: Service): boolean => service.child.proc.exitCode === null && service.child.proc.signalCode === null

/** Runs a scenario with a CLI of its own; a scenario that throws is not survived. */
const run = async (
  name: string,
  launch: Launch,
  env: Readonly<Record<string, string>>,
  body: (service: Service, problems: string[]) => Promise<{ requests: number; detail: string }>,
): Promise<FaultResult> => {
  let service: Service | undefined
  const problems: string[] = []
  try {
    service = await startService(launch, env)
    const { requests, detail } = await body(service, problems)
    if (!isAlive(service)) problems.push(`the process exited (${service.child.stderr().slice(0, 200)})`)
    const exit = await stopService(service)
    if (exit.code !== 0) problems.push(`exit ${exit.code ?? exit.signal}`)
    return { name, isSurvived: problems.length === 0, requests, detail: problems.length === 0 ? detail : problems.join('; ') }
  } catch (error: unknown) {
    if (service !== undefined) await stopService(service)
    return { name, isSurvived: false, requests: 0, detail: [...problems, String(error)].join('; ') }
  }
}

/** `count` GET / in a row: the statuses that were not 200, and the slowest answer in ms. */
const burst = async (base: string, count: number): Promise<{ bad: number; slowestMs: number }> => {
  let bad = 0
  let slowestMs = 0
  for (let i = 0; i < count; i++) {
    const answer = await get(base, '/')
    if (answer.status !== 200) bad++
    slowestMs = Math.max(slowestMs, answer.ms)
  }
  return { bad, slowestMs }
}

/** The OTLP collector down, up, down again and up again on the port the service exports to. */
export const collectorOutages = async (launch: Launch): Promise<FaultResult> => {
  const port = await closedPort()
  return run('OTLP collector down, up, down, up', launch, { OTLP_ENDPOINT: `127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '20' }, async (service, problems) => {
    let requests = 0
    let receiver: Receiver | undefined
    try {
      for (const round of [1, 2]) {
        const down = await burst(service.base, 30)
        requests += 30
        if (down.bad > 0 || down.slowestMs > 500) problems.push(`collector down (round ${round}): ${down.bad} not 200, slowest ${down.slowestMs.toFixed(0)} ms`)
        receiver = await startReceiver(port)
        const current = receiver
        // gRPC reconnects after its backoff; requests keep coming meanwhile and never wait for it.
        const isBack = await waitFor(
          async () => {
            requests++
            if ((await get(service.base, '/')).status !== 200) problems.push('a request failed while the collector returned')
            return current.spans().length > 0
          },
          20_000,
          50,
        )
        if (!isBack) problems.push(`collector up (round ${round}): no span arrived within 20 s`)
        await receiver.close()
        receiver = undefined
      }
      const dropped = sumOf((await get(service.base, '/metrics')).text, 'svc_spans_dropped_total')
      return {
        requests,
        detail: `every request answered 200; spans flowed again after each return; ${dropped} spans dropped while it was away, ${events(service, 'trace_export_failed')} outage reports`,
      }
    } finally {
      await receiver?.close()
    }
  })
}

/** Both exchange-rate upstreams down, slow, then sending garbage of three kinds; fine again after each. */
export const upstreamFaults = async (launch: Launch, scope: Scope): Promise<FaultResult> => {
  const gecko = await fakeCoingecko(scope.test)
  const coinbase = await fakeCoinbase(scope.test)
  const timeoutMs = 150
  const env = {
    SVC_RATE_COINGECKO_URL: gecko.url,
    SVC_RATE_COINBASE_URL: coinbase.url,
    SVC_RATE_TIMEOUT_MS: String(timeoutMs),
    SVC_RATE_CACHE_TTL_MS: '0',
    SVC_RATE_STALE_MS: '0',
  }
  return run('rate upstreams down, slow, garbage', launch, env, async (service, problems) => {
    const faults: ReadonlyArray<readonly [Behaviour, number]> = [
      ['down', 0],
      ['slow', 1000],
      ['slow-body', 1000],
      ['malformed', 0],
      ['html', 0],
      ['huge', 0],
    ]
    let requests = 0
    for (const [behaviour, delayMs] of faults) {
      gecko.set(behaviour, delayMs)
      coinbase.set(behaviour, delayMs)
      for (let i = 0; i < 5; i++) {
        const answer = await get(service.base, SHOTS.externalData.path)
        requests++
        // Two upstreams tried in turn, each bounded by the timeout: the answer is bounded by both.
        if ((answer.status !== 502 && answer.status !== 504) || answer.ms > 2 * timeoutMs + 500)
          problems.push(`${behaviour}: ${answer.status} in ${answer.ms.toFixed(0)} ms`)
        if (answer.text.includes('<html') || answer.text.includes('rate limited')) problems.push(`${behaviour}: the upstream's body was echoed`)
      }
      gecko.set('ok')
      coinbase.set('ok')
      const healed = await get(service.base, SHOTS.externalData.path)
      requests++
      if (healed.status !== 200) problems.push(`after ${behaviour}: ${healed.status}, not a fresh rate`)
    }
    return { requests, detail: `${faults.map(([b]) => b).join(', ')}: 502/504 within ${2 * timeoutMs + 500} ms, a fresh rate at once after each` }
  })
}

/** The iris artifact overwritten with a half-written file, then with a valid-looking one whose sha256 is wrong, during hot reload. */
export const modelCorruption = async (launch: Launch): Promise<FaultResult> => {
  const store = await mkdtemp(join(tmpdir(), 'svc-reliability-models-'))
  try {
    await cp(DEFAULT_STORE_ROOT, store, { recursive: true })
    const file = join(store, 'iris', '1', 'model.json')
    const good = await readFile(file, 'utf8')
    const tampered = JSON.parse(good) as { provenance: { seed: number } }
    tampered.provenance.seed += 1
    return await run(
      'model artifact corrupted during hot reload',
      launch,
      { SVC_MODEL_STORE: store, SVC_MODEL_RELOAD_INTERVAL_S: '1' },
      async (service, problems) => {
        let requests = 0
        let isPredicting = true
        // Predictions keep coming throughout; every one must be served by the last good model.
        const predicting = (async () => {
          while (isPredicting) {
            const answer = await predict(service.base)
            requests++
            if (answer.status !== 200) problems.push(`a prediction answered ${answer.status}`)
            await sleep(20)
          }
        })()
        try {
          for (const [what, bytes] of [
            ['half-written', good.slice(0, good.length / 2)],
            ['wrong sha256', JSON.stringify(tampered)],
          ] as const) {
            const before = events(service, 'model_reload_failed')
            // Written in place, not renamed: a reload can read it half-way, as with a copy in progress.
            await writeFile(file, bytes)
            if (!(await waitFor(() => events(service, 'model_reload_failed') > before, 10_000))) problems.push(`${what}: no model_reload_failed within 10 s`)
            await writeFile(file, good)
            await sleep(1500)
          }
          const ready = await get(service.base, '/ready')
          if (ready.status !== 200) problems.push(`/ready ${ready.status} afterwards`)
          const served = sumOf((await get(service.base, '/metrics')).text, 'svc_model_ready', { model: 'iris' })
          if (served !== 1) problems.push(`svc_model_ready{model="iris"} is ${served}`)
        } finally {
          isPredicting = false
          await predicting
        }
        return {
          requests,
          detail: `half-written and wrong-sha256 artifacts refused (model_reload_failed), the last good model kept serving; ${requests} predictions all 200`,
        }
      },
    )
  } finally {
    await rm(store, { recursive: true, force: true })
  }
}

/** Stdout closed under the service (EPIPE on every later log write): it keeps serving and exits 0. */
export const stdoutClosed = (launch: Launch): Promise<FaultResult> =>
  run('stdout closed (EPIPE)', launch, {}, async (service, problems) => {
    service.child.proc.stdout?.destroy()
    await sleep(100)
    const { bad } = await burst(service.base, 50)
    if (bad > 0) problems.push(`${bad} of 50 requests not 200 after stdout closed`)
    const text = (await get(service.base, '/metrics')).text
    const lost = text.includes('svc_log_lines_dropped_total')
      ? `${sumOf(text, 'svc_log_lines_dropped_total')} lost log lines counted`
      : 'svc_log_lines_dropped_total not exposed'
    return { requests: 51, detail: `50 requests answered 200 with nobody reading stdout; ${lost}` }
  })

/** Nobody reads stdout for 2 s (the pipe fills and log writes wait), then it is read again: no line lost. */
export const stdoutStalled = (launch: Launch): Promise<FaultResult> =>
  run('stdout pipe full for 2 s', launch, { LOG_LEVEL: 'info' }, async (service, problems) => {
    const count = 500
    const stdout = service.child.proc.stdout
    stdout?.pause()
    // Enough request lines to fill the pipe (64 KiB on Linux) several times over.
    const answers = Promise.all(Array.from({ length: count }, () => get(service.base, '/')))
    await sleep(2000)
    stdout?.resume()
    const bad = (await answers).filter((a) => a.status !== 200).length
    if (bad > 0) problems.push(`${bad} of ${count} requests not 200`)
    await sleep(200)
    const logged = events(service, 'request_completed')
    if (logged !== count) problems.push(`${logged} request_completed lines for ${count} answers`)
    return { requests: count, detail: `${count} requests answered once the pipe was read again, with ${logged} request_completed lines: none lost` }
  })

/** PostgreSQL and Redis (Debian's packages) stopped and started again while /ready and /health are polled. */
export const dependencyOutages = async (launch: Launch, scope: Scope): Promise<FaultResult> => {
  const name = 'PostgreSQL and Redis down, then back'
  const postgres = await restartablePostgres(scope.test)
  const redis = await restartableRedis(scope.test)
  if (postgres === undefined || redis === undefined) return { name, isSurvived: undefined, requests: 0, detail: `not run: ${scope.notes().join('; ')}` }
  const env = {
    SVC_DB_HOST: postgres.target.host,
    SVC_DB_PORT: String(postgres.target.port),
    SVC_CACHE_HOST: redis.target.host,
    SVC_CACHE_PORT: String(redis.target.port),
    SVC_HEALTH_TIMEOUT_MS: '300',
    SVC_HEALTH_CACHE_MS: '0',
  }
  return run(name, launch, env, async (service, problems) => {
    let requests = 0
    const probe = async (path: string): Promise<number> => {
      requests++
      const answer = await get(service.base, path)
      if (answer.ms > 1000) problems.push(`${path} took ${answer.ms.toFixed(0)} ms`)
      return answer.status
    }
    const readyBecomes = async (status: number, what: string): Promise<void> => {
      if (!(await waitFor(async () => (await probe('/ready')) === status, 10_000, 50))) problems.push(`/ready never answered ${status} ${what}`)
      if ((await probe('/health')) !== 200) problems.push(`/health not 200 ${what}`)
    }
    await readyBecomes(200, 'at start')
    for (const [dependency, label] of [
      [postgres, 'PostgreSQL'],
      [redis, 'Redis'],
    ] as const) {
      await dependency.stop()
      await readyBecomes(503, `with ${label} down`)
      await dependency.start()
      await readyBecomes(200, `once ${label} was back`)
    }
    return { requests, detail: '/ready 503 while each was down and 200 once it was back, by itself; /health 200 throughout' }
  })
}
