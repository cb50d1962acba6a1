// The rule files: promtool's lint, the seed's alert table, the fleet drift rules, and the annotations
// every alert owes its reader. Their behaviour is tested by promtool itself, in rule-tests.test.ts;
// here promtool also checks that no drift alert fires once per instance.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { findTool } from '../fixtures/tools.js'
import { OPS, run, said, tempDir } from './fixtures/ops.js'
import { alertRules, allRules, RULES_DIR, RUNBOOK_TEMPLATE, recordingRules, ruleFiles, runbookBase } from './fixtures/rules.js'

const ALERTS = [
  'SvcLatencyHigh',
  'SvcErrorRateHigh',
  'SvcSaturationHigh',
  'SvcDriftModerate',
  'SvcDriftSevere',
  'SvcDriftSpike',
  'SvcDriftStale',
  'SvcPredictionDriftModerate',
  'SvcPredictionDriftSevere',
  'SvcPredictionDriftSpike',
  'SvcCanaryErrorRatioHigh',
  'SvcCanaryLatencyHigh',
  'SvcShadowDisagreementHigh',
  'SvcShadowFailing',
  'SvcModelAccuracyLow',
  'SvcModelRmseHigh',
  'SvcFeedbackRefusedHigh',
  'SvcCanaryQualityLow',
  'SvcPayloadLogLossHigh',
  'SvcTargetDown',
  'Watchdog',
]

// The seed's table: threshold and severity per alert and environment.
const TABLE: Readonly<Record<string, Readonly<Record<string, readonly [threshold: string, severity: string]>>>> = {
  SvcLatencyHigh: {
    prod: ['0.75', 'page'],
    stage: ['1', 'page'],
    dev: ['1.5', 'warning'],
  },
  SvcErrorRateHigh: {
    prod: ['0.01', 'page'],
    stage: ['0.03', 'page'],
    dev: ['0.05', 'warning'],
  },
  SvcSaturationHigh: {
    prod: ['25', 'page'],
    stage: ['15', 'warning'],
    dev: ['10', 'warning'],
  },
}

// The fleet drift alerts: the same names, thresholds, for-durations and severities as when they
// read each instance's PSI, now on the fleet PSI with its 500-row minimum, or aggregated by model.
const DRIFT_ALERTS: Readonly<Record<string, Readonly<{ expr: RegExp; for?: string; severity: string }>>> = {
  SvcDriftModerate: {
    expr: /^fleet:svc_drift_psi:increase >= 0\.1 and fleet:svc_drift_psi:increase < 0\.25 and on \(model, version, build, feature, environment\) fleet:svc_drift_rows:increase >= 500$/,
    for: '15m',
    severity: 'warning',
  },
  SvcDriftSevere: {
    expr: /^fleet:svc_drift_psi:increase >= 0\.25 and on \(model, version, build, feature, environment\) fleet:svc_drift_rows:increase >= 500$/,
    for: '5m',
    severity: 'page',
  },
  SvcDriftSpike: {
    expr: /^max by \(model, feature, environment\) \(fleet:svc_drift_psi:increase - min_over_time\(fleet:svc_drift_psi:increase\[30m\]\) >= 0\.1 and on \(model, version, build, feature, environment\) fleet:svc_drift_rows:increase >= 500\) or sum by \(model, feature, environment\) \(increase\(svc_drift_alerts_total\{severity="spike"\}\[30m\]\)\) > 0$/,
    severity: 'warning',
  },
  SvcPredictionDriftModerate: {
    expr: /^fleet:svc_drift_prediction_psi:increase >= 0\.1 and fleet:svc_drift_prediction_psi:increase < 0\.25 and on \(model, version, build, output, environment\) fleet:svc_drift_prediction_rows:increase >= 500$/,
    for: '15m',
    severity: 'warning',
  },
  SvcPredictionDriftSevere: {
    expr: /^fleet:svc_drift_prediction_psi:increase >= 0\.25 and on \(model, version, build, output, environment\) fleet:svc_drift_prediction_rows:increase >= 500$/,
    for: '5m',
    severity: 'page',
  },
  SvcPredictionDriftSpike: {
    expr: /^max by \(model, output, environment\) \(fleet:svc_drift_prediction_psi:increase - min_over_time\(fleet:svc_drift_prediction_psi:increase\[30m\]\) >= 0\.1 and on \(model, version, build, output, environment\) fleet:svc_drift_prediction_rows:increase >= 500\) or sum by \(model, output, environment\) \(increase\(svc_drift_prediction_alerts_total\{severity="spike"\}\[30m\]\)\) > 0$/,
    severity: 'warning',
  },
  SvcDriftStale: {
    expr: /^max by \(model, environment\) \(time\(\) - svc_drift_last_check_timestamp_seconds\) > 120$/,
    for: '1m',
    severity: 'warning',
  },
}

