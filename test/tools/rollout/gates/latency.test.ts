// The latency gates: T = D + max(D/2, 1 ms) as SvcCanaryLatencyHigh (ops/prometheus/rules/rollout.yml),
// the bucket edge nearest it, and the share of canary requests above that edge against 5 % (P95)
// or 1 % (P99), from 400 or 2 000 requests. Bounds worked by hand from Wilson's interval, which
// excludes a limit L once (p − L)² > 1.96² L (1 − L) / n.
import t from 'tap'
import { type Bucket, LATENCY_GATE_DEFAULTS, type LatencyInput, latencyGate } from '../../../../lib/tools/rollout/gates/latency.js'

const EDGES = [0.001, 0.0025, 0.005, 0.01, Number.POSITIVE_INFINITY]
const histogram = (counts: readonly number[], edges: readonly number[] = EDGES): Bucket[] => edges.map((le, i) => ({ le, count: counts[i] ?? 0 }))
const input = (counts: readonly number[], defaultQuantile = 0.002, edges: readonly number[] = EDGES): LatencyInput => ({
  buckets: histogram(counts, edges),
  defaultQuantile,
})
/** `above` of `total` requests slower than 2.5 ms, the edge nearest T = 3 ms at D = 2 ms. */
const slower = (above: number, total: number): LatencyInput => input([0, total - above, total, total, total])

t.test('P95 against 5 % from 400 requests, P99 against 1 % from 2 000, each with a 1 ms floor', async (t) => {
  t.same(LATENCY_GATE_DEFAULTS, { p95: { minRequests: 400, limit: 0.05, floor: 0.001 }, p99: { minRequests: 2000, limit: 0.01, floor: 0.001 } })
})

t.test('T is D plus the larger of D/2 and 1 ms, and the gate compares at the bucket edge nearest it', async (t) => {
  for (const [d, threshold, edge] of [
    [0.002, 0.003, 0.0025],
    [0.001, 0.002, 0.0025],
    [0, 0.001, 0.001],
    [0.004, 0.006, 0.005],
    [0.02, 0.03, 0.01],
  ] as const) {
    const { values } = latencyGate('p95', input([100, 800, 950, 990, 1000], d))
    t.equal(values['default_p95'], d)
    t.equal(values['threshold'], threshold, `D = ${d}: T`)
    t.equal(values['edge'], edge, `D = ${d}: the edge nearest T`)
  }
})

t.test('on a tie the higher edge stands for T: the canary has the benefit of the doubt', async (t) => {
  // D = 2 s: T = 3 s, as far from 2 s as from 4 s.
  const { values } = latencyGate('p95', input([0, 500, 1000, 1000], 2, [1, 2, 4, Number.POSITIVE_INFINITY]))
  t.equal(values['threshold'], 3)
  t.equal(values['edge'], 4)
})

