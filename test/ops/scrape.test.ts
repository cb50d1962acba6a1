// A real scrape: the service and a real Prometheus loaded with ops/prometheus/prometheus.yml and
// every rule file, on loopback. Only what a test cannot wait for is changed: intervals of 1 s
// instead of 15 s, this service as the only dev target, and no Alertmanager.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { eventually, startPrometheus } from '../fixtures/prometheus.js'
import { testRoutes } from '../fixtures/routes.js'
import { findTool } from '../fixtures/tools.js'
import { allPanels, concrete, loadDashboard } from './fixtures/dashboard.js'
import { OPS, readYaml } from './fixtures/ops.js'
import { allRules, recordingRules } from './fixtures/rules.js'

type ScrapeConfig = { job_name: string; file_sd_configs: Array<{ files: string[] }> }
type Config = { global: Record<string, string>; rule_files: string[]; alerting?: unknown; scrape_configs: ScrapeConfig[] }
type RuleGroup = { name: string; rules: Array<{ name: string; type: string; health: string; lastError?: string }> }
type TargetInfo = { labels: Record<string, string>; health: string; lastError: string; scrapePool: string }

t.test('Prometheus scrapes the service, ingests its series with their labels, and evaluates every rule', async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  const { base } = await startApp(t, { SVC_ENVIRONMENT: 'dev' }, testRoutes(20))
  const target = new URL(base).host

  const config = await readYaml<Config>('prometheus/prometheus.yml')
  config.global = { ...config.global, scrape_interval: '1s', evaluation_interval: '1s' }
  config.rule_files = config.rule_files.map((glob) => join(OPS, 'prometheus', glob))
  delete config.alerting
  const prometheus = await startPrometheus(t, binary, config, async (dir) => {
    // The real target files' structure, with this service as the one dev instance.
    for (const job of config.scrape_configs) {
      const file = join(dir, `${job.job_name}.yml`)
      await writeFile(file, JSON.stringify(job.job_name === 'svc-dev' ? [{ targets: [target] }] : []))
      job.file_sd_configs = [{ files: [file] }]
    }
  })

  const targets = await eventually('the dev target is up', async () => {
    const { activeTargets } = await prometheus.api<{ activeTargets: TargetInfo[] }>('targets')
    return activeTargets.find((a) => a.scrapePool === 'svc-dev' && a.health === 'up')
  })
  t.same(targets.labels, { instance: target, job: 'svc-dev' }, 'no environment target label')

  // Traffic after the first scrape, so every rate sees counters grow; some of it fails with 500.
  const traffic = async () => {
    for (let i = 0; i < 20; i++) await (await fetch(base)).arrayBuffer()
    for (let i = 0; i < 3; i++) await (await fetch(`${base}/test/throw`)).arrayBuffer()
    await (await fetch(`${base}/test/slow`)).arrayBuffer()
    await (await fetch(`${base}/nope`)).arrayBuffer()
  }
  await traffic()
  const timer = setInterval(() => void traffic().catch(() => {}), 500)
  t.teardown(() => clearInterval(timer))

  const errors = await eventually('5xx counted', async () => {
    const r = await prometheus.query('http_requests_total{status="500"}')
    return r.length > 0 ? r : undefined
  })
  t.same(errors[0]?.metric, {
    __name__: 'http_requests_total',
    method: 'GET',
    endpoint: '/test/throw',
    status: '500',
    environment: 'dev',
    instance: target,
    job: 'svc-dev',
  })
  const buckets = await prometheus.query('http_request_duration_seconds_bucket{endpoint="/",le="0.75"}')
  t.same(buckets[0]?.metric, {
    __name__: 'http_request_duration_seconds_bucket',
    method: 'GET',
    endpoint: '/',
    environment: 'dev',
    le: '0.75',
    instance: target,
    job: 'svc-dev',
  })
  t.same(await prometheus.query('{exported_environment!=""}'), [], 'no series has exported_environment')
  // Prometheus's own per-target series (up, scrape_*) are the only ones without it.
  t.same(await prometheus.query('count({job="svc-dev",environment!="dev",__name__!~"up|scrape_.+"})'), [], 'every service series carries environment="dev"')

  // Each recording rule produces a number for dev (P95 needs rates, so it comes last).
  for (const { record } of await recordingRules()) {
    const [sample] = await eventually(`${record} recorded`, async () => {
      const r = await prometheus.query(`${record}{environment="dev"} > 0`)
      return r.length > 0 ? r : undefined
    })
    t.ok(Number(sample?.value[1]) > 0, `${record} = ${sample?.value[1]}`)
  }

  clearInterval(timer)

  const groups = await eventually('every rule evaluated', async () => {
    const { groups } = await prometheus.api<{ groups: RuleGroup[] }>('rules')
    return groups.every((g) => g.rules.every((r) => r.health !== 'unknown')) ? groups : undefined
  })
  for (const group of groups) {
    for (const rule of group.rules) t.equal(rule.health, 'ok', `${group.name} ${rule.name}${rule.lastError ? `: ${rule.lastError}` : ''}`)
  }
  t.equal(groups.flatMap((g) => g.rules).length, (await allRules()).length, 'every rule loaded')
})

t.test('every dashboard query runs against the real Prometheus', async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  const config = await readYaml<Config>('prometheus/prometheus.yml')
  config.rule_files = config.rule_files.map((glob) => join(OPS, 'prometheus', glob))
  delete config.alerting
  config.scrape_configs = []
  const prometheus = await startPrometheus(t, binary, config)
  for (const panel of allPanels(await loadDashboard())) {
    for (const target of panel.targets ?? []) {
      const expr = concrete(target.expr, 'prod')
      await t.resolves(prometheus.query(expr), `${panel.title} ${target.refId}: ${expr}`)
    }
  }
})
