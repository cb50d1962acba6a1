// ops/grafana: the provisioned dashboard's structure, each panel query checked by promtool (loaded
// as a recording rule), and the provisioning files that load it.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { stringify } from 'yaml'
import { findTool } from '../fixtures/tools.js'
import { allPanels, concrete, loadDashboard } from './fixtures/dashboard.js'
import { readYaml, run, said, tempDir } from './fixtures/ops.js'

/** Grafana's own variable syntax, not a template literal. */
const DATASOURCE = '$' + '{datasource}'

// What the issue asks the dashboard to show, by the metric each panel must query.
const REQUIRED: Readonly<Record<string, RegExp>> = {
  'request rate': /rate\(http_requests_total|environment:http_requests:rate5m/,
  'error ratio': /environment:http_requests_5xx:ratio_rate5m/,
  'latency P50': /histogram_quantile\(0\.5, [^;]*http_request_duration_seconds_bucket/,
  'latency P95': /histogram_quantile\(0\.95, [^;]*http_request_duration_seconds_bucket/,
  'latency P99': /histogram_quantile\(0\.99, [^;]*http_request_duration_seconds_bucket/,
  'in-flight': /http_requests_in_flight/,
  'exceptions by type': /by \(exception_type\) \(rate\(http_exceptions_total/,
  'upstream requests': /svc_upstream_requests_total/,
  'upstream latency': /svc_upstream_request_duration_seconds_bucket/,
  'health checks': /svc_health_check_status/,
  'model prediction rate': /svc_model_prediction_requests_total/,
  'model prediction latency': /svc_model_prediction_duration_seconds_bucket/,
  'PSI per feature': /by \(model, feature\) \(svc_drift_psi/,
  'prediction PSI per output': /by \(model, output\) \(svc_drift_prediction_psi/,
  'prediction drift alert rate': /by \(model, output, severity\) \(increase\(svc_drift_prediction_alerts_total/,
  'fleet PSI per feature': /^fleet:svc_drift_psi:increase\{/,
  'fleet PSI per output': /^fleet:svc_drift_prediction_psi:increase\{/,
  // Per build too: two builds of one version (a rebuilt reference) are never folded together.
  'fleet rows over the range': /^min by \(model, version, build\) \(fleet:svc_drift_rows:increase\{/,
  'fleet answers over the range': /fleet:svc_drift_prediction_rows:increase\{/,
  'out-of-range rate': /^sum by \(model, feature, side, environment\) \(rate\(svc_drift_out_of_range_total\{[^}]*\}\[5m\]\)\)$/,
  'realized accuracy': /^fleet:svc_model_feedback_accuracy:ratio_increase1h\{/,
  'accuracy alert limit': /^fleet:svc_model_reference_quality:max\{metric="accuracy",[^}]*\} - 0\.05$/,
  'recall per class': /^fleet_class:svc_model_feedback_recall:ratio_increase1h\{/,
  'realized RMSE': /^fleet:svc_model_feedback_rmse:increase1h\{/,
  'RMSE alert limit': /^1\.25 \* fleet:svc_model_reference_quality:max\{metric="rmse",/,
  'label coverage': /^fleet:svc_model_feedback_coverage:ratio_increase1h\{/,
  'refused share': /^fleet_reason:svc_feedback_refused:ratio_increase1h\{/,
}

t.test('the dashboard: stable uid, datasource and environment variables, no __inputs', async (t) => {
  const dashboard = await loadDashboard()
  t.equal(dashboard.uid, 'svc-overview')
  t.equal(dashboard.__inputs, undefined, 'provisioned, not imported: no __inputs')
  const variable = (name: string) => dashboard.templating.list.find((v) => v.name === name)
  t.match(variable('datasource'), { type: 'datasource', query: 'prometheus' })
  t.match(variable('environment'), { type: 'query', datasource: { uid: DATASOURCE } })
  const ids = allPanels(dashboard).map((p) => p.id)
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  for (const panel of allPanels(dashboard).filter((p) => p.type !== 'row')) {
    t.same(panel.datasource, { type: 'prometheus', uid: DATASOURCE }, `${panel.title}: through the datasource variable`)
    for (const target of panel.targets ?? []) {
      t.same(target.datasource, panel.datasource, `${panel.title} ${target.refId}`)
      if (!target.expr.startsWith('up{')) t.match(target.expr, /environment="\$environment"/, `${panel.title} ${target.refId}: filtered by environment`)
    }
  }
})

t.test('the dashboard shows what the issue lists', async (t) => {
  const exprs = allPanels(await loadDashboard()).flatMap((p) => (p.targets ?? []).map((x) => x.expr))
  for (const [what, pattern] of Object.entries(REQUIRED))
    t.ok(
      exprs.some((e) => pattern.test(e)),
      what,
    )
})

t.test('promtool check rules accepts every panel query', async (t) => {
  const promtool = await findTool(t, 'promtool', 'prometheus')
  if (promtool === undefined) return
  const rules = allPanels(await loadDashboard()).flatMap((p) =>
    (p.targets ?? []).map((target) => ({ record: `dashboard:panel_${p.id}:${target.refId.toLowerCase()}`, expr: concrete(target.expr, 'prod') })),
  )
  t.ok(rules.length > 15, `${rules.length} queries`)
  const file = join(await tempDir(t, 'dashboard'), 'dashboard-queries.yml')
  await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules }] }))
  const result = await run(promtool, ['check', 'rules', file])
  t.equal(result.code, 0, said('promtool check rules', result))
  t.match(result.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`))
})

t.test('provisioning: the Prometheus data source the dashboard defaults to, and the dashboard folder', async (t) => {
  type Datasources = { apiVersion: number; datasources: Array<{ uid: string; type: string; url: string; jsonData?: { timeInterval?: string } }> }
  type Providers = { apiVersion: number; providers: Array<{ type: string; options: { path: string }; allowUiUpdates?: boolean }> }
  const ds = await readYaml<Datasources>('grafana/provisioning/datasources/prometheus.yaml')
  const dashboards = await readYaml<Providers>('grafana/provisioning/dashboards/svc.yaml')
  const dashboard = await loadDashboard()
  t.equal(ds.apiVersion, 1)
  const defaultUid = (dashboard.templating.list.find((v) => v.name === 'datasource') as { current?: { value?: string } } | undefined)?.current?.value
  t.match(ds.datasources, [{ uid: defaultUid, type: 'prometheus', url: 'http://127.0.0.1:9090' }])
  t.equal(ds.datasources[0]?.jsonData?.timeInterval, '15s', 'the scrape interval, so $__rate_interval covers four scrapes')
  t.equal(dashboards.apiVersion, 1)
  t.match(dashboards.providers, [{ type: 'file', options: { path: '/var/lib/grafana/dashboards/svc' }, allowUiUpdates: false }])
})
