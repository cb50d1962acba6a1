// `npm run reliability`: the reliability evidence in one bounded run (a few minutes), loopback only,
// each scenario against its own instance of the compiled CLI:
//   - load held: wrk (or autocannon) on keep-alive connections, req/s and p99, errors;
//   - nothing lost: a steady mixed load, every answer found in the logs, the spans and the counters
//     (test/reliability/nothing-lost.ts, which test/integration/nothing-lost.test.ts runs too);
//   - graceful shutdown under load (test/reliability/shutdown-under-load.ts, likewise tested);
//   - faults survived: compact versions of test/integration/faults-*.test.ts (faults.ts);
//   - bad inputs tried: a seeded batch of hostile requests (hostile-input.ts).
// Then one table. Exit status 1 when anything was lost, failed or not survived.
//
// Environment: RELIABILITY_SECONDS (10, the wrk run), RELIABILITY_CONNECTIONS (50),
// RELIABILITY_RATE (1000 req/s) and RELIABILITY_STEADY_SECONDS (10) for the steady load,
// RELIABILITY_FUZZ_REQUESTS (20000), RELIABILITY_SEED (random, printed), RELIABILITY_LOADGEN.
import { cp } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { spawnTs } from '../fixtures/spawn.js'
import { collectorOutages, dependencyOutages, modelCorruption, stdoutClosed, stdoutStalled, upstreamFaults, type FaultResult } from './faults.js'
import { hostileInput } from './hostile-input.js'
import { nothingLost } from './nothing-lost.js'
import { createScope } from './scope.js'
import type { Launch } from './service.js'
import { shutdownUnderLoad } from './shutdown-under-load.js'
import { figure, table } from './table.js'
import { throughput } from './throughput.js'

// Runs compiled, from dist/test/reliability/; spawnTs resolves 'bin/svc.js' under dist/.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const setting = (name: string, fallback: number): number => Number(process.env[name] ?? String(fallback))
const SECONDS = setting('RELIABILITY_SECONDS', 10)
const CONNECTIONS = setting('RELIABILITY_CONNECTIONS', 50)
const RATE = setting('RELIABILITY_RATE', 1000)
const STEADY_SECONDS = setting('RELIABILITY_STEADY_SECONDS', 10)
const FUZZ_REQUESTS = setting('RELIABILITY_FUZZ_REQUESTS', 20_000)
const SEED = setting('RELIABILITY_SEED', Math.floor(Math.random() * 2 ** 32))
const SHUTDOWN_DELAY_MS = 500

const launch: Launch = (args, env) => spawnTs('bin/svc.js', args, env)
// The OTLP receiver fixture loads its .proto from beside itself, and tsc copies only code.
await cp(`${ROOT}test/fixtures/otlp`, `${ROOT}dist/test/fixtures/otlp`, { recursive: true })
const say = (line: string): void => void process.stdout.write(`${line}\n`)
const started = performance.now()
const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(0)} s`

say(`svc reliability report: node ${process.version}, loopback only, seed ${SEED}\n`)

say(`[${elapsed()}] load: ${CONNECTIONS} keep-alive connections for ${SECONDS} s after 3 s of warm-up`)
const load = await throughput({ root: ROOT, seconds: SECONDS, connections: CONNECTIONS, warmupSeconds: 3 })
say(`  ${load.loadgen}, ${load.path}: ${figure(load.rps)} req/s, p99 ${load.p99Ms.toFixed(2)} ms, ${load.errors} errors of ${figure(load.requests)}`)

say(`[${elapsed()}] nothing lost: ${RATE} req/s for ${STEADY_SECONDS} s (GET /, POST /api/v1/predict, GET /api/v1/models), traces sampled at 0.5`)
const steady = await nothingLost({ launch, rate: RATE, durationMs: STEADY_SECONDS * 1000, connections: 16, ratio: 0.5 })
const steadyLost =
  steady.failed.length +
  steady.lines.missing.length +
  steady.lines.extra.length +
  steady.lines.duplicated.length +
  steady.spans.missing.length +
  steady.spans.extra.length +
  steady.spans.duplicated.length +
  Math.abs(steady.countedTotal - steady.sentTotal)
say(
  `  ${figure(steady.responses)} answers (${figure(steady.rps)}/s, p99 ${steady.p99Ms.toFixed(2)} ms), ${steady.notOk.length} not 200; ` +
    `${figure(steady.lines.completed)} request_completed lines (${steady.lines.missing.length} missing, ${steady.lines.extra.length} extra); ` +
    `${figure(steady.spans.received)} spans for ${figure(steady.spans.sampled)} sampled (${steady.spans.missing.length} missing); ` +
    `http_requests_total ${figure(steady.countedTotal)} for ${figure(steady.sentTotal)} sent; svc_spans_dropped_total ${steady.dropped}; exit ${steady.exit.code}`,
)

say(`[${elapsed()}] graceful shutdown: SIGTERM after 1 s of closed-loop load on 16 connections, SVC_SHUTDOWN_DELAY_MS=${SHUTDOWN_DELAY_MS}`)
const shutdown = await shutdownUnderLoad({ launch, connections: 16, loadBeforeMs: 1000, shutdownDelayMs: SHUTDOWN_DELAY_MS })
const shutdownLost =
  shutdown.failed.length +
  shutdown.lines.missing.length +
  shutdown.lines.extra.length +
  shutdown.lines.duplicated.length +
  shutdown.lines.wrongTrace.length +
  shutdown.spans.missing.length +
  shutdown.spans.extra.length +
  shutdown.spans.duplicated.length
const refusedAfterMs = shutdown.firstRefusedAt - shutdown.lastReadySentAt
const shutdownProblems = [
  shutdown.exit.code === 0 ? '' : `exit ${shutdown.exit.code ?? shutdown.exit.signal}`,
  shutdown.notOk.length === 0 ? '' : `${shutdown.notOk.length} answers not 200`,
  shutdown.drainedKeptAlive.length === 0 ? '' : `${shutdown.drainedKeptAlive.length} drain answers without Connection: close`,
  refusedAfterMs >= SHUTDOWN_DELAY_MS ? '' : `refusals began ${refusedAfterMs.toFixed(0)} ms after /ready turned 503`,
].filter(Boolean)
say(
  `  ${figure(shutdown.responses)} answers, ${shutdown.drained} during the drain (all with Connection: close: ${shutdown.drainedKeptAlive.length === 0}); ` +
    `${shutdown.failed.length} failed; ${shutdown.refused} connections refused and ${shutdown.unread} reset unread once the listener closed, ` +
    `the first ${refusedAfterMs.toFixed(0)} ms after /ready's last 200; exit ${shutdown.exit.code}`,
)

