// A rollout's plan: documented defaults, every member overridable on its own, and any other document
// refused with the member's path and what it takes.
import t from 'tap'
import { errorMessage } from '../../../lib/core/errors.js'
import { DEFAULT_PLAN, formatPlan, type Plan, PlanError, parsePlan, planFromJson } from '../../../lib/tools/rollout/plan.js'
import { accuracyGate, QUALITY_GATE_DEFAULTS } from '../../../lib/tools/rollout/gates/accuracy.js'
import { DRIFT_GATE_DEFAULTS, predictionDriftGate } from '../../../lib/tools/rollout/gates/drift.js'
import { clientErrorsGate, ERROR_GATE_DEFAULTS, serverErrorsGate } from '../../../lib/tools/rollout/gates/errors.js'
import { LATENCY_GATE_DEFAULTS, latencyGate } from '../../../lib/tools/rollout/gates/latency.js'
import { regressionGate } from '../../../lib/tools/rollout/gates/regression.js'
import { SHADOW_DISAGREEMENT_DEFAULTS, SHADOW_FAILURE_DEFAULTS, shadowDisagreementGate, shadowFailureGate } from '../../../lib/tools/rollout/gates/shadow.js'
import { DEFAULT_ROLES, GATES } from '../../../lib/tools/rollout/gates/verdict.js'

/** What `fn` throws; undefined when it returns. */
const thrownBy = (fn: () => unknown): unknown => {
  try {
    fn()
  } catch (error: unknown) {
    return error
  }
  return undefined
}

const MINUTE = 60_000

/** DEFAULT_PLAN with the members of `change` replaced, and those of each gate in `gates`. */
const planWith = (change: Partial<Omit<Plan, 'gates'>>, gates: Readonly<Record<string, object>> = {}): Plan => ({
  ...DEFAULT_PLAN,
  ...change,
  gates: Object.fromEntries(Object.entries(DEFAULT_PLAN.gates).map(([name, gate]) => [name, { ...gate, ...gates[name] }])) as Plan['gates'],
})

/** The defaults as the README shows them: what `formatPlan(DEFAULT_PLAN)` writes. */
const DEFAULT_TEXT = `{
  "steps": [
    {
      "kind": "shadow",
      "percent": 100
    },
    {
      "kind": "canary",
      "percent": 1
    },
    {
      "kind": "canary",
      "percent": 5
    },
    {
      "kind": "canary",
      "percent": 20
    },
    {
      "kind": "canary",
      "percent": 50
    }
  ],
  "interval": "5m",
  "warmup": "2m",
  "min_bake": "10m",
  "failure_limit": 3,
  "stall_after": "2h",
  "min_labels": 200,
  "rollback_on_stall": false,
  "gates": {
    "server_errors": {
      "role": "fail",
      "critical": false,
      "min_requests": 300,
      "critical_from": 75,
      "floor": 0.01
    },
    "client_errors": {
      "role": "fail",
      "critical": false,
      "min_requests": 300,
      "critical_from": 75,
      "floor": 0.01
    },
    "latency_p95": {
      "role": "fail",
      "critical": false,
      "min_requests": 400,
      "limit": 0.05,
      "floor": "1ms"
    },
    "latency_p99": {
      "role": "fail",
      "critical": false,
      "min_requests": 2000,
      "limit": 0.01,
      "floor": "1ms"
    },
    "quality": {
      "role": "fail",
      "critical": false,
      "critical_from": 50
    },
    "shadow_disagreement": {
      "role": "hold",
      "critical": false,
      "min_rows": 500,
      "limit": 0.05
    },
    "shadow_failures": {
      "role": "fail",
      "critical": false,
      "min_rows": 300,
      "limit": 0.05
    },
    "prediction_drift": {
      "role": "info",
      "critical": false,
      "min_rows": 500,
      "moderate": 0.1,
      "severe": 0.25,
      "alpha": 0.05
    }
  }
}
`

