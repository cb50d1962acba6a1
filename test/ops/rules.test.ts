// The rule files: promtool's lint, the seed's alert table, and the annotations every alert owes its
// reader. Their behaviour is tested by promtool itself, in rule-tests.test.ts.
import { join } from 'node:path'
import t from 'tap'
import { findTool } from '../fixtures/tools.js'
import { OPS, run, said } from './fixtures/ops.js'
import { alertRules, recordingRules, ruleFiles } from './fixtures/rules.js'

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
  'SvcTargetDown',
  'Watchdog',
]

// The seed's table: threshold and severity per alert and environment.
const TABLE: Readonly<Record<string, Readonly<Record<string, readonly [threshold: string, severity: string]>>>> = {
  SvcLatencyHigh: { prod: ['0.75', 'page'], stage: ['1', 'page'], dev: ['1.5', 'warning'] },
  SvcErrorRateHigh: { prod: ['0.01', 'page'], stage: ['0.03', 'page'], dev: ['0.05', 'warning'] },
  SvcSaturationHigh: { prod: ['25', 'page'], stage: ['15', 'warning'], dev: ['10', 'warning'] },
}

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
    t.match(rule.annotations?.['runbook_url'], new RegExp(`^https://.+/ops/runbooks/${rule.alert}\\.md$`), name)
  }
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
  for (const rule of rules) t.match(rule.record, /^environment:[a-z0-9_]+:[a-z0-9_]+$/)
  const expr = (name: string) => rules.find((r) => r.record === name)?.expr.trim()
  t.equal(expr('environment:http_requests:rate5m'), 'sum by (environment) (rate(http_requests_total[5m]))')
  t.equal(
    expr('environment:http_request_duration_seconds:p95_rate5m'),
    'histogram_quantile(0.95, sum by (le, environment) (rate(http_request_duration_seconds_bucket[5m])))',
  )
  t.ok(expr('environment:http_requests_5xx:ratio_rate5m'))
})