say(`[${elapsed()}] faults`)
const faults: FaultResult[] = []
const scope = createScope()
try {
  for (const scenario of [
    () => collectorOutages(launch),
    () => upstreamFaults(launch, scope),
    () => dependencyOutages(launch, scope),
    () => modelCorruption(launch),
    () => stdoutClosed(launch),
    () => stdoutStalled(launch),
  ]) {
    const result = await scenario()
    faults.push(result)
    say(`  ${result.name}: ${result.isSurvived === undefined ? 'not run' : result.isSurvived ? 'survived' : 'NOT SURVIVED'} — ${result.detail}`)
  }
} finally {
  await scope.close()
}
const ran = faults.filter((f) => f.isSurvived !== undefined)
const survived = ran.filter((f) => f.isSurvived === true)

say(`[${elapsed()}] hostile input: ${FUZZ_REQUESTS} seeded requests`)
const hostile = await hostileInput({ launch, seed: SEED, requests: FUZZ_REQUESTS })
say(
  `  ${hostile.sent} sent (${hostile.hostile} hostile), ${hostile.violations.length} violations, http_* samples ${hostile.seriesBefore} before and ${hostile.series} after, still serving: ${hostile.isServing}`,
)
for (const v of hostile.violations) say(`    ${v}`)

say(`\nFaults (${elapsed()} in all):\n`)
say(
  table(
    ['Fault', 'Survived', 'Requests', 'What happened'],
    faults.map((f) => [f.name, f.isSurvived === undefined ? 'not run' : f.isSurvived ? 'yes' : 'NO', figure(f.requests), f.detail]),
  ),
)

const lost = steadyLost + shutdownLost
const rows: Array<readonly string[]> = [
  [
    `Load held (${load.loadgen}, ${load.connections} keep-alive connections, ${load.seconds} s, ${load.path})`,
    `${figure(load.rps)} req/s, p99 ${load.p99Ms.toFixed(2)} ms`,
    `${load.errors} errors in ${figure(load.requests)} requests; ${load.isPinned ? 'server on CPU 0, load on CPU 1' : 'no CPU pinning'}`,
  ],
  [
    `Load held (steady mix, in-process client, ${STEADY_SECONDS} s)`,
    `${figure(steady.rps)} req/s, p99 ${steady.p99Ms.toFixed(2)} ms`,
    `${RATE} req/s asked; ${steady.notOk.length} answers not 200`,
  ],
  [
    'Faults survived',
    `${survived.length} of ${ran.length}`,
    faults.map((f) => `${f.name}${f.isSurvived === true ? '' : f.isSurvived === undefined ? ' (not run)' : ' (NOT SURVIVED)'}`).join('; '),
  ],
  [
    'Bad inputs tried',
    `${figure(hostile.sent)} (${figure(hostile.hostile)} hostile)`,
    `seed ${SEED}; ${hostile.violations.length} violations (wrong status, 5xx, leak); http_* samples ${hostile.seriesBefore} before, ${hostile.series} after (bounded by the label sets); still serving: ${hostile.isServing ? 'yes' : 'NO'}`,
  ],
  [
    'Requests lost',
    `${lost} of ${figure(steady.responses + shutdown.responses)}`,
    `steady load: ${steadyLost} (log lines, sampled spans, counts); shutdown under load: ${shutdownLost} failed or unlogged or untraced, ` +
      `${shutdown.refused} refused and ${shutdown.unread} reset unread after the listener closed, ${shutdown.drained} answered while draining` +
      (shutdownProblems.length === 0 ? '' : `; ${shutdownProblems.join('; ')}`),
  ],
]
say(`Summary:\n`)
say(table(['Measure', 'Result', 'Detail'], rows))

const isClean =
  lost === 0 &&
  load.errors === 0 &&
  steady.notOk.length === 0 &&
  shutdownProblems.length === 0 &&
  survived.length === ran.length &&
  hostile.violations.length === 0 &&
  hostile.isServing &&
  steady.dropped === 0
process.exitCode = isClean ? 0 : 1
