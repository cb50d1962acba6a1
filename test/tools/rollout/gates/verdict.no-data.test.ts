// No data decides nothing, as a property of every gate (issue 50, item 3): from an input on which
// a gate passes, and from one on which it fails, every figure in turn replaced by NaN, +Inf, -Inf
// or a negative number, an empty input, and one with too few rows, each give `inconclusive` with
// a reason, never `pass` and never `fail`. Flagger rolls canaries back on "no values found" and
// lets a 0/0 pass; Kayenta passes NaN (flagger#1035, kayenta#426). A gate missing from the table
// fails the last test.
import t, { type Test } from 'tap'
import { type AccuracyInput, accuracyGate } from '../../../../lib/tools/rollout/gates/accuracy.js'
import { type DriftInput, predictionDriftGate } from '../../../../lib/tools/rollout/gates/drift.js'
import { clientErrorsGate, type ErrorCounts, serverErrorsGate } from '../../../../lib/tools/rollout/gates/errors.js'
import { type Bucket, type LatencyInput, latencyGate } from '../../../../lib/tools/rollout/gates/latency.js'
import { type RegressionInput, regressionGate } from '../../../../lib/tools/rollout/gates/regression.js'
import { type Disagreements, type ShadowFailures, shadowDisagreementGate, shadowFailureGate } from '../../../../lib/tools/rollout/gates/shadow.js'
import { GATES, type GateName, type GateResult } from '../../../../lib/tools/rollout/gates/verdict.js'

type Case<I> = Readonly<{ gate: GateName; run: (input: I) => GateResult; pass: I; fail: I; empty: I; few: I }>

const errors = (canary: number, requests: number): ErrorCounts => ({ canary: { errors: canary, requests }, default: { errors: 50, requests: 10_000 } })
const histogram = (counts: readonly number[]): Bucket[] =>
  [0.001, 0.0025, 0.005, 0.01, Number.POSITIVE_INFINITY].map((le, i) => ({ le, count: counts[i] ?? 0 }))
const latency = (counts: readonly number[]): LatencyInput => ({ buckets: histogram(counts), defaultQuantile: 0.002 })
const accuracy = (correct: number, labelled: number): AccuracyInput => ({
  canary: { correct, labelled },
  default: { correct: 2900, labelled: 3000 },
  reference: 0.97,
})
const regression = (absolute: number, squared: number, rows: number): RegressionInput => ({
  canary: { absolute, squared, rows },
  default: { absolute: 2000, squared: 6000, rows: 3000 },
  referenceRmse: 1.5,
})

/** A case typed by its own input, kept as any input in the table. */
const gateCase = <I>(c: Case<I>): Case<any> => c

