// Graceful shutdown under load, through the scenario `npm run reliability` runs
// too (test/reliability/shutdown-under-load.ts): the real CLI, SIGTERM mid-load, the load kept going.
import t from 'tap'
import type { Outcome } from '../reliability/load.js'
import { shutdownUnderLoad } from '../reliability/shutdown-under-load.js'
import { spawnTs } from '../fixtures/spawn.js'

const SHUTDOWN_DELAY_MS = 500
const TIMER_SLACK_MS = 20

const describe = (outcomes: readonly Outcome[]): string[] =>
  outcomes.slice(0, 5).map((o) => `${o.shot.method} ${o.shot.path}: ${o.kind} ${o.status || ''} ${o.error ?? ''} (reused socket: ${o.isReused})`.trim())

t.test('SIGTERM under keep-alive load: no request fails, the drain closes connections, every answer is logged and traced once, exit 0', async (t) => {
  const result = await shutdownUnderLoad({
    launch: (args, env) => spawnTs('bin/svc.ts', args, env),
    connections: 16,
    loadBeforeMs: 1000,
    shutdownDelayMs: SHUTDOWN_DELAY_MS,
  })
  const { responses, refused, unread, drained } = result
  t.comment(
    `${responses} answers (${result.rps.toFixed(0)}/s, p99 ${result.p99Ms.toFixed(1)} ms), ${drained} of them during the drain; ${refused} connections refused, ${unread} reset unread as the listener closed`,
  )

  t.same(result.exit, { code: 0, signal: null }, 'the process exits 0')
  t.same(describe(result.failed), [], 'no request failed: every one sent before the listener closed was answered')
  t.same(describe(result.notOk), [], 'every answer of the load is a 200')
  t.ok(result.keptAliveBefore > 0, `before the signal, answers kept their connections open (${result.keptAliveBefore} reused)`)

  t.ok(result.firstUnreadyAt > result.signalAt, '/ready turned 503 after the signal')
  t.ok(refused > 0, 'once the listener closed, new connections were refused')
  // The delay is a timer, and Node counts timers from the clock it read when the event-loop turn
  // began, so it may end a few ms short of SVC_SHUTDOWN_DELAY_MS after the signal was handled.
  const notReadyForMs = result.firstRefusedAt - result.lastReadySentAt
  t.ok(
    notReadyForMs >= SHUTDOWN_DELAY_MS - TIMER_SLACK_MS,
    `the first refusal (or unread reset) came ${notReadyForMs.toFixed(0)} ms after the last /ready 200 was asked: the shutdown delay`,
  )

  t.ok(drained > 0, `${drained} requests sent after /ready turned 503 were answered`)
  t.same(describe(result.drainedKeptAlive), [], 'every answer during the drain carries Connection: close')
  t.ok(result.acceptedWhileDraining > 0, `new connections were still accepted during the delay (${result.acceptedWhileDraining})`)

  t.same(
    result.lines,
    { missing: [], extra: [], duplicated: [], wrongTrace: [] },
    'one request_completed line per answer, with its trace id, and none for anything else',
  )
  t.same(
    { ...result.spans, received: result.spans.received === responses },
    { received: true, missing: [], extra: [], duplicated: [] },
    `one span per answer (${result.spans.received} spans)`,
  )
})
