// rollout.json: read strictly, written in one member order, and read back as what was written.
import t from 'tap'
import { errorMessage } from '../../../lib/core/errors.js'
import { DEFAULT_PLAN, formatPlan, planToJson } from '../../../lib/tools/rollout/plan.js'
import { formatState, parseState, StateError, stateFromJson, stateToJson } from '../../../lib/tools/rollout/state.js'

const MANIFEST = { default_version: '1', versions: ['1', '2'], canary: { version: '2', percent: 5 } }

/** A state as a pass leaves it: on step 2, converged, a rollback pending, two verdicts, failures counted. */
const fileValue = () => ({
  format_version: 1,
  model: 'iris',
  version: '2',
  state: 'stalled',
  reason: 'quality: 120 of 200 labelled rows',
  step: 2,
  step_started_at: '2025-03-01T12:10:00.000Z',
  waiting_since: '2025-03-01T12:05:00.000Z',
  started_at: '2025-03-01T11:00:00.000Z',
  intent: { action: 'rollback', step: 2, manifest: MANIFEST, at: '2025-03-01T14:30:00.000Z', reason: 'server_errors failed 3 times on step 2' },
  failures: {
    server_errors: { count: 3, last_at: '2025-03-01T14:30:00.000Z', critical: false },
    quality: { count: 1, last_at: '2025-03-01T13:00:00.000Z', critical: true },
  },
  counters: {
    passes_total: 40,
    failures_total: 4,
    stalls_total: 1,
    rollbacks_total: 2,
    promotions_total: 5,
    verdicts_total: { pass: 100, fail: 4, inconclusive: 60 },
  },
  verdicts: [
    {
      at: '2025-03-01T14:25:00.000Z',
      step: 2,
      gate: 'server_errors',
      role: 'fail',
      verdict: 'fail',
      critical: false,
      reason: 'the Wilson lower bound 0.031 exceeds 0.02',
      values: { canary_requests: 2000, canary_errors: 80, lower: 0.031, default_ratio: 0 },
    },
    {
      at: '2025-03-01T14:25:00.000Z',
      step: 2,
      gate: 'latency_p99',
      role: 'fail',
      verdict: 'inconclusive',
      critical: false,
      reason: 'no data',
      values: { default_p99: 'NaN', ratio: '+Inf', floor: '-Inf', canary_requests: 0 },
    },
  ],
  plan: planToJson(DEFAULT_PLAN),
})

const text = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

/** What `fn` throws; undefined when it returns. */
const thrownBy = (fn: () => unknown): unknown => {
  try {
    fn()
  } catch (error: unknown) {
    return error
  }
  return undefined
}

t.test('a state file is read with its times as milliseconds and Prometheus’s non-finite values as numbers', async (t) => {
  const state = parseState(Buffer.from(text(fileValue())))
  t.match(state, {
    model: 'iris',
    version: '2',
    state: 'stalled',
    step: 2,
    step_started_at: Date.parse('2025-03-01T12:10:00.000Z'),
    waiting_since: Date.parse('2025-03-01T12:05:00.000Z'),
    started_at: Date.parse('2025-03-01T11:00:00.000Z'),
    intent: { action: 'rollback', step: 2, manifest: MANIFEST, at: Date.parse('2025-03-01T14:30:00.000Z') },
    failures: {
      server_errors: { count: 3, last_at: Date.parse('2025-03-01T14:30:00.000Z'), critical: false },
      quality: { count: 1, last_at: Date.parse('2025-03-01T13:00:00.000Z'), critical: true },
    },
  })
  t.strictSame(state.plan, DEFAULT_PLAN)
  t.strictSame(state.verdicts[1]?.values, { default_p99: Number.NaN, ratio: Number.POSITIVE_INFINITY, floor: Number.NEGATIVE_INFINITY, canary_requests: 0 })
  t.ok(Object.isFrozen(state) && Object.isFrozen(state.verdicts[0]?.values) && Object.isFrozen(state.intent?.manifest))
})