/** The fleet rules of one kind of drift, as the issue specifies them: every instance summed, the range in the increase only. */
const fleetRules = (kind: 'feature' | 'output'): Record<string, string> => {
  const metric = kind === 'feature' ? 'svc_drift' : 'svc_drift_prediction'
  const by = `model, version, build, ${kind}, environment`
  const share = `fleet_bin:${metric}_share:ratio_increase`
  const reference = `fleet_bin:${metric}_reference_share:max`
  const floored = (x: string) => `clamp_min(${x}, 0.0001)`
  return {
    [`fleet_bin:${metric}_bin:increase`]: `sum by (model, version, build, ${kind}, bin, environment) (increase(${metric}_bin_total[1h]))`,
    [`fleet:${metric}_rows:increase`]: `sum by (${by}) (fleet_bin:${metric}_bin:increase)`,
    [share]: `fleet_bin:${metric}_bin:increase / on (${by}) group_left fleet:${metric}_rows:increase`,
    [reference]: `max by (model, version, build, ${kind}, bin, environment) (${metric}_reference_share)`,
    [`fleet:${metric}_psi:increase`]: `sum by (${by}) ((${floored(share)} - ${floored(reference)}) * (ln(${floored(share)}) - ln(${floored(reference)})))`,
  }
}

/** An expression with its layout dropped: single spaces, none just inside parentheses. */
const plain = (expr: string): string => expr.trim().replaceAll(/\s+/g, ' ').replaceAll(/\( /g, '(').replaceAll(/ \)/g, ')')

t.test('promtool check rules accepts every rule file, lint clean', async (t) => {
  const promtool = await findTool(t, 'promtool', 'prometheus')
  if (promtool === undefined) return
  const files = await ruleFiles()
  const result = await run(promtool, ['check', 'rules', '--lint=all', '--lint-fatal', ...files], { cwd: join(OPS, 'prometheus', 'rules') })
  t.equal(result.code, 0, said('promtool check rules', result))
  t.notMatch(result.stdout + result.stderr, /lint|warning/i, 'no lint findings')
})

t.test('the alerts are exactly the ones the runbooks and routing know', async (t) => {
  t.same([...new Set((await alertRules()).map((r) => r.alert))].sort(), [...ALERTS].sort())
})

t.test('HTTP alerts follow the seed table: one rule per environment, its threshold and severity', async (t) => {
  const rules = await alertRules()
  for (const [alert, byEnvironment] of Object.entries(TABLE)) {
    const mine = rules.filter((r) => r.alert === alert)
    t.equal(mine.length, 3, `${alert}: one rule per environment`)
    for (const [environment, [threshold, severity]] of Object.entries(byEnvironment)) {
      const rule = mine.find((r) => r.expr.includes(`environment="${environment}"`))
      t.ok(rule, `${alert} has a ${environment} rule`)
      t.match(rule?.expr, new RegExp(`\\} > ${threshold.replace('.', '\\.')}(\\s|$)`), `${alert} ${environment}: > ${threshold}`)
      t.same(rule?.labels, { environment, severity }, `${alert} ${environment}: ${severity}`)
      t.equal(rule?.for, '5m')
    }
  }
})

t.test('the error ratio alert has a low-traffic guard', async (t) => {
  for (const rule of (await alertRules()).filter((r) => r.alert === 'SvcErrorRateHigh')) {
    t.match(rule.expr, /and on \(environment\)\s+environment:http_requests:rate5m >= 0\.1/)
  }
})