t.test('the share above the edge: 20 % of 1 000 requests over 2.5 ms fails P95, with its figures', async (t) => {
  const result = latencyGate('p95', input([100, 800, 950, 990, 1000]))
  t.same([result.gate, result.verdict, result.critical], ['latency_p95', 'fail', true])
  t.match(
    result.reason,
    /^canary share of requests slower than 2\.5 ms: 20\.00 % over 1000 requests \(95 % interval 17\.64 % to 22\.59 %\): wholly past the limit 5\.00 % \(2\.5 ms is the bucket edge nearest 3 ms, the default's P95 2 ms plus the larger of half of it and 1 ms\)/,
  )
  t.match(result.values, { canary_requests: 1000, canary_above: 200, canary_share: 0.2, limit: 0.05, min_requests: 400 })
})

t.test('P95 at 1 000 requests: 64 above fails, 63 and 37 are inconclusive, 36 passes', async (t) => {
  t.equal(latencyGate('p95', slower(64, 1000)).verdict, 'fail')
  t.equal(latencyGate('p95', slower(63, 1000)).verdict, 'inconclusive')
  t.equal(latencyGate('p95', slower(37, 1000)).verdict, 'inconclusive')
  t.equal(latencyGate('p95', slower(36, 1000)).verdict, 'pass')
})

t.test('P99 at 2 000 requests: 29 above fails, 28 and 12 are inconclusive, 11 passes', async (t) => {
  t.equal(latencyGate('p99', slower(29, 2000)).gate, 'latency_p99')
  t.equal(latencyGate('p99', slower(29, 2000)).verdict, 'fail')
  t.equal(latencyGate('p99', slower(28, 2000)).verdict, 'inconclusive')
  t.equal(latencyGate('p99', slower(12, 2000)).verdict, 'inconclusive')
  t.equal(latencyGate('p99', slower(11, 2000)).verdict, 'pass')
  t.match(latencyGate('p99', slower(11, 2000)).reason, /the default's P99 2 ms/)
})

t.test('below the minimum nothing decides, not even every request slow: it says how many more', async (t) => {
  const p95 = latencyGate('p95', slower(399, 399))
  t.equal(p95.verdict, 'inconclusive')
  t.match(p95.reason, /^canary share of requests slower than 2\.5 ms: 1 more requests needed \(399 of 400\)$/)
  t.match(latencyGate('p99', slower(0, 1500)).reason, /500 more requests needed \(1500 of 2000\)$/)
  t.equal(latencyGate('p99', slower(0, 1500), { minRequests: 1000 }).verdict, 'pass', "the plan's minimum")
})

t.test('cumulative counts that dip are raised to the count before them, as histogram_quantile() does', async (t) => {
  // The 2.5 ms bucket below the 1 ms one: 100 at or under 2.5 ms, so 900 above.
  t.match(latencyGate('p95', input([100, 90, 950, 990, 1000])).values, { canary_requests: 1000, canary_above: 900 })
  // +Inf below the 10 ms bucket: 990 requests in all.
  t.match(latencyGate('p95', input([100, 800, 950, 990, 985])).values, { canary_requests: 990, canary_above: 190 })
})

t.test('buckets that cannot be read decide nothing, and say why', async (t) => {
  for (const [name, buckets, reason] of [
    ['none', [], 'the canary has no histogram buckets'],
    ['no +Inf', [{ le: 0.001, count: 1 }], 'the last bucket is le=0.001, not le=+Inf'],
    ['edges descending', histogram([1, 2, 3, 4], [0.005, 0.001, 0.01, Number.POSITIVE_INFINITY]), 'bucket edges must ascend: le=0.001 follows le=0.005'],
    ['a negative edge', histogram([1, 2], [-0.001, Number.POSITIVE_INFINITY]), 'bucket edge le=-0.001 is no duration (0 s or more)'],
    ['a NaN edge', histogram([1, 2, 3], [0.001, Number.NaN, Number.POSITIVE_INFINITY]), 'bucket edge le=NaN is no duration (0 s or more)'],
    ['+Inf twice', histogram([1, 2], [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]), 'bucket edges must ascend: le=Infinity follows le=Infinity'],
    ['a NaN count', histogram([1, Number.NaN, 3, 4, 5]), 'bucket le=0.0025 count is NaN'],
    ['only +Inf', [{ le: Number.POSITIVE_INFINITY, count: 1000 }], 'the canary has only the +Inf bucket, no edge to compare with'],
  ] as const) {
    const result = latencyGate('p95', { buckets, defaultQuantile: 0.002 })
    t.same([result.verdict, result.reason], ['inconclusive', `no data decides nothing: ${reason}`], name)
  }
  t.equal(latencyGate('p95', input([1, 2, 3, 4, 5], Number.NaN)).reason, 'no data decides nothing: default_p95 is NaN', 'a default without requests has no P95')
})

t.test("the plan's limit and floor replace the defaults", async (t) => {
  t.equal(latencyGate('p95', slower(64, 1000), { limit: 0.1 }).verdict, 'pass')
  t.equal(latencyGate('p95', input([100, 800, 950, 990, 1000], 0.002), { floor: 0.004 }).values['edge'], 0.005)
})