t.test('what formatState writes is the file read: the same bytes back, members in the format’s order', async (t) => {
  const written = text(fileValue())
  t.equal(formatState(parseState(written)), written)
  const state = parseState(written)
  t.strictSame(parseState(formatState(state)), state)
  t.strictSame(stateFromJson(stateToJson(state)), state)
})

t.test('members in another order are read, and written back in the format’s order', async (t) => {
  const value = fileValue()
  const reversed: Record<string, unknown> = Object.fromEntries(Object.entries(value).reverse())
  reversed['counters'] = Object.fromEntries(Object.entries(value.counters).reverse())
  reversed['failures'] = { quality: value.failures.quality, server_errors: value.failures.server_errors }
  reversed['intent'] = Object.fromEntries(Object.entries(value.intent).reverse())
  reversed['verdicts'] = value.verdicts.map((verdict) => Object.fromEntries(Object.entries(verdict).reverse()))
  t.equal(formatState(parseState(text(reversed))), text(value))
})

t.test('a state with nothing pending, nothing failed, no verdict and not converged reads back as written', async (t) => {
  const value = { ...fileValue(), state: 'running', reason: null, step_started_at: null, intent: null, failures: {}, verdicts: [] }
  const state = parseState(text(value))
  t.match(state, { reason: null, step_started_at: null, intent: null })
  t.equal(formatState(state), text(value))
})

t.test('a value of any name is kept: the drift gate names values after class labels, which may be any text', async (t) => {
  const value = fileValue()
  value.verdicts[0]!.values = JSON.parse('{"canary_count_Iris setosa":3,"P95":1,"":2,"__proto__":4}')
  const state = parseState(text(value))
  t.strictSame(Object.entries(state.verdicts[0]?.values ?? {}), [
    ['canary_count_Iris setosa', 3],
    ['P95', 1],
    ['', 2],
    ['__proto__', 4],
  ])
  t.equal(Object.getPrototypeOf(state.verdicts[0]?.values), Object.prototype, '__proto__ a value, not the prototype')
  t.equal(formatState(state), text(value))
})

t.test('the plan is written whole, as formatPlan writes it', async (t) => {
  const written = JSON.parse(formatState(parseState(text(fileValue()))))
  t.equal(`${JSON.stringify(written.plan, null, 2)}\n`, formatPlan(DEFAULT_PLAN))
})

type Mutation = (value: Record<string, any>) => void