t.test('the defaults: a shadow at 100 %, canary 1, 5, 20 and 50 %, the issue’s times and limits, the alerts’ margins', async (t) => {
  t.equal(formatPlan(DEFAULT_PLAN), DEFAULT_TEXT)
  t.strictSame(DEFAULT_PLAN.steps, [
    { kind: 'shadow', percent: 100 },
    { kind: 'canary', percent: 1 },
    { kind: 'canary', percent: 5 },
    { kind: 'canary', percent: 20 },
    { kind: 'canary', percent: 50 },
  ])
  t.match(DEFAULT_PLAN, { interval: 5 * MINUTE, warmup: 2 * MINUTE, min_bake: 10 * MINUTE, failure_limit: 3, stall_after: 120 * MINUTE })
  t.equal(DEFAULT_PLAN.rollback_on_stall, false)
  t.equal(DEFAULT_PLAN.gates.quality.minLabels, 200, 'min_labels is the quality gate’s')
  t.equal(DEFAULT_PLAN.gates.latency_p95.floor, 0.001, 'seconds in memory, as the latency gates take it')
  t.ok(Object.isFrozen(DEFAULT_PLAN) && Object.isFrozen(DEFAULT_PLAN.steps[0]) && Object.isFrozen(DEFAULT_PLAN.gates.quality))
})

t.test('the gates are the gates’ own: their names, default roles and default options, none copied', async (t) => {
  t.strictSame(Object.keys(DEFAULT_PLAN.gates), [...GATES])
  for (const gate of GATES) t.match(DEFAULT_PLAN.gates[gate], { role: DEFAULT_ROLES[gate], critical: false }, gate)
  const { gates } = DEFAULT_PLAN
  const options = <T extends { role: unknown; critical: unknown }>({ role, critical, ...rest }: T) => rest
  t.strictSame(options(gates.server_errors), ERROR_GATE_DEFAULTS)
  t.strictSame(options(gates.client_errors), ERROR_GATE_DEFAULTS)
  t.strictSame(options(gates.latency_p95), LATENCY_GATE_DEFAULTS.p95)
  t.strictSame(options(gates.latency_p99), LATENCY_GATE_DEFAULTS.p99)
  t.strictSame(options(gates.quality), QUALITY_GATE_DEFAULTS)
  t.strictSame(options(gates.shadow_disagreement), SHADOW_DISAGREEMENT_DEFAULTS)
  t.strictSame(options(gates.shadow_failures), SHADOW_FAILURE_DEFAULTS)
  t.strictSame(options(gates.prediction_drift), DRIFT_GATE_DEFAULTS)
})

t.test('a plan’s gate goes to its gate function as it is: each option the file changes, the gate judges by', async (t) => {
  const { gates } = parsePlan(`{"min_labels":400,"gates":{
    "server_errors":{"min_requests":1000,"floor":0.05}, "client_errors":{"min_requests":2000},
    "latency_p95":{"limit":0.1,"floor":"5ms"}, "latency_p99":{"min_requests":5000},
    "shadow_disagreement":{"limit":0.2}, "shadow_failures":{"min_rows":700},
    "prediction_drift":{"min_rows":900,"moderate":0.15,"severe":0.3,"alpha":0.01}}}`)
  const counts = { canary: { errors: 0, requests: 10 }, default: { errors: 0, requests: 10 } }
  t.match(serverErrorsGate(counts, gates.server_errors).values, { min_requests: 1000, limit: 0.05 })
  t.match(clientErrorsGate(counts, gates.client_errors).values, { min_requests: 2000, limit: 0.01 })
  const buckets = [
    { le: 0.005, count: 5 },
    { le: 0.01, count: 10 },
    { le: Number.POSITIVE_INFINITY, count: 10 },
  ]
  t.match(latencyGate('p95', { buckets, defaultQuantile: 0.002 }, gates.latency_p95).values, { limit: 0.1, threshold: 0.007, min_requests: 400 })
  t.match(latencyGate('p99', { buckets, defaultQuantile: 0.002 }, gates.latency_p99).values, { limit: 0.01, threshold: 0.003, min_requests: 5000 })
  const labelled = { correct: 10, labelled: 10 }
  t.match(accuracyGate({ canary: labelled, default: labelled }, gates.quality).values, { min_labels: 400 })
  const sums = { absolute: 10, squared: 20, rows: 10 }
  t.match(regressionGate({ canary: sums, default: sums }, gates.quality).values, { min_labels: 400 })
  t.match(shadowDisagreementGate({ disagreements: 0, compared: 10 }, gates.shadow_disagreement).values, { limit: 0.2, min_rows: 500 })
  t.match(shadowFailureGate({ failures: 0, copies: 10 }, gates.shadow_failures).values, { limit: 0.05, min_rows: 700 })
  t.match(predictionDriftGate({ canary: { a: 1 }, default: { a: 1 } }, gates.prediction_drift).values, {
    min_rows: 900,
    moderate: 0.15,
    severe: 0.3,
    alpha: 0.01,
  })
})

