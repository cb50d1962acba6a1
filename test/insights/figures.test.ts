import { setTimeout as sleep } from 'node:timers/promises'
import { Registry } from 'prom-client'
import t from 'tap'
import { createFigures, quantile, RATE_WINDOW_MS } from '../../lib/insights/figures.js'
import { count, observe } from '../../lib/telemetry/metrics/cells.js'
import { createMetricsRegistry } from '../../lib/telemetry/metrics/registry.js'

const BOUNDS = [0.1, 0.5, 1]

// [what, cumulative counts (one per bound, then +Inf), expected p95]
const CASES: ReadonlyArray<readonly [string, number[], number | null]> = [
  ['no observations', [0, 0, 0, 0], null],
  ['all in the first bucket: interpolated from 0', [10, 10, 10, 10], 0.095],
  ['the rank inside a middle bucket', [50, 100, 100, 100], 0.1 + (0.4 * (95 - 50)) / 50],
  ['the rank exactly on a bound', [95, 100, 100, 100], 0.1],
  ['the rank in +Inf: the highest finite bound', [0, 0, 0, 100], 1],
  ['empty buckets below the rank are skipped', [0, 0, 20, 20], 0.5 + (0.5 * 19) / 20],
]
for (const [what, cumulative, expected] of CASES) {
  t.test(`p95 as histogram_quantile estimates it: ${what}`, async (t) => {
    const value = quantile(0.95, BOUNDS, cumulative)
    if (expected === null) t.equal(value, null)
    else t.ok(Math.abs((value as number) - expected) < 1e-12, `${value} ≈ ${expected}`)
  })
}

const setup = () => {
  let clock = 0
  const metrics = createMetricsRegistry({ environment: 'dev', version: '1.0.0' })
  const figures = createFigures({ metrics, now: () => clock, heapUsed: () => 123_456 })
  return { metrics, figures, tick: (ms: number) => void (clock += ms) }
}

t.test('figures cycle through in-flight, request rate, p95, event-loop lag and heap', async (t) => {
  const { figures, metrics } = setup()
  metrics.http.inFlight = 3
  const read = await Promise.all(Array.from({ length: 6 }, (_, i) => figures.read(i)))
  t.same(
    read.map((f) => [f.metric, f.unit]),
    [
      ['http_requests_in_flight', 'requests'],
      ['http_request_rate', 'requests_per_second'],
      ['http_request_duration_p95', 'seconds'],
      ['event_loop_lag_p99', 'milliseconds'],
      ['heap_used', 'bytes'],
      ['http_requests_in_flight', 'requests'],
    ],
  )
  t.equal(read[0]?.value, 3)
  t.equal(read[4]?.value, 123_456)
})

t.test('the request rate is the requests counted between two readings over the time between them', async (t) => {
  const { figures, metrics, tick } = setup()
  const rate = async () => (await figures.read(1)).value
  t.equal(await rate(), 0, 'nothing to measure yet')
  const ok = metrics.http.requestCell('GET', '/', 200)
  const missing = metrics.http.requestCell('GET', '<unmatched>', 404)
  for (let i = 0; i < 30; i++) count(ok, undefined)
  for (let i = 0; i < 10; i++) count(missing, undefined)
  tick(2000)
  t.equal(await rate(), 20, '40 requests over 2 s, every route and status')
  for (let i = 0; i < 5; i++) count(ok, undefined)
  tick(RATE_WINDOW_MS - 1)
  t.equal(await rate(), 20, 'within the window the last rate repeats')
  tick(1)
  t.equal(await rate(), 5)
  tick(3000)
  t.equal(await rate(), 0)
})

t.test('p95 comes from the duration histogram across routes, null before any request', async (t) => {
  const { figures, metrics } = setup()
  const p95 = async () => (await figures.read(2)).value
  t.equal(await p95(), null)
  const fast = metrics.http.durationCell('GET', '/')
  const slow = metrics.http.durationCell('GET', '/slow')
  for (let i = 0; i < 90; i++) observe(fast, 0.004, undefined)
  for (let i = 0; i < 10; i++) observe(slow, 0.3, undefined)
  // rank 95 of 100: 5 of the 10 in the (0.25, 0.5] bucket
  t.equal(await p95(), 0.375)
  for (let i = 0; i < 1000; i++) observe(slow, 30, undefined)
  t.equal(await p95(), 10, 'beyond the last bound: the last bound')
})

t.test('the event-loop lag is the p99 since the previous reading, in ms, without the sampling period', async (t) => {
  const { figures } = setup()
  await sleep(50)
  const idle = (await figures.read(3)).value as number
  t.ok(idle >= 0 && idle < 200, `idle lag ${idle} ms`)
  await sleep(15)
  const busyUntil = performance.now() + 60
  while (performance.now() < busyUntil);
  await sleep(15)
  const blocked = (await figures.read(3)).value as number
  t.ok(blocked >= 30, `a 60 ms block shows: ${blocked} ms`)
})

t.test('the event-loop lag is null before its first sample, and the default clock and heap are real', async (t) => {
  const metrics = createMetricsRegistry({ environment: 'dev', version: '1.0.0' })
  const figures = createFigures({ metrics })
  t.equal((await figures.read(3)).value, null)
  t.ok(((await figures.read(4)).value as number) > 1_000_000, 'the heap in bytes')
  t.equal((await figures.read(1)).value, 0)
})

t.test('figures need the HTTP series: a registry without them is refused when the figures are made', async (t) => {
  const metrics = createMetricsRegistry({ environment: 'dev', version: '1.0.0' })
  t.throws(() => createFigures({ metrics: { ...metrics, prom: new Registry() } }), {
    name: 'TypeError',
    message: 'the metrics registry holds no http_requests_total',
  })
})
