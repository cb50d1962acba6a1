// A rollout's plan: documented defaults, every member overridable on its own, and any other document
// refused with the member's path and what it takes.
import t from 'tap'
import { errorMessage } from '../../../lib/core/errors.js'
import { DEFAULT_PLAN, formatPlan, type Plan, PlanError, parsePlan, planFromJson } from '../../../lib/tools/rollout/plan.js'

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
      "relative_margin": 1,
      "min_margin": 0.01
    },
    "client_errors": {
      "role": "fail",
      "critical": false,
      "relative_margin": 1,
      "min_margin": 0.01
    },
    "latency_p95": {
      "role": "fail",
      "critical": false,
      "relative_margin": 0.5,
      "min_margin": "1ms",
      "min_requests": 400
    },
    "latency_p99": {
      "role": "fail",
      "critical": false,
      "relative_margin": 0.5,
      "min_margin": "1ms",
      "min_requests": 2000
    },
    "quality": {
      "role": "fail",
      "critical": false,
      "accuracy_margin": 0.05,
      "rmse_ratio": 1.25,
      "mae_ratio": 1.25
    },
    "shadow": {
      "role": "fail",
      "critical": false,
      "min_rows": 500,
      "max_disagreement": 0.05,
      "max_failure_share": 0.05
    },
    "drift": {
      "role": "info",
      "critical": false,
      "min_rows": 500,
      "max_psi": 0.25
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
  t.match(DEFAULT_PLAN, { min_labels: 200, rollback_on_stall: false })
  t.equal(DEFAULT_PLAN.gates.latency_p95.min_margin, 1, 'milliseconds in memory')
  t.ok(Object.isFrozen(DEFAULT_PLAN) && Object.isFrozen(DEFAULT_PLAN.steps[0]) && Object.isFrozen(DEFAULT_PLAN.gates.quality))
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
  ['{"min_labels":1000}', planWith({ min_labels: 1000 })],
  ['{"rollback_on_stall":true}', planWith({ rollback_on_stall: true })],
  ['{"gates":{}}', DEFAULT_PLAN],
  ['{"gates":{"server_errors":{"role":"hold"}}}', planWith({}, { server_errors: { role: 'hold' } })],
  ['{"gates":{"server_errors":{"critical":true}}}', planWith({}, { server_errors: { critical: true } })],
  ['{"gates":{"server_errors":{"relative_margin":0,"min_margin":0.02}}}', planWith({}, { server_errors: { relative_margin: 0, min_margin: 0.02 } })],
  ['{"gates":{"client_errors":{"role":"info","min_margin":0.5}}}', planWith({}, { client_errors: { role: 'info', min_margin: 0.5 } })],
  [
    '{"gates":{"latency_p95":{"relative_margin":1,"min_margin":"5ms","min_requests":100}}}',
    planWith({}, { latency_p95: { relative_margin: 1, min_margin: 5, min_requests: 100 } }),
  ],
  ['{"gates":{"latency_p99":{"role":"hold","min_margin":"1s"}}}', planWith({}, { latency_p99: { role: 'hold', min_margin: 1000 } })],
  [
    '{"gates":{"quality":{"accuracy_margin":0.02,"rmse_ratio":1.1,"mae_ratio":1.5}}}',
    planWith({}, { quality: { accuracy_margin: 0.02, rmse_ratio: 1.1, mae_ratio: 1.5 } }),
  ],
  [
    '{"gates":{"shadow":{"min_rows":100,"max_disagreement":0.2,"max_failure_share":0.01}}}',
    planWith({}, { shadow: { min_rows: 100, max_disagreement: 0.2, max_failure_share: 0.01 } }),
  ],
  [
    '{"gates":{"drift":{"role":"fail","critical":true,"min_rows":50,"max_psi":0.1}}}',
    planWith({}, { drift: { role: 'fail', critical: true, min_rows: 50, max_psi: 0.1 } }),
  ],
  ['{"gates":{"drift":{"role":"hold","critical":false}}}', planWith({}, { drift: { role: 'hold' } })],
]

t.test('each member a file names replaces the default, and only that member: a gate keeps the members it leaves out', async (t) => {
  for (const [text, plan] of OVERRIDES) t.strictSame(parsePlan(text), plan, text)
  t.strictSame(planFromJson({ min_bake: '15m', gates: { quality: { role: 'hold' } } }), planWith({ min_bake: 15 * MINUTE }, { quality: { role: 'hold' } }))
})