t.test('an empty plan is the defaults, frozen; so is the default text read back', async (t) => {
  const plan = parsePlan('{}')
  t.strictSame(plan, DEFAULT_PLAN)
  t.ok(Object.isFrozen(plan))
  t.strictSame(parsePlan(Buffer.from(DEFAULT_TEXT)), DEFAULT_PLAN)
  t.strictSame(parsePlan(Buffer.from(`\uFEFF${DEFAULT_TEXT}`)), DEFAULT_PLAN, 'a byte-order mark is dropped')
})

/** A plan file's text, and the plan it is: each member overridden alone, the rest kept. */
const OVERRIDES: ReadonlyArray<readonly [string, Plan]> = [
  [
    '{"steps":[{"kind":"canary","percent":10},{"kind":"canary","percent":99.5}]}',
    planWith({
      steps: [
        { kind: 'canary', percent: 10 },
        { kind: 'canary', percent: 99.5 },
      ],
    }),
  ],
  [
    '{"steps":[{"percent":50,"kind":"shadow"},{"kind":"canary","percent":0.1}]}',
    planWith({
      steps: [
        { kind: 'shadow', percent: 50 },
        { kind: 'canary', percent: 0.1 },
      ],
    }),
  ],
  ['{"steps":[{"kind":"canary","percent":25}]}', planWith({ steps: [{ kind: 'canary', percent: 25 }] })],
  ['{"interval":"30s"}', planWith({ interval: 30_000 })],
  ['{"warmup":"0s"}', planWith({ warmup: 0 })],
  ['{"warmup":"1m30s"}', planWith({ warmup: 90_000 })],
  ['{"min_bake":"1h"}', planWith({ min_bake: 60 * MINUTE })],
  ['{"failure_limit":1}', planWith({ failure_limit: 1 })],
  ['{"stall_after":"1d"}', planWith({ stall_after: 24 * 60 * MINUTE })],
  ['{"min_labels":1000}', planWith({}, { quality: { minLabels: 1000 } })],
  // critical_from left out is never above the minimum.
  ['{"min_labels":20}', planWith({}, { quality: { minLabels: 20, criticalFrom: 20 } })],
  ['{"rollback_on_stall":true}', planWith({ rollback_on_stall: true })],
  ['{"gates":{}}', DEFAULT_PLAN],
  ['{"gates":{"server_errors":{"role":"hold"}}}', planWith({}, { server_errors: { role: 'hold' } })],
  ['{"gates":{"server_errors":{"critical":true}}}', planWith({}, { server_errors: { critical: true } })],
  [
    '{"gates":{"server_errors":{"min_requests":1000,"critical_from":100,"floor":0.02}}}',
    planWith({}, { server_errors: { minRequests: 1000, criticalFrom: 100, floor: 0.02 } }),
  ],
  ['{"gates":{"client_errors":{"role":"info","min_requests":50}}}', planWith({}, { client_errors: { role: 'info', minRequests: 50, criticalFrom: 50 } })],
  ['{"gates":{"client_errors":{"critical_from":300}}}', planWith({}, { client_errors: { criticalFrom: 300 } })],
  ['{"gates":{"latency_p95":{"min_requests":100,"limit":0.1,"floor":"5ms"}}}', planWith({}, { latency_p95: { minRequests: 100, limit: 0.1, floor: 0.005 } })],
  ['{"gates":{"latency_p99":{"role":"hold","floor":"1s"}}}', planWith({}, { latency_p99: { role: 'hold', floor: 1 } })],
  ['{"gates":{"quality":{"critical_from":10}}}', planWith({}, { quality: { criticalFrom: 10 } })],
  ['{"min_labels":500,"gates":{"quality":{"critical_from":500}}}', planWith({}, { quality: { minLabels: 500, criticalFrom: 500 } })],
  [
    '{"gates":{"shadow_disagreement":{"role":"fail","min_rows":100,"limit":0.2}}}',
    planWith({}, { shadow_disagreement: { role: 'fail', minRows: 100, limit: 0.2 } }),
  ],
  ['{"gates":{"shadow_failures":{"limit":0.01}}}', planWith({}, { shadow_failures: { limit: 0.01 } })],
  [
    '{"gates":{"prediction_drift":{"role":"fail","critical":true,"min_rows":50,"moderate":0.2,"severe":0.2,"alpha":0.01}}}',
    planWith({}, { prediction_drift: { role: 'fail', critical: true, minRows: 50, moderate: 0.2, severe: 0.2, alpha: 0.01 } }),
  ],
  ['{"gates":{"prediction_drift":{"role":"hold","critical":false}}}', planWith({}, { prediction_drift: { role: 'hold' } })],
]