t.test('every alert has a severity, a summary, a templated description with its threshold and a runbook', async (t) => {
  for (const rule of await alertRules()) {
    const name = `${rule.alert} ${rule.labels?.['environment'] ?? ''}`.trim()
    t.match(rule.labels?.['severity'], /^(page|warning|none)$/, name)
    t.same(Object.keys(rule.annotations ?? {}).sort(), ['description', 'runbook_url', 'summary'], name)
    t.match(rule.annotations?.['summary'], /\S/, name)
    t.match(rule.annotations?.['description'], /\{\{ \$(value|labels|externalURL)[^}]*\}\}/, `${name}: description is templated`)
    t.match(rule.annotations?.['description'], /threshold/, `${name}: description states the threshold`)
    t.equal(rule.annotations?.['runbook_url'], RUNBOOK_TEMPLATE(rule.alert), `${name}: runbook_url is the one template`)
  }
  t.match(await runbookBase(), /^https:\/\/.+\/ops\/runbooks$/, 'prometheus.yml sets the runbook base')
})

t.test('every aggregation keeps environment', async (t) => {
  const rules = [...(await alertRules()), ...(await recordingRules())]
  for (const rule of rules) {
    for (const [, kind, labels] of rule.expr.matchAll(/\b(by|without)\s*\(([^)]*)\)/g)) {
      const list = (labels ?? '').split(',').map((l) => l.trim())
      if (kind === 'by') t.ok(list.includes('environment'), `${rule.alert ?? rule.record}: by (${labels})`)
      else t.notOk(list.includes('environment'), `${rule.alert ?? rule.record}: without (${labels})`)
    }
  }
})

t.test('recording rules are named level:metric:operations and compute what the issue specifies', async (t) => {
  const rules = await recordingRules()
  for (const rule of rules) t.match(rule.record, /^(environment|fleet|fleet_bin|fleet_pair|fleet_class|fleet_reason):[a-z0-9_]+:[a-z0-9_]+$/)
  const expr = (name: string) => rules.find((r) => r.record === name)?.expr.trim()
  t.equal(expr('environment:http_requests:rate5m'), 'sum by (environment) (rate(http_requests_total[5m]))')
  t.equal(
    expr('environment:http_request_duration_seconds:p95_rate5m'),
    'histogram_quantile(0.95, sum by (le, environment) (rate(http_request_duration_seconds_bucket[5m])))',
  )
  t.ok(expr('environment:http_requests_5xx:ratio_rate5m'))
})

t.test('the fleet drift rules: exactly the specified expressions, every instance summed, the range in one place', async (t) => {
  const rules = (await recordingRules()).filter((r) => r.file === 'drift-fleet.yml')
  const expected = { ...fleetRules('feature'), ...fleetRules('output') }
  t.same(rules.map((r) => r.record).sort(), Object.keys(expected).sort(), 'the ten fleet rules, in drift-fleet.yml')
  for (const rule of rules) {
    t.equal(plain(rule.expr), expected[rule.record], rule.record)
    t.match(rule.record, /^fleet(_bin)?:/, `${rule.record}: level fleet or fleet_bin`)
    for (const [, kind, labels] of rule.expr.matchAll(/\b(by|without|on|ignoring)\s*\(([^)]*)\)/g)) {
      const list = (labels ?? '').split(',').map((l) => l.trim())
      t.ok(kind === 'by' || kind === 'on', `${rule.record}: ${kind} names what it keeps`)
      t.notOk(list.includes('instance') || list.includes('job'), `${rule.record}: ${kind} (${labels}) keeps no instance or job`)
      t.ok(list.includes('build'), `${rule.record}: ${kind} (${labels}) keeps build: two builds of a version are never pooled`)
    }
  }
  const psi = rules.filter((r) => /^[a-z_]+:svc_drift(_prediction)?_psi:/.test(r.record)).map((r) => r.record)
  t.same(psi.sort(), ['fleet:svc_drift_prediction_psi:increase', 'fleet:svc_drift_psi:increase'], 'only the PSI rules are named after PSI')
  const ranged = rules.filter((r) => /\[[^\]]+\]/.test(r.expr))
  t.same(
    ranged.map((r) => r.record).sort(),
    ['fleet_bin:svc_drift_bin:increase', 'fleet_bin:svc_drift_prediction_bin:increase'],
    'a range only in the two increase rules',
  )
  for (const rule of ranged)
    t.same(
      [...rule.expr.matchAll(/\[([^\]]+)\]/g)].map((m) => m[1]),
      ['1h'],
      `${rule.record}: [1h]`,
    )
})