t.test('a plan written by formatPlan reads back as the same plan', async (t) => {
  for (const [text, plan] of OVERRIDES) t.strictSame(parsePlan(formatPlan(parsePlan(text))), plan, text)
  const everything = parsePlan(
    '{"steps":[{"kind":"shadow","percent":10},{"kind":"canary","percent":2}],"interval":"1s","warmup":"2s","min_bake":"3s","failure_limit":2,' +
      '"stall_after":"1h1m1s1ms","min_labels":7,"rollback_on_stall":true,"gates":{"latency_p99":{"min_margin":"250ms"}}}',
  )
  t.strictSame(parsePlan(formatPlan(everything)), everything)
  t.match(formatPlan(everything), /"stall_after": "1h1m1s1ms"/)
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
    '{"gates":{"latency":{}}}',
    'UNKNOWN_MEMBER',
    'gates.latency: unknown member; gates takes server_errors, client_errors, latency_p95, latency_p99, quality, shadow, drift',
  ],
  ['{"gates":{"quality":"fail"}}', 'INVALID_MEMBER', 'gates.quality: must be the quality gate (a JSON object), is "fail"'],
  [
    '{"gates":{"latency_p95":{"rol":"hold"}}}',
    'UNKNOWN_MEMBER',
    'gates.latency_p95.rol: unknown member; the latency_p95 gate takes role, critical, relative_margin, min_margin, min_requests',
  ],
  [
    '{"gates":{"server_errors":{"min_requests":100}}}',
    'UNKNOWN_MEMBER',
    'gates.server_errors.min_requests: unknown member; the server_errors gate takes role, critical, relative_margin, min_margin',
  ],
  ['{"gates":{"quality":{"role":"warn"}}}', 'INVALID_MEMBER', 'gates.quality.role: must be one of fail, hold, info, is "warn"'],
  ['{"gates":{"server_errors":{"critical":"yes"}}}', 'INVALID_MEMBER', 'gates.server_errors.critical: must be true or false, is "yes"'],
  ['{"gates":{"drift":{"critical":true}}}', 'INVALID_MEMBER', "gates.drift.critical: only a gate whose role is fail can be critical; this one's is info"],
  [
    '{"gates":{"server_errors":{"critical":true,"role":"hold"}}}',
    'INVALID_MEMBER',
    "gates.server_errors.critical: only a gate whose role is fail can be critical; this one's is hold",
  ],
  ['{"gates":{"server_errors":{"min_margin":1}}}', 'INVALID_MEMBER', 'gates.server_errors.min_margin: must be a number above 0 and below 1, is 1'],
  ['{"gates":{"client_errors":{"min_margin":0}}}', 'INVALID_MEMBER', 'gates.client_errors.min_margin: must be a number above 0 and below 1, is 0'],
  ['{"gates":{"client_errors":{"relative_margin":-1}}}', 'INVALID_MEMBER', 'gates.client_errors.relative_margin: must be a number from 0 up, is -1'],
  ['{"gates":{"latency_p95":{"relative_margin":"0.5"}}}', 'INVALID_MEMBER', 'gates.latency_p95.relative_margin: must be a number from 0 up, is "0.5"'],
  [
    '{"gates":{"latency_p95":{"min_margin":0.001}}}',
    'INVALID_MEMBER',
    /^gates\.latency_p95\.min_margin: must be a duration as Prometheus writes it .*, is 0.001$/,
  ],
  ['{"gates":{"latency_p99":{"min_margin":"0ms"}}}', 'INVALID_MEMBER', 'gates.latency_p99.min_margin: must be longer than 0s'],
  ['{"gates":{"latency_p99":{"min_requests":0}}}', 'INVALID_MEMBER', 'gates.latency_p99.min_requests: must be a positive integer, is 0'],
  ['{"gates":{"quality":{"accuracy_margin":-0.05}}}', 'INVALID_MEMBER', 'gates.quality.accuracy_margin: must be a number above 0 and below 1, is -0.05'],
  ['{"gates":{"quality":{"rmse_ratio":1}}}', 'INVALID_MEMBER', 'gates.quality.rmse_ratio: must be a number above 1, is 1'],
  ['{"gates":{"quality":{"mae_ratio":0.8}}}', 'INVALID_MEMBER', 'gates.quality.mae_ratio: must be a number above 1, is 0.8'],
  ['{"gates":{"shadow":{"min_rows":1.5}}}', 'INVALID_MEMBER', 'gates.shadow.min_rows: must be a positive integer, is 1.5'],
  ['{"gates":{"shadow":{"max_disagreement":5}}}', 'INVALID_MEMBER', 'gates.shadow.max_disagreement: must be a number above 0 and below 1, is 5'],
  ['{"gates":{"shadow":{"max_failure_share":null}}}', 'INVALID_MEMBER', 'gates.shadow.max_failure_share: must be a number above 0 and below 1, is null'],
  ['{"gates":{"drift":{"max_psi":0}}}', 'INVALID_MEMBER', 'gates.drift.max_psi: must be a number above 0, is 0'],
  ['{"gates":{"drift":{"max_psi":1e999}}}', 'INVALID_MEMBER', 'gates.drift.max_psi: must be a number above 0, is null'],
  ['{"gates":{"drift":{"min_rows":0}}}', 'INVALID_MEMBER', 'gates.drift.min_rows: must be a positive integer, is 0'],
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
    reason: 'unknown member; the latency_p95 gate takes role, critical, relative_margin, min_margin, min_requests',
  })
})
