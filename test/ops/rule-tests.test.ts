// promtool test rules over ops/prometheus/tests/, one file per concern, run as an operator runs it:
// `promtool test rules ops/prometheus/tests/*.yml` from the repository, on the files as written.
// Each test group carries prometheus.yml's external labels (the runbook base) and each expected
// alert its full runbook_url, so nothing is added here; the checks below hold the files to
// prometheus.yml and to every alert, in every environment: firing just over the threshold with its
// full labels and annotations, silent just under it, silent before for: elapses, silent without
// traffic.
import { readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import t from 'tap'
import { findTool } from '../fixtures/tools.js'
import { OPS, readYaml, run, said } from './fixtures/ops.js'
import { alertRules, externalLabels, ruleFiles, runbookUrl, type AlertRule } from './fixtures/rules.js'

type ExpAlert = { exp_labels?: Record<string, string>; exp_annotations?: Record<string, string> }
type AlertTest = { eval_time: string; alertname: string; exp_alerts?: ExpAlert[] | null }
type TestGroup = {
  interval?: string
  external_labels?: Record<string, string>
  input_series?: Array<{ series: string; values: string }>
  alert_rule_test?: AlertTest[]
  promql_expr_test?: unknown[]
}
type TestFile = { rule_files: string[]; evaluation_interval?: string; tests: TestGroup[] }

const TESTS_DIR = join(OPS, 'prometheus', 'tests')
const REPO = join(OPS, '..')
const testFiles = async (): Promise<string[]> => (await readdir(TESTS_DIR)).filter((f) => f.endsWith('.yml')).sort()
const loadAll = async (): Promise<Array<[string, TestFile]>> =>
  Promise.all((await testFiles()).map(async (f) => [f, await readYaml<TestFile>(join('prometheus', 'tests', f))] as [string, TestFile]))

/**
 * A threshold stated as a number: "the 1% threshold", "the threshold of 0.900", "(threshold: a rise
 * of 0.1)"; not "the threshold of its reference accuracy minus 0.05" nor "of 1.25 times its
 * reference", which leave the reader to work it out. The Watchdog has none.
 */
const THRESHOLD_AS_NUMBER =
  /\d(?:[\d.]*\d)?(?:%|ms|s|m)? threshold\b|\bthreshold(?::| of)? (?:a rise of )?\d+(?:\.\d+)?(?:%|ms|s|m)?(?![\d.]*\d| times)|\(threshold: none\)/

const UNITS: Readonly<Record<string, number>> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 }
const seconds = (duration: string): number => {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(duration)
  if (m === null) throw new Error(`unsupported duration ${duration}`)
  return Number(m[1]) * (UNITS[m[2] as string] as number)
}

t.test('plain promtool test rules ops/prometheus/tests/*.yml passes, from the repository', async (t) => {
  const promtool = await findTool(t, 'promtool', 'prometheus')
  if (promtool === undefined) return
  // What the shell makes of the glob: every file, in order, relative to the repository.
  const files = (await testFiles()).map((f) => relative(REPO, join(TESTS_DIR, f)))
  t.ok(files.length >= 6, 'one file per concern')
  const result = await run(promtool, ['test', 'rules', ...files], { cwd: REPO, timeoutMs: 120_000 })
  t.equal(result.code, 0, said(`promtool test rules ${files.join(' ')}`, result))
  for (const file of files) t.match(result.stdout + result.stderr, `Unit Testing:  ${file}\n  SUCCESS`, `${file} passes`)
})

t.test("every test group carries prometheus.yml's external labels, and every expected alert its runbook_url", async (t) => {
  const labels = await externalLabels()
  for (const [file, doc] of await loadAll())
    doc.tests.forEach((group, i) => {
      t.same(group.external_labels, labels, `${file} group ${i + 1}: external_labels as in prometheus.yml`)
      for (const test of group.alert_rule_test ?? [])
        for (const a of test.exp_alerts ?? [])
          t.equal(
            a.exp_annotations?.['runbook_url'],
            runbookUrl(labels.runbook_base, test.alertname),
            `${file} ${test.alertname} at ${test.eval_time}: runbook_url`,
          )
    })
})