t.test('the drift alerts read the fleet rules: same names, thresholds and severities, and no instance', async (t) => {
  const rules = (await alertRules()).filter((r) => r.file === 'drift.yml')
  t.same(rules.map((r) => r.alert).sort(), Object.keys(DRIFT_ALERTS).sort())
  for (const rule of rules) {
    const spec = DRIFT_ALERTS[rule.alert]
    t.match(plain(rule.expr), spec?.expr ?? /^$/, `${rule.alert}: expression`)
    for (const [, labels] of rule.expr.matchAll(/\bon\s*\(([^)]*)\)/g)) t.match(labels, /\bbuild\b/, `${rule.alert}: on (${labels}) matches the build`)
    t.equal(rule.for, spec?.for, `${rule.alert}: for`)
    t.same(rule.labels, { severity: spec?.severity }, `${rule.alert}: severity`)
    for (const [name, text] of Object.entries(rule.annotations ?? {}))
      t.notMatch(text, /\$labels\.(instance|job)\b/, `${rule.alert}: ${name} templates no instance or job`)
  }
})

t.test('no drift alert or fleet rule carries instance or job: three instances, each alert fires once (promtool)', async (t) => {
  const promtool = await findTool(t, 'promtool', 'prometheus')
  if (promtool === undefined) return
  const alerts = [...new Set((await alertRules()).filter((r) => r.file === 'drift.yml').map((r) => r.alert))].sort()
  const records = (await recordingRules()).filter((r) => r.file === 'drift-fleet.yml').map((r) => r.record)
  // Every instance sees the same rows: a feature and an output at 0.75 / 0.25 (PSI 0.27, severe),
  // another of each at 0.7 / 0.3 (PSI 0.17, moderate), 400 rows a minute each, spikes counted by
  // every scheduler from 5m, and every scheduler stopped at 5m. Each alert has fired by 20m.
  const instances = ['10.0.1.10:8000', '10.0.1.11:8000', '10.0.1.12:8000']
  const labels = (instance: string) => `environment="prod",instance="${instance}",job="svc-prod"`
  const twoBins = (metric: string, kind: string, model: string, name: string, counts: readonly [number, number]) =>
    instances.flatMap((instance) =>
      counts.flatMap((count, bin) => [
        {
          series: `${metric}_bin_total{model="${model}",version="1",build="0123456789ab",${kind}="${name}",bin="${bin}",${labels(instance)}}`,
          values: `0+${count}x30`,
        },
        {
          series: `${metric}_reference_share{model="${model}",version="1",build="0123456789ab",${kind}="${name}",bin="${bin}",${labels(instance)}}`,
          values: '0.5x30',
        },
      ]),
    )
  const inputSeries = [
    ...twoBins('svc_drift', 'feature', 'iris', 'petal_length', [300, 100]),
    ...twoBins('svc_drift', 'feature', 'iris', 'sepal_width', [280, 120]),
    ...twoBins('svc_drift_prediction', 'output', 'iris', 'species', [300, 100]),
    ...twoBins('svc_drift_prediction', 'output', 'cars', 'miles_per_gallon', [280, 120]),
    ...instances.flatMap((instance) => [
      {
        series: `svc_drift_alerts_total{model="iris",feature="petal_length",severity="spike",${labels(instance)}}`,
        values: '0x5 1x25',
      },
      {
        series: `svc_drift_prediction_alerts_total{model="iris",output="species",severity="spike",${labels(instance)}}`,
        values: '0x5 1x25',
      },
      {
        series: `svc_drift_last_check_timestamp_seconds{model="iris",${labels(instance)}}`,
        values: '0+60x5 300x25',
      },
    ]),
  ]
  const everyFleetSeries = `{__name__=~"fleet(_bin)?:.+"}`
  const file = join(await tempDir(t, 'fleet-alerts'), 'fleet-alerts.test.yml')
  const test = {
    rule_files: [join(RULES_DIR, 'drift-fleet.yml'), join(RULES_DIR, 'drift.yml')],
    evaluation_interval: '1m',
    group_eval_order: ['svc-drift-fleet', 'svc-drift'],
    tests: [
      {
        interval: '1m',
        input_series: inputSeries,
        promql_expr_test: [
          {
            expr: 'count by (alertname) (ALERTS{alertstate="firing"})',
            eval_time: '20m',
            exp_samples: alerts.map((alertname) => ({
              labels: `{alertname="${alertname}"}`,
              value: 1,
            })),
          },
          {
            expr: 'ALERTS{instance!=""} or ALERTS{job!=""}',
            eval_time: '20m',
            exp_samples: [],
          },
          {
            expr: `count(count by (__name__) (${everyFleetSeries}))`,
            eval_time: '20m',
            exp_samples: [{ labels: '{}', value: records.length }],
          },
          {
            expr: `${everyFleetSeries.replace('}', ',instance!=""}')} or ${everyFleetSeries.replace('}', ',job!=""}')}`,
            eval_time: '20m',
            exp_samples: [],
          },
        ],
      },
    ],
  }
  await writeFile(file, stringify(test))
  const result = await run(promtool, ['test', 'rules', file], {
    timeoutMs: 60_000,
  })
  t.equal(result.code, 0, said(`promtool test rules: ${alerts.join(', ')} fire once each for ${instances.length} instances`, result))
})

