// Nothing lost, through the scenario `npm run reliability` runs too
// (test/reliability/nothing-lost.ts): a steady keep-alive load against the real CLI, then every
// answer found once in the logs, every sampled one once at a live OTLP receiver, and in the counters.
import t from 'tap'
import { nothingLost } from '../reliability/nothing-lost.js'
import { spawnTs } from '../fixtures/spawn.js'

const RATE = Number(process.env['NOTHING_LOST_RATE'] ?? '300')
const SECONDS = Number(process.env['NOTHING_LOST_SECONDS'] ?? '6')

t.test(`a steady load (${RATE}/s for ${SECONDS} s) loses no log line, no sampled span and no count`, async (t) => {
  const result = await nothingLost({
    launch: (args, env) => spawnTs('bin/svc.ts', args, env),
    rate: RATE,
    durationMs: SECONDS * 1000,
    connections: 16,
    ratio: 0.5,
  })
  const { responses, spans, lines } = result
  t.comment(`${responses} answers (${result.rps.toFixed(0)}/s, p99 ${result.p99Ms.toFixed(1)} ms); ${spans.sampled} sampled, ${spans.received} spans received`)

  t.same(result.exit, { code: 0, signal: null }, 'the process exits 0')
  t.same(
    result.failed.map((o) => `${o.shot.path}: ${o.error}`),
    [],
    'every request answered',
  )
  t.same(
    result.notOk.map((o) => `${o.shot.path}: ${o.status}`),
    [],
    'every answer a 200',
  )
  t.ok(responses >= RATE * SECONDS * 0.7, `the load ran near its rate (${responses} answers)`)

  t.equal(lines.completed, responses, 'as many request_completed lines as answers')
  t.same(
    { missing: lines.missing, extra: lines.extra, duplicated: lines.duplicated },
    { missing: [], extra: [], duplicated: [] },
    'and they are the answers’ request ids, each once',
  )

  t.ok(spans.sampled > responses * 0.35 && spans.sampled < responses * 0.65, `the ratio sampler kept about half (${spans.sampled} of ${responses})`)
  t.equal(spans.received, spans.sampled, 'as many spans received as sampled requests')
  t.same(
    { missing: spans.missing, extra: spans.extra, duplicated: spans.duplicated },
    { missing: [], extra: [], duplicated: [] },
    'and they are the sampled requests’ traces, each once',
  )
  // An absent series sums to 0 as well: only a series that is there makes the 0 a count of losses.
  t.ok(result.hasDroppedSeries, 'svc_spans_dropped_total is exported')
  t.equal(result.dropped, 0, 'svc_spans_dropped_total stays 0')

  t.equal(result.countedTotal, result.sentTotal, `http_requests_total sums to the client’s count (${result.sentTotal}; scrapes are not counted)`)
  for (const { route, sent, counted } of result.routes) t.equal(counted, sent, `${route}: ${sent} sent, ${counted} counted`)
})