t.test('every test group sets its interval, and every rule file is under test', async (t) => {
  const tested = new Set<string>()
  for (const [file, doc] of await loadAll()) {
    t.ok(doc.tests.length > 0, `${file} has tests`)
    doc.tests.forEach((group, i) => {
      t.ok(group.interval, `${file} group ${i + 1} sets interval`)
    })
    for (const rf of doc.rule_files) tested.add(rf.replace(/^\.\.\/rules\//, ''))
  }
  t.same([...tested].sort(), await ruleFiles())
})

t.test('every alert and environment: fires with full labels and annotations, and stays silent when it should', async (t) => {
  const groups = (await loadAll()).flatMap(([, doc]) => doc.tests)
  // An environment's series carry environment="…" themselves, or the scrape job svc-… names it.
  const mentions = (group: TestGroup, environment: string | undefined) =>
    environment === undefined ||
    (group.input_series ?? []).some((s) => s.series.includes(`environment="${environment}"`) || s.series.includes(`job="svc-${environment}"`))
  const firing = (test: AlertTest, rule: AlertRule, environment: string | undefined) =>
    test.alertname === rule.alert &&
    (test.exp_alerts ?? []).some(
      (a) => a.exp_labels?.['alertname'] === rule.alert && (environment === undefined || a.exp_labels?.['environment'] === environment),
    )
  const silent = (test: AlertTest, rule: AlertRule) => test.alertname === rule.alert && (test.exp_alerts ?? []).length === 0
  const isIdle = (group: TestGroup) => (group.input_series ?? []).length > 0 && (group.input_series ?? []).every((s) => /^0x\d+$/.test(s.values))

  for (const rule of await alertRules()) {
    const environment = rule.labels?.['environment']
    const name = `${rule.alert}${environment === undefined ? '' : ` ${environment}`}`
    const mine = groups.filter((g) => mentions(g, environment) || rule.alert === 'Watchdog')
    const fires = mine.flatMap((g) => (g.alert_rule_test ?? []).filter((a) => firing(a, rule, environment)))
    t.ok(fires.length > 0, `${name}: a test expects it to fire`)
    for (const a of fires.flatMap((f) => f.exp_alerts ?? [])) {
      if (a.exp_labels?.['alertname'] !== rule.alert) continue
      t.equal(a.exp_labels['severity'], rule.labels?.['severity'], `${name}: expected labels include severity`)
      t.same(Object.keys(a.exp_annotations ?? {}).sort(), ['description', 'runbook_url', 'summary'], `${name}: expected annotations are complete`)
      t.match(a.exp_annotations?.['description'], THRESHOLD_AS_NUMBER, `${name}: the description, as promtool renders it, gives its threshold as a number`)
    }
    if (rule.alert === 'Watchdog') continue // the one alert that is never silent

    t.ok(
      mine.some(
        (g) => !isIdle(g) && (g.alert_rule_test ?? []).some((a) => silent(a, rule)) && !(g.alert_rule_test ?? []).some((a) => firing(a, rule, environment)),
      ),
      `${name}: silent just under the threshold`,
    )
    if (rule.for !== undefined) {
      const forSeconds = seconds(rule.for)
      const before = mine.some((g) => {
        const tests = g.alert_rule_test ?? []
        const firstFiring = Math.min(...tests.filter((a) => firing(a, rule, environment)).map((a) => seconds(a.eval_time)))
        return tests.some((a) => silent(a, rule) && seconds(a.eval_time) < firstFiring && seconds(a.eval_time) >= forSeconds - 60)
      })
      t.ok(before, `${name}: silent within a minute before for: ${rule.for} elapses, firing after`)
    }
    if (rule.file === 'http.yml')
      t.ok(
        mine.some((g) => isIdle(g) && (g.alert_rule_test ?? []).some((a) => silent(a, rule))),
        `${name}: silent at zero traffic`,
      )
  }
})