t.test('the quality rules: every instance summed, no offset, the window in the increase rules only, alerts per fleet', async (t) => {
  const rules = (await allRules()).filter((r) => r.file === 'quality.yml')
  t.same(
    rules
      .filter((r) => r.alert !== undefined)
      .map((r) => r.alert)
      .sort(),
    ['SvcCanaryQualityLow', 'SvcFeedbackRefusedHigh', 'SvcModelAccuracyLow', 'SvcModelRmseHigh'],
  )
  const records = rules.filter((r) => r.record !== undefined).map((r) => r.record)
  for (const name of [
    'fleet:svc_model_feedback_accuracy:ratio_increase1h',
    'fleet_class:svc_model_feedback_recall:ratio_increase1h',
    'fleet_class:svc_model_feedback_precision:ratio_increase1h',
    'fleet:svc_model_feedback_mae:increase1h',
    'fleet:svc_model_feedback_rmse:increase1h',
    'fleet:svc_model_feedback_bias:increase1h',
    'fleet:svc_model_feedback_rows:increase1h',
    'fleet:svc_model_feedback_coverage:ratio_increase1h',
  ])
    t.ok(records.includes(name), `${name} is recorded`)
  for (const rule of rules) {
    const name = rule.alert ?? rule.record
    t.notMatch(rule.expr, /\boffset\b/, `${name}: no offset`)
    for (const [, kind, labels] of rule.expr.matchAll(/\b(by|without|on|ignoring)\s*\(([^)]*)\)/g)) {
      const list = (labels ?? '').split(',').map((l) => l.trim())
      t.ok(kind === 'by' || kind === 'on', `${name}: ${kind} names what it keeps`)
      t.notOk(list.includes('instance') || list.includes('job'), `${name}: ${kind} (${labels}) keeps no instance or job`)
    }
    for (const [, range] of rule.expr.matchAll(/\[([^\]]+)\]/g)) {
      t.equal(range, '1h', `${name}: the window is 1h`)
      t.match(rule.expr.trim(), /^sum by \([^)]*\) \(increase\(/, `${name}: a range only in an increase rule`)
    }
    if (rule.alert === undefined) continue
    t.same(rule.labels, { severity: 'warning' }, `${rule.alert}: a warning`)
    t.equal(rule.for, '10m', `${rule.alert}: for 10m`)
    for (const [key, text] of Object.entries(rule.annotations ?? {}))
      t.notMatch(text, /\$labels\.(instance|job)\b/, `${rule.alert}: ${key} templates no instance or job`)
  }
})