t.test('each member a file names replaces the default, and only that member: a gate keeps the members it leaves out', async (t) => {
  for (const [text, plan] of OVERRIDES) t.strictSame(parsePlan(text), plan, text)
  t.strictSame(planFromJson({ min_bake: '15m', gates: { quality: { role: 'hold' } } }), planWith({ min_bake: 15 * MINUTE }, { quality: { role: 'hold' } }))
})

t.test('a plan written by formatPlan reads back as the same plan', async (t) => {
  for (const [text, plan] of OVERRIDES) t.strictSame(parsePlan(formatPlan(parsePlan(text))), plan, text)
  const everything = parsePlan(
    '{"steps":[{"kind":"shadow","percent":10},{"kind":"canary","percent":2}],"interval":"1s","warmup":"2s","min_bake":"3s","failure_limit":2,' +
      '"stall_after":"1h1m1s1ms","min_labels":7,"rollback_on_stall":true,"gates":{"latency_p99":{"floor":"7ms"}}}',
  )
  t.strictSame(parsePlan(formatPlan(everything)), everything)
  t.match(formatPlan(everything), /"stall_after": "1h1m1s1ms"/)
  // 7 / 1000 * 1000 is 7.000000000000001: written as whole milliseconds all the same.
  t.match(formatPlan(everything), /"floor": "7ms"/)
  t.match(everything.gates.quality, { minLabels: 7, criticalFrom: 7 })
})