const CASES: readonly Case<any>[] = [
  gateCase({
    gate: 'server_errors',
    run: (i: ErrorCounts) => serverErrorsGate(i),
    pass: errors(0, 2000),
    fail: errors(60, 2000),
    empty: errors(0, 0),
    few: errors(1, 20),
  }),
  gateCase({
    gate: 'client_errors',
    run: (i: ErrorCounts) => clientErrorsGate(i),
    pass: errors(1, 2000),
    fail: errors(20, 80),
    empty: errors(0, 0),
    few: errors(0, 74),
  }),
  gateCase({
    gate: 'latency_p95',
    run: (i: LatencyInput) => latencyGate('p95', i),
    pass: latency([900, 990, 1000, 1000, 1000]),
    fail: latency([100, 800, 950, 990, 1000]),
    empty: latency([0, 0, 0, 0, 0]),
    few: latency([10, 20, 399, 399, 399]),
  }),
  gateCase({
    gate: 'latency_p99',
    run: (i: LatencyInput) => latencyGate('p99', i),
    pass: latency([1800, 2495, 2500, 2500, 2500]),
    fail: latency([1000, 2000, 2400, 2500, 2500]),
    empty: latency([0, 0, 0, 0, 0]),
    few: latency([0, 0, 0, 0, 1999]),
  }),
  gateCase({
    gate: 'quality',
    run: (i: AccuracyInput) => accuracyGate(i),
    pass: accuracy(390, 400),
    fail: accuracy(300, 400),
    empty: accuracy(0, 0),
    few: accuracy(0, 40),
  }),
  gateCase({
    gate: 'quality',
    run: (i: RegressionInput) => regressionGate(i),
    pass: regression(260, 800, 400),
    fail: regression(1000, 4000, 400),
    empty: regression(0, 0, 0),
    few: regression(100, 400, 40),
  }),
  gateCase({
    gate: 'shadow_disagreement',
    run: (i: Disagreements) => shadowDisagreementGate(i),
    pass: { disagreements: 5, compared: 600 },
    fail: { disagreements: 100, compared: 600 },
    empty: { disagreements: 0, compared: 0 },
    few: { disagreements: 400, compared: 499 },
  }),
  gateCase({
    gate: 'shadow_failures',
    run: (i: ShadowFailures) => shadowFailureGate(i),
    pass: { failures: 0, copies: 400 },
    fail: { failures: 100, copies: 400 },
    empty: { failures: 0, copies: 0 },
    few: { failures: 299, copies: 299 },
  }),
  gateCase({
    gate: 'prediction_drift',
    run: (i: DriftInput) => predictionDriftGate(i),
    pass: { canary: { a: 500, b: 300, c: 200 }, default: { a: 5000, b: 3000, c: 2000 } },
    fail: { canary: { a: 200, b: 300, c: 500 }, default: { a: 5000, b: 3000, c: 2000 } },
    empty: { canary: {}, default: {} },
    few: { canary: { a: 0, b: 0, c: 499 }, default: { a: 5000, b: 3000, c: 2000 } },
  }),
]

type Path = readonly (string | number)[]

/** The path of every number in `value`. */
const numbers = (value: unknown, path: Path = []): Path[] => {
  if (typeof value === 'number') return [path]
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, inner]) => numbers(inner, [...path, Array.isArray(value) ? Number(key) : key]))
}

/** A deep copy of `value` with the number at `path` replaced by `replacement`. */
const replaced = <I>(value: I, path: Path, replacement: number): I => {
  const copy = structuredClone(value)
  let parent: any = copy
  for (const key of path.slice(0, -1)) parent = parent[key]
  parent[path.at(-1) as string | number] = replacement
  return copy
}

const read = (value: unknown, path: Path): unknown => path.reduce((inner: any, key) => inner[key], value)

const BAD = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1]

const isUndecided = (t: Test, result: GateResult, gate: GateName, message: string): void => {
  t.equal(result.gate, gate, `${message}: the gate names itself`)
  t.equal(result.verdict, 'inconclusive', `${message}: inconclusive (${result.reason})`)
  t.notOk('critical' in result, `${message}: nothing critical`)
  t.ok(result.reason.length > 20, `${message}: a reason`)
}

for (const c of CASES) {
  t.test(`${c.gate}: a NaN, ±Inf or negative figure anywhere, no rows, or too few decide nothing`, async (t) => {
    t.equal(c.run(c.pass).verdict, 'pass', 'the passing input passes')
    t.equal(c.run(c.fail).verdict, 'fail', 'the failing input fails')
    for (const [side, input] of [
      ['passing', c.pass],
      ['failing', c.fail],
    ] as const) {
      const paths = numbers(input)
      t.ok(paths.length >= 2, `${side}: ${paths.length} figures`)
      for (const path of paths) {
        for (const bad of BAD) {
          // +Inf where +Inf already is (a histogram's last edge) changes nothing.
          if (Object.is(read(input, path), bad)) continue
          isUndecided(t, c.run(replaced(input, path, bad)), c.gate, `${side}, ${path.join('.')} = ${bad}`)
        }
      }
    }
    isUndecided(t, c.run(c.empty), c.gate, 'no rows')
    isUndecided(t, c.run(c.few), c.gate, 'too few rows')
  })
}

t.test('every gate is in the table', async (t) => {
  t.same([...new Set(CASES.map((c) => c.gate))].sort(), [...GATES].sort())
})
