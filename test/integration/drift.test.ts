// Drift end to end: prediction traffic from the load generator through the real HTTP endpoint, a
// check on node-cron or on demand, and what /metrics and the model detail then show.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { runLoadgen, type LoadgenOptions } from '../../lib/tools/loadgen/loadgen.js'
import { startApp, type Running } from '../fixtures/app.js'
import { loadgenOptions } from '../fixtures/loadgen.js'
import { sample } from '../fixtures/metrics-text.js'

const IRIS_FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

const load = (running: Running, options: Partial<LoadgenOptions>): ReturnType<typeof runLoadgen> => runLoadgen(loadgenOptions(running.base, options), () => {})

const metricsText = async (running: Running): Promise<string> => (await fetch(`${running.base}/metrics`)).text()
const psiOf = (text: string, feature: string): number | undefined => sample(text, 'svc_drift_psi', { model: 'iris', feature, environment: 'dev' })

t.test('shifted traffic through POST /api/v1/predict raises PSI to severe on /metrics and in the model detail', async (t) => {
  const running = await startApp(t)
  const drift = running.app.drift
  if (drift === undefined) throw new Error('drift monitoring is on by default')

  const baseline = await load(running, { seed: 11 })
  t.same([baseline.failed, baseline.skipped, baseline.rows], [0, 0, 1000], '20 requests of 50 rows')
  await drift.scheduler.trigger()
  let text = await metricsText(running)
  for (const feature of IRIS_FEATURES) t.ok((psiOf(text, feature) as number) < 0.1, `unshifted ${feature}: PSI ${psiOf(text, feature)?.toFixed(4)}`)
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'iris', environment: 'dev' }), 1000)
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'cars', result: 'insufficient_data', environment: 'dev' }), 1, 'no traffic for cars')
  // svc loadgen replays the rows the reference was built from, so the answers match too.
  const unshiftedAnswers = sample(text, 'svc_drift_prediction_psi', { model: 'iris', output: 'species', environment: 'dev' }) as number
  t.ok(unshiftedAnswers < 0.1, `replayed iris rows: the answers' PSI ${unshiftedAnswers.toFixed(4)} stays below 0.1`)

  const shifted = await load(running, { shift: 1.5, features: ['petal_length', 'petal_width'], seed: 12 })
  t.equal(shifted.failed, 0)
  await drift.scheduler.trigger()
  text = await metricsText(running)
  for (const feature of ['petal_length', 'petal_width']) {
    t.ok((psiOf(text, feature) as number) >= 0.25, `shifted ${feature}: PSI ${psiOf(text, feature)?.toFixed(3)}`)
    t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature, severity: 'severe', environment: 'dev' }), 1)
    t.equal(sample(text, 'svc_drift_alerts_total', { model: 'iris', feature, severity: 'spike', environment: 'dev' }), 1)
  }
  t.ok((psiOf(text, 'sepal_width') as number) < 0.1, 'a feature left alone stays quiet')
  t.equal(sample(text, 'svc_drift_checks_total', { model: 'iris', result: 'ok', environment: 'dev' }), 2)
  const stamp = sample(text, 'svc_drift_last_check_timestamp_seconds', { model: 'iris', environment: 'dev' }) as number
  t.ok(Math.abs(stamp - Date.now() / 1000) < 5, 'the last scored check is now')

  const detail = (await (await fetch(`${running.base}/api/v1/models/iris`)).json()) as any
  t.match(detail.drift, {
    status: 'ok',
    version: '1',
    window: { samples: 1000, capacity: 1000 },
    min_samples: 500,
    thresholds: { moderate: 0.1, severe: 0.25, spike: 0.1 },
  })
  t.same(
    detail.drift.features.map((f: any) => [f.name, f.severity]),
    [
      ['sepal_length', 'none'],
      ['sepal_width', 'none'],
      ['petal_length', 'severe'],
      ['petal_width', 'severe'],
    ],
  )
  t.equal(detail.drift.checked_at, detail.drift.scored_at)
  const detected = running.lines().filter((line) => line.event === 'drift_detected')
  t.same(detected.flatMap((line) => (line['feature'] === undefined ? [] : [line['feature']])).sort(), ['petal_length', 'petal_width'])
  // Longer petals make fewer setosa: the answers move from quiet to severe in one check, a rise
  // that is also a spike, logged once with both severities, as the alerts counter counts them.
  const answers = sample(text, 'svc_drift_prediction_psi', { model: 'iris', output: 'species', environment: 'dev' }) as number
  t.ok(answers >= 0.25, `the answers' PSI ${answers.toFixed(3)} rose from ${unshiftedAnswers.toFixed(4)}`)
  t.match(detail.drift.predictions, { name: 'species', severity: 'severe', samples: 1000, missing: 0 })
  const outputLines = detected.filter((line) => line['output'] !== undefined)
  t.equal(outputLines.length, 1)
  t.match(outputLines[0], { output: 'species', previous_psi: unshiftedAnswers })
  t.same(outputLines[0]?.['severity'], ['severe', 'spike'])
})

t.test('node-cron runs the checks inside the service on SVC_DRIFT_SCHEDULE', async (t) => {
  const running = await startApp(t, { SVC_DRIFT_SCHEDULE: '* * * * * *', SVC_DRIFT_MIN_SAMPLES: '100', SVC_DRIFT_WINDOW: '200' })
  running.app.drift?.scheduler.start()
  await load(running, { rate: 20, durationMs: 600, batch: 20 })
  // Waits for a scheduled check rather than expecting one within 2 s: a loaded machine may miss a
  // tick, and node-cron does not make one up. 15 s only says the job runs at all.
  const checks = async (): Promise<number> =>
    sample(await metricsText(running), 'svc_drift_checks_total', { model: 'iris', result: 'ok', environment: 'dev' }) ?? 0
  const deadline = Date.now() + 15_000
  while ((await checks()) < 1 && Date.now() < deadline) await sleep(50)
  t.ok((await checks()) >= 1, 'scored without being asked')
  const text = await metricsText(running)
  t.equal(sample(text, 'svc_drift_window_samples', { model: 'iris', environment: 'dev' }), 200, 'the window holds SVC_DRIFT_WINDOW rows')
})

t.test('SVC_DRIFT_ENABLED=false: no window, no series, and the detail says so', async (t) => {
  const running = await startApp(t, { SVC_DRIFT_ENABLED: 'false' })
  t.equal(running.app.drift, undefined)
  await load(running, { rate: 10, durationMs: 200, batch: 5 })
  t.notMatch(await metricsText(running), /svc_drift_/)
  const detail = (await (await fetch(`${running.base}/api/v1/models/iris`)).json()) as any
  t.same(detail.drift, { status: 'disabled' })
})