/** A plan file, and the refusal: its code and its whole message. */
const REFUSED: ReadonlyArray<readonly [string | Buffer, string, string | RegExp]> = [
  ['{"steps":', 'INVALID_JSON', /^\(document\): is not UTF-8 JSON: /],
  [Buffer.from([0x7b, 0xff, 0x7d]), 'INVALID_JSON', /^\(document\): is not UTF-8 JSON: /],
  ['[]', 'INVALID_MEMBER', '(document): must be a plan (a JSON object), is []'],
  ['null', 'INVALID_MEMBER', '(document): must be a plan (a JSON object), is null'],
  [
    '{"rollout_on_stall":true}',
    'UNKNOWN_MEMBER',
    'rollout_on_stall: unknown member; a plan takes steps, interval, warmup, min_bake, failure_limit, stall_after, min_labels, rollback_on_stall, gates',
  ],
  // Steps.
  ['{"steps":[]}', 'INVALID_MEMBER', 'steps: must be a non-empty array of steps, is []'],
  ['{"steps":{"kind":"canary","percent":5}}', 'INVALID_MEMBER', 'steps: must be a non-empty array of steps, is {"kind":"canary","percent":5}'],
  ['{"steps":[5]}', 'INVALID_MEMBER', 'steps[0]: must be a step (a JSON object), is 5'],
  ['{"steps":[{"kind":"canary","percnt":5}]}', 'UNKNOWN_MEMBER', 'steps[0].percnt: unknown member; a step takes kind, percent'],
  ['{"steps":[{"percent":5}]}', 'INVALID_MEMBER', 'steps[0].kind: must be one of shadow, canary, is missing'],
  ['{"steps":[{"kind":"canary","percent":1},{"kind":"blue","percent":5}]}', 'INVALID_MEMBER', 'steps[1].kind: must be one of shadow, canary, is "blue"'],
  [
    '{"steps":[{"kind":"canary"}]}',
    'INVALID_MEMBER',
    'steps[0].percent: must be a canary percent above 0 and below 100 (promotion follows the last step), is missing',
  ],
  ['{"steps":[{"kind":"canary","percent":"5"}]}', 'INVALID_MEMBER', /^steps\[0\]\.percent: must be a canary percent .*, is "5"$/],
  ['{"steps":[{"kind":"canary","percent":0}]}', 'INVALID_MEMBER', /^steps\[0\]\.percent: must be a canary percent above 0 and below 100 .*, is 0$/],
  ['{"steps":[{"kind":"canary","percent":5},{"kind":"canary","percent":100}]}', 'INVALID_MEMBER', /^steps\[1\]\.percent: must be a canary percent .*, is 100$/],
  [
    '{"steps":[{"kind":"shadow","percent":0},{"kind":"canary","percent":5}]}',
    'INVALID_MEMBER',
    'steps[0].percent: must be a shadow percent above 0, up to 100, is 0',
  ],
  [
    '{"steps":[{"kind":"shadow","percent":100.5},{"kind":"canary","percent":5}]}',
    'INVALID_MEMBER',
    'steps[0].percent: must be a shadow percent above 0, up to 100, is 100.5',
  ],
  ['{"steps":[{"kind":"canary","percent":5},{"kind":"shadow","percent":100}]}', 'INVALID_MEMBER', 'steps[1].kind: a shadow step can only be the first'],
  ['{"steps":[{"kind":"shadow","percent":10},{"kind":"shadow","percent":100}]}', 'INVALID_MEMBER', 'steps[1].kind: a shadow step can only be the first'],
  [
    '{"steps":[{"kind":"canary","percent":5},{"kind":"canary","percent":5}]}',
    'INVALID_MEMBER',
    'steps[1].percent: must rise above the step before it (5), is 5',
  ],
  [
    '{"steps":[{"kind":"shadow","percent":100},{"kind":"canary","percent":20},{"kind":"canary","percent":50},{"kind":"canary","percent":10}]}',
    'INVALID_MEMBER',
    'steps[3].percent: must rise above the step before it (50), is 10',
  ],
  ['{"steps":[{"kind":"shadow","percent":100}]}', 'INVALID_MEMBER', 'steps: must hold a canary step after the shadow: promotion follows the last step'],
  // Times and limits.
  ['{"interval":"5 min"}', 'INVALID_MEMBER', 'interval: must be a duration as Prometheus writes it (30s, 5m, 2h, 1h30m), is "5 min"'],
  ['{"interval":300}', 'INVALID_MEMBER', 'interval: must be a duration as Prometheus writes it (30s, 5m, 2h, 1h30m), is 300'],
  ['{"interval":"0s"}', 'INVALID_MEMBER', 'interval: must be longer than 0s'],
  ['{"warmup":"2"}', 'INVALID_MEMBER', /^warmup: must be a duration .*, is "2"$/],
  ['{"min_bake":"2m"}', 'INVALID_MEMBER', 'min_bake: must be longer than warmup (2m): the gates judge only after the warmup'],
  ['{"warmup":"0s","min_bake":"0s"}', 'INVALID_MEMBER', 'min_bake: must be longer than 0s'],
  ['{"stall_after":"10m"}', 'INVALID_MEMBER', 'stall_after: must be longer than min_bake (10m), or every step would stall before it could advance'],
  ['{"stall_after":"1h","min_bake":"1h30m"}', 'INVALID_MEMBER', /^stall_after: must be longer than min_bake \(1h30m\)/],
  ['{"failure_limit":0}', 'INVALID_MEMBER', 'failure_limit: must be a positive integer, is 0'],
  ['{"failure_limit":2.5}', 'INVALID_MEMBER', 'failure_limit: must be a positive integer, is 2.5'],
  ['{"failure_limit":"3"}', 'INVALID_MEMBER', 'failure_limit: must be a positive integer, is "3"'],
  ['{"min_labels":-1}', 'INVALID_MEMBER', 'min_labels: must be a positive integer, is -1'],
  ['{"rollback_on_stall":"false"}', 'INVALID_MEMBER', 'rollback_on_stall: must be true or false, is "false"'],
  // Gates.
  ['{"gates":[]}', 'INVALID_MEMBER', 'gates: must be gates (a JSON object), is []'],
  [
    '{"gates":{"shadow":{}}}',
    'UNKNOWN_MEMBER',
    'gates.shadow: unknown member; gates takes server_errors, client_errors, latency_p95, latency_p99, quality, shadow_disagreement, shadow_failures, prediction_drift',
  ],
  ['{"gates":{"quality":"fail"}}', 'INVALID_MEMBER', 'gates.quality: must be the quality gate (a JSON object), is "fail"'],
  [
    '{"gates":{"latency_p95":{"rol":"hold"}}}',
    'UNKNOWN_MEMBER',
    'gates.latency_p95.rol: unknown member; the latency_p95 gate takes role, critical, min_requests, limit, floor',
  ],
  [
    '{"gates":{"server_errors":{"min_rows":100}}}',
    'UNKNOWN_MEMBER',
    'gates.server_errors.min_rows: unknown member; the server_errors gate takes role, critical, min_requests, critical_from, floor',
  ],
  [
    '{"gates":{"quality":{"min_labels":100}}}',
    'UNKNOWN_MEMBER',
    'gates.quality.min_labels: unknown member; the quality gate takes role, critical, critical_from',
  ],
  ['{"gates":{"quality":{"role":"warn"}}}', 'INVALID_MEMBER', 'gates.quality.role: must be one of fail, hold, info, is "warn"'],
  ['{"gates":{"server_errors":{"critical":"yes"}}}', 'INVALID_MEMBER', 'gates.server_errors.critical: must be true or false, is "yes"'],
  [
    '{"gates":{"prediction_drift":{"critical":true}}}',
    'INVALID_MEMBER',
    "gates.prediction_drift.critical: only a gate whose role is fail can be critical; this one's is info",
  ],
  [
    '{"gates":{"shadow_disagreement":{"critical":true}}}',
    'INVALID_MEMBER',
    "gates.shadow_disagreement.critical: only a gate whose role is fail can be critical; this one's is hold",
  ],
  [
    '{"gates":{"server_errors":{"critical":true,"role":"hold"}}}',
    'INVALID_MEMBER',
    "gates.server_errors.critical: only a gate whose role is fail can be critical; this one's is hold",
  ],
  ['{"gates":{"server_errors":{"floor":1}}}', 'INVALID_MEMBER', 'gates.server_errors.floor: must be a number above 0 and below 1, is 1'],
  ['{"gates":{"client_errors":{"floor":0}}}', 'INVALID_MEMBER', 'gates.client_errors.floor: must be a number above 0 and below 1, is 0'],
  ['{"gates":{"server_errors":{"min_requests":0}}}', 'INVALID_MEMBER', 'gates.server_errors.min_requests: must be a positive integer, is 0'],
  [
    '{"gates":{"server_errors":{"critical_from":400}}}',
    'INVALID_MEMBER',
    'gates.server_errors.critical_from: must be at most min_requests (300), is 400: it is where a confident breach counts below the minimum',
  ],
  ['{"gates":{"client_errors":{"critical_from":0}}}', 'INVALID_MEMBER', 'gates.client_errors.critical_from: must be a positive integer, is 0'],
  ['{"gates":{"latency_p95":{"limit":"0.05"}}}', 'INVALID_MEMBER', 'gates.latency_p95.limit: must be a number above 0 and below 1, is "0.05"'],
  ['{"gates":{"latency_p95":{"floor":0.001}}}', 'INVALID_MEMBER', /^gates\.latency_p95\.floor: must be a duration as Prometheus writes it .*, is 0.001$/],
  ['{"gates":{"latency_p95":{"floor":"1.5ms"}}}', 'INVALID_MEMBER', /^gates\.latency_p95\.floor: must be a duration as Prometheus writes it .*, is "1.5ms"$/],
  ['{"gates":{"latency_p99":{"floor":"0ms"}}}', 'INVALID_MEMBER', 'gates.latency_p99.floor: must be longer than 0s'],
  ['{"gates":{"latency_p99":{"min_requests":0}}}', 'INVALID_MEMBER', 'gates.latency_p99.min_requests: must be a positive integer, is 0'],
  [
    '{"gates":{"quality":{"critical_from":201}}}',
    'INVALID_MEMBER',
    'gates.quality.critical_from: must be at most min_labels (200), is 201: it is where a confident breach counts below the minimum',
  ],
  [
    '{"min_labels":100,"gates":{"quality":{"critical_from":150}}}',
    'INVALID_MEMBER',
    /^gates\.quality\.critical_from: must be at most min_labels \(100\), is 150:/,
  ],
  ['{"gates":{"shadow_disagreement":{"min_rows":1.5}}}', 'INVALID_MEMBER', 'gates.shadow_disagreement.min_rows: must be a positive integer, is 1.5'],
  ['{"gates":{"shadow_failures":{"limit":5}}}', 'INVALID_MEMBER', 'gates.shadow_failures.limit: must be a number above 0 and below 1, is 5'],
  ['{"gates":{"shadow_failures":{"limit":null}}}', 'INVALID_MEMBER', 'gates.shadow_failures.limit: must be a number above 0 and below 1, is null'],
  ['{"gates":{"prediction_drift":{"moderate":0}}}', 'INVALID_MEMBER', 'gates.prediction_drift.moderate: must be a number above 0, is 0'],
  ['{"gates":{"prediction_drift":{"severe":1e999}}}', 'INVALID_MEMBER', 'gates.prediction_drift.severe: must be a number above 0, is null'],
  ['{"gates":{"prediction_drift":{"severe":0.05}}}', 'INVALID_MEMBER', 'gates.prediction_drift.severe: must be at least moderate (0.1), is 0.05'],
  ['{"gates":{"prediction_drift":{"alpha":1}}}', 'INVALID_MEMBER', 'gates.prediction_drift.alpha: must be a number above 0 and below 1, is 1'],
  ['{"gates":{"prediction_drift":{"min_rows":0}}}', 'INVALID_MEMBER', 'gates.prediction_drift.min_rows: must be a positive integer, is 0'],
]

t.test('a plan that is not exactly what the format says is refused, naming the member and what it takes', async (t) => {
  for (const [text, code, message] of REFUSED) {
    const error = thrownBy(() => parsePlan(text))
    t.ok(error instanceof PlanError, String(text))
    t.match(error, { name: 'PlanError', code }, String(text))
    // Whole, not as a part: t.match would take a string as a substring.
    if (typeof message === 'string') t.equal(errorMessage(error), message, String(text))
    else t.match(errorMessage(error), message, String(text))
  }
})

t.test('a refusal keeps the member and the reason apart, for a caller that names the file', async (t) => {
  t.throws(() => parsePlan('{"gates":{"latency_p95":{"rol":"hold"}}}'), {
    code: 'UNKNOWN_MEMBER',
    field: 'gates.latency_p95.rol',
    reason: 'unknown member; the latency_p95 gate takes role, critical, min_requests, limit, floor',
  })
})