/** A change to a valid file, and the refusal: its code and whole message. */
const REFUSED: ReadonlyArray<readonly [string, Mutation, string, string | RegExp]> = [
  ['an unknown member', (v) => (v['stage'] = 1), 'UNKNOWN_MEMBER', /^stage: unknown member; a rollout state takes format_version, model, version, state, /],
  ['format 2', (v) => (v['format_version'] = 2), 'UNSUPPORTED_FORMAT', 'format_version: must be 1, is 2'],
  ['no format', (v) => delete v['format_version'], 'UNSUPPORTED_FORMAT', 'format_version: must be 1, is missing'],
  ['a model name with a slash', (v) => (v['model'] = 'a/b'), 'INVALID_MEMBER', 'model: must be a model name matching /^[a-z0-9][a-z0-9_-]{0,63}$/, is "a/b"'],
  ['a version that is a number', (v) => (v['version'] = 2), 'INVALID_MEMBER', 'version: must be a version matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, is 2'],
  [
    'an unknown state',
    (v) => (v['state'] = 'done'),
    'INVALID_MEMBER',
    'state: must be one of running, paused, stalled, promoted, rolled_back, aborted, is "done"',
  ],
  ['a reason that is a number', (v) => (v['reason'] = 3), 'INVALID_MEMBER', 'reason: must be a string or null, is 3'],
  ['a step past the plan', (v) => (v['step'] = 5), 'INVALID_MEMBER', 'step: must be a step index of the plan, 0 to 4, is 5'],
  ['a negative step', (v) => (v['step'] = -1), 'INVALID_MEMBER', 'step: must be a step index of the plan, 0 to 4, is -1'],
  [
    'a time without milliseconds',
    (v) => (v['waiting_since'] = '2025-03-01T12:05:00Z'),
    'INVALID_MEMBER',
    /^waiting_since: must be an ISO 8601 time .*, is "2025-03-01T12:05:00Z"$/,
  ],
  ['a time that is no date', (v) => (v['started_at'] = '2025-02-30T12:00:00.000Z'), 'INVALID_MEMBER', /^started_at: must be an ISO 8601 time/],
  ['a time as a number', (v) => (v['step_started_at'] = 1740830400000), 'INVALID_MEMBER', /^step_started_at: must be an ISO 8601 time .*, is 1740830400000$/],
  ['an intent that is a string', (v) => (v['intent'] = 'rollback'), 'INVALID_MEMBER', 'intent: must be an intent (a JSON object), is "rollback"'],
  [
    'an intent member unknown',
    (v) => (v['intent'].when = 1),
    'UNKNOWN_MEMBER',
    'intent.when: unknown member; an intent takes action, step, manifest, at, reason',
  ],
  [
    'an unknown action',
    (v) => (v['intent'].action = 'pause'),
    'INVALID_MEMBER',
    'intent.action: must be one of set_split, promote, rollback, abort, is "pause"',
  ],
  ['an intent step past the plan', (v) => (v['intent'].step = 9), 'INVALID_MEMBER', 'intent.step: must be a step index of the plan, 0 to 4, is 9'],
  ['an intent without a manifest', (v) => delete v['intent'].manifest, 'INVALID_MEMBER', 'intent.manifest: must be a manifest (a JSON object), is missing'],
  [
    'an intent manifest svc would not serve',
    (v) => (v['intent'].manifest = { default_version: '1', versoins: [] }),
    'INVALID_MEMBER',
    'intent.manifest: is not a manifest svc serves: versoins: is not a member of a manifest (default_version, versions, canary, shadow, log)',
  ],
  [
    'an intent manifest whose rollout svc refuses',
    (v) => (v['intent'].manifest = { default_version: '1', canary: { version: '2', percent: 5 } }),
    'INVALID_MEMBER',
    'intent.manifest: holds a rollout svc refuses: canary.version: "2" is not listed in versions',
  ],
  ['an intent without a time', (v) => delete v['intent'].at, 'INVALID_MEMBER', /^intent\.at: must be an ISO 8601 time .*, is missing$/],
  ['an intent without a reason', (v) => (v['intent'].reason = null), 'INVALID_MEMBER', 'intent.reason: must be a string, is null'],
  ['an intent once finished', (v) => (v['state'] = 'rolled_back'), 'INVALID_MEMBER', 'intent: must be null once the rollout is rolled_back'],
  ['a rollback to another step', (v) => (v['intent'].step = 1), 'INVALID_MEMBER', 'intent.step: must be 2 for a rollback from step 2'],
  [
    'a split two steps on',
    (v) => Object.assign(v['intent'], { action: 'set_split', step: 4 }),
    'INVALID_MEMBER',
    'intent.step: must be 2 or 3 for a set_split from step 2',
  ],
  ['failures as a list', (v) => (v['failures'] = []), 'INVALID_MEMBER', 'failures: must be failures by gate (a JSON object), is []'],
  [
    'failures of an unknown gate',
    (v) => (v['failures'].latency = { count: 1, last_at: '2025-03-01T13:00:00.000Z' }),
    'UNKNOWN_MEMBER',
    'failures.latency: unknown member; failures by gate takes server_errors, client_errors, latency_p95, latency_p99, quality, shadow_disagreement, shadow_failures, prediction_drift',
  ],
  [
    'failures of a gate whose role is not fail',
    (v) => (v['failures'].prediction_drift = { count: 1, last_at: '2025-03-01T13:00:00.000Z', critical: false }),
    'INVALID_MEMBER',
    "failures.prediction_drift: must be left out: only a fail-role gate counts failures, and the plan's role for prediction_drift is info",
  ],
  ['a failure count of 0', (v) => (v['failures'].quality.count = 0), 'INVALID_MEMBER', 'failures.quality.count: must be a positive integer, is 0'],
  [
    'a failure member unknown',
    (v) => (v['failures'].quality.first_at = 0),
    'UNKNOWN_MEMBER',
    'failures.quality.first_at: unknown member; a gate’s failures takes count, last_at, critical',
  ],
  [
    'a failure without critical',
    (v) => delete v['failures'].quality.critical,
    'INVALID_MEMBER',
    'failures.quality.critical: must be true or false, is missing',
  ],
  ['a failure without its time', (v) => delete v['failures'].quality.last_at, 'INVALID_MEMBER', /^failures\.quality\.last_at: must be an ISO 8601 time/],
  ['counters missing', (v) => delete v['counters'], 'INVALID_MEMBER', 'counters: must be counters (a JSON object), is missing'],
  ['a counter unknown', (v) => (v['counters'].errors_total = 1), 'UNKNOWN_MEMBER', /^counters\.errors_total: unknown member; counters takes passes_total, /],
  ['a counter missing', (v) => delete v['counters'].stalls_total, 'INVALID_MEMBER', 'counters.stalls_total: must be a non-negative integer, is missing'],
  ['a counter negative', (v) => (v['counters'].passes_total = -1), 'INVALID_MEMBER', 'counters.passes_total: must be a non-negative integer, is -1'],
  [
    'a verdict count unknown',
    (v) => (v['counters'].verdicts_total.skip = 1),
    'UNKNOWN_MEMBER',
    'counters.verdicts_total.skip: unknown member; counts by verdict takes pass, fail, inconclusive',
  ],
  [
    'holds counted as a verdict',
    (v) => (v['counters'].verdicts_total.hold = 3),
    'UNKNOWN_MEMBER',
    'counters.verdicts_total.hold: unknown member; counts by verdict takes pass, fail, inconclusive',
  ],
  [
    'a verdict count fractional',
    (v) => (v['counters'].verdicts_total.fail = 0.5),
    'INVALID_MEMBER',
    'counters.verdicts_total.fail: must be a non-negative integer, is 0.5',
  ],
  ['verdicts not a list', (v) => (v['verdicts'] = {}), 'INVALID_MEMBER', 'verdicts: must be an array of at most 50 verdicts, is {}'],
  [
    '51 verdicts',
    (v) => (v['verdicts'] = Array.from({ length: 51 }, () => v['verdicts'][0])),
    'INVALID_MEMBER',
    /^verdicts: must be an array of at most 50 verdicts, is \[/,
  ],
  ['a verdict that is null', (v) => (v['verdicts'][1] = null), 'INVALID_MEMBER', 'verdicts[1]: must be a verdict (a JSON object), is null'],
  [
    'a verdict member unknown',
    (v) => (v['verdicts'][0].value = 1),
    'UNKNOWN_MEMBER',
    'verdicts[0].value: unknown member; a verdict takes at, step, gate, role, verdict, critical, reason, values',
  ],
  [
    'a verdict of an unknown gate',
    (v) => (v['verdicts'][0].gate = 'errors'),
    'INVALID_MEMBER',
    /^verdicts\[0\]\.gate: must be one of server_errors, .*, prediction_drift, is "errors"$/,
  ],
  ['an unknown verdict', (v) => (v['verdicts'][1].verdict = 'ok'), 'INVALID_MEMBER', 'verdicts[1].verdict: must be one of pass, fail, inconclusive, is "ok"'],
  [
    'hold as a verdict',
    (v) => (v['verdicts'][1].verdict = 'hold'),
    'INVALID_MEMBER',
    'verdicts[1].verdict: must be one of pass, fail, inconclusive, is "hold"',
  ],
  [
    'a role not the plan’s',
    (v) => (v['verdicts'][0].role = 'hold'),
    'INVALID_MEMBER',
    'verdicts[0].role: must be fail, the plan\'s role for server_errors, is "hold"',
  ],
  ['a verdict without a role', (v) => delete v['verdicts'][0].role, 'INVALID_MEMBER', /^verdicts\[0\]\.role: must be fail, .*, is missing$/],
  ['critical not a boolean', (v) => (v['verdicts'][0].critical = 'no'), 'INVALID_MEMBER', 'verdicts[0].critical: must be true or false, is "no"'],
  [
    'critical on an inconclusive',
    (v) => (v['verdicts'][1].critical = true),
    'INVALID_MEMBER',
    'verdicts[1].critical: must be false for a verdict of inconclusive, is true',
  ],
  ['a verdict step past the plan', (v) => (v['verdicts'][1].step = 7), 'INVALID_MEMBER', 'verdicts[1].step: must be a step index of the plan, 0 to 4, is 7'],
  ['a verdict without a reason', (v) => delete v['verdicts'][1].reason, 'INVALID_MEMBER', 'verdicts[1].reason: must be a string, is missing'],
  ['a verdict time', (v) => (v['verdicts'][1].at = 'now'), 'INVALID_MEMBER', /^verdicts\[1\]\.at: must be an ISO 8601 time .*, is "now"$/],
  ['values as a list', (v) => (v['verdicts'][0].values = [1]), 'INVALID_MEMBER', 'verdicts[0].values: must be values by name (a JSON object), is [1]'],
  [
    'a value as other text',
    (v) => (v['verdicts'][0].values.lower = 'Inf'),
    'INVALID_MEMBER',
    'verdicts[0].values.lower: must be a number, "NaN", "+Inf" or "-Inf", is "Inf"',
  ],
  ['a value that is null', (v) => (v['verdicts'][0].values.lower = null), 'INVALID_MEMBER', /^verdicts\[0\]\.values\.lower: must be a number, .*, is null$/],
  ['a value as an object', (v) => (v['verdicts'][0].values.lower = {}), 'INVALID_MEMBER', /^verdicts\[0\]\.values\.lower: must be a number, /],
]

t.test('a state file that is not exactly what the format says is refused, naming the member', async (t) => {
  for (const [what, mutate, code, message] of REFUSED) {
    const value = structuredClone(fileValue())
    mutate(value)
    const error = thrownBy(() => parseState(text(value)))
    t.ok(error instanceof StateError, what)
    t.match(error, { name: 'StateError', code }, what)
    if (typeof message === 'string') t.equal(errorMessage(error), message, what)
    else t.match(errorMessage(error), message, what)
  }
})

t.test('a document that is not a JSON object is refused as a whole', async (t) => {
  t.throws(() => parseState('{"format_version":'), { code: 'INVALID_JSON', field: '(document)', reason: /^is not UTF-8 JSON: / })
  t.throws(() => parseState(Buffer.from([0x7b, 0xff, 0x7d])), { code: 'INVALID_JSON', field: '(document)' })
  t.throws(() => parseState('[]'), { code: 'INVALID_MEMBER', field: '(document)', reason: 'must be a rollout state (a JSON object), is []' })
})

t.test('a plan it holds is refused as the plan would be, under plan.', async (t) => {
  const withPlan = (plan: unknown) => text({ ...fileValue(), plan })
  t.throws(() => parseState(withPlan({ ...planToJson(DEFAULT_PLAN), gates: { quality: { rol: 'fail' } } })), {
    name: 'StateError',
    code: 'UNKNOWN_MEMBER',
    field: 'plan.gates.quality.rol',
    reason: 'unknown member; the quality gate takes role, critical, critical_from',
  })
  t.throws(() => parseState(withPlan(null)), { code: 'INVALID_MEMBER', field: 'plan', reason: 'must be a plan (a JSON object), is null' })
  t.throws(() => parseState(withPlan({ steps: [{ kind: 'canary', percent: 5 }] })), {
    code: 'INVALID_MEMBER',
    message: 'step: must be a step index of the plan, 0 to 0, is 2',
  })
})
