// ops/prometheus/prometheus.yml: promtool accepts it (with its rule and target files), and it has
// the shape the alerts and the README rely on.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { findTool } from '../fixtures/tools.js'
import { OPS, readYaml, run, said } from './fixtures/ops.js'

type ScrapeConfig = {
  job_name: string
  metrics_path?: string
  file_sd_configs?: Array<{ files: string[] }>
  static_configs?: unknown
  relabel_configs?: Array<{ target_label?: string }>
}
type PrometheusConfig = {
  global: { scrape_interval: string; evaluation_interval: string }
  rule_files: string[]
  alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> }
  scrape_configs: ScrapeConfig[]
}
type TargetGroup = { targets: string[]; labels?: Record<string, string> }

const ENVIRONMENTS = ['dev', 'stage', 'prod'] as const

t.test('promtool check config accepts prometheus.yml, its rule files and its target files', async (t) => {
  const promtool = await findTool(t, 'promtool', 'prometheus')
  if (promtool === undefined) return
  const result = await run(promtool, ['check', 'config', '--lint=all', '--lint-fatal', 'prometheus.yml'], { cwd: join(OPS, 'prometheus') })
  t.equal(result.code, 0, said('promtool check config', result))
  t.match(result.stdout, /SUCCESS: \d+ rule files found/)
})

t.test('every 15 s, /metrics, one file_sd job per environment, Alertmanager on 127.0.0.1:9093', async (t) => {
  const config = await readYaml<PrometheusConfig>('prometheus/prometheus.yml')
  t.equal(config.global.scrape_interval, '15s')
  t.same(config.rule_files, ['rules/*.yml'])
  t.same(
    config.alerting.alertmanagers.flatMap((a) => a.static_configs.flatMap((s) => s.targets)),
    ['127.0.0.1:9093'],
  )
  t.same(
    config.scrape_configs.map((s) => s.job_name).sort(),
    ENVIRONMENTS.map((e) => `svc-${e}`).sort(),
    'the job names the environment (SvcTargetDown relies on it)',
  )
  for (const env of ENVIRONMENTS) {
    const job = config.scrape_configs.find((s) => s.job_name === `svc-${env}`)
    t.equal(job?.metrics_path, '/metrics', env)
    t.same(job?.file_sd_configs, [{ files: [`targets/${env}.yml`] }], env)
    t.equal(job?.static_configs, undefined, `${env}: targets come from file_sd only`)
  }
})

t.test('no environment target label: the service sets it, a target label would become exported_environment', async (t) => {
  const config = await readYaml<PrometheusConfig>('prometheus/prometheus.yml')
  for (const job of config.scrape_configs) {
    t.notOk(
      (job.relabel_configs ?? []).some((r) => r.target_label === 'environment'),
      job.job_name,
    )
  }
  const files = (await readdir(join(OPS, 'prometheus', 'targets'))).sort()
  t.same(files, ['dev.yml', 'prod.yml', 'stage.yml'])
  for (const file of files) {
    const groups = await readYaml<TargetGroup[]>(join('prometheus', 'targets', file))
    t.ok(groups.length > 0 && groups.every((g) => g.targets.length > 0), `${file} lists instances`)
    t.notOk(
      groups.some((g) => g.labels !== undefined && 'environment' in g.labels),
      `${file} sets no environment label`,
    )
  }
})
