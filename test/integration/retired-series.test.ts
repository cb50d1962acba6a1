// Series that outlive their subject, over HTTP under a real server: a version the manifest no longer
// lists takes every series labelled with it off /metrics at the reload that drops it, while the
// versions still listed keep theirs; and a promotion to a version with no reference (an ONNX model
// served without a profile) takes the drift gauges and the last-check timestamp away, so
// SvcDriftStale has nothing to fire on, while the drift counters stay.
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import t from 'tap'
import { BIN_METRICS } from '../../lib/drift/bin-counters.js'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { artifactBytes } from '../fixtures/models.js'
import { tempTree } from '../fixtures/model-store.js'
import { onnxGraphs } from '../fixtures/onnx-graphs.js'
import { irisRow, irisVersions, predictIris, scrape, until, writeManifest } from '../fixtures/rollout.js'

/** The metric names of every sample of model iris that carries `version="<version>"`. */
const familiesOf = (text: string, version: string): Set<string> => {
  const names = new Set<string>()
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.includes('model="iris"') || !line.includes(`version="${version}"`)) continue
    names.add(line.slice(0, line.indexOf('{')))
  }
  return names
}

// Every per-version family a served version can have: predictions, readiness, rollout role, shadow
// copies, and the drift bin counters and reference shares (lib/README.md §10).
const PER_VERSION = [
  'svc_model_prediction_requests_total',
  'svc_model_predictions_total',
  'svc_model_prediction_duration_seconds_bucket',
  'svc_model_prediction_duration_seconds_sum',
  'svc_model_prediction_duration_seconds_count',
  'svc_model_ready',
  'svc_model_rollout_percent',
  'svc_model_shadow_predictions_total',
  'svc_model_shadow_rows_total',
  'svc_model_shadow_disagreements_total',
  'svc_model_shadow_dropped_total',
  'svc_model_shadow_duration_seconds_count',
  ...BIN_METRICS,
]

t.test('a version the manifest no longer lists loses every series labelled with it; the versions still listed keep theirs', async (t) => {
  const root = await tempTree(t, irisVersions({ default_version: '1', versions: ['1'] }))
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  t.equal((await predictIris(running.base, { instances: [irisRow(1)] })).version, '1')

  // Version 2 becomes the default; version 1 stays listed a while, as its shadow.
  await writeManifest(root, { default_version: '2', versions: ['1', '2'], shadow: { version: '1', percent: 100 } })
  await running.app.models.reload()
  t.equal((await predictIris(running.base, { version: '1', instances: [irisRow(2)] })).version, '1', 'version 1 still answers when named')
  t.equal((await predictIris(running.base, { instances: [irisRow(3)] })).version, '2')
  await until(
    async () => (sample(await scrape(running), 'svc_model_shadow_rows_total', { model: 'iris', version: '1', environment: 'dev' }) ?? 0) > 0,
    'a shadow copy',
  )
  const before = await scrape(running)
  const v1 = familiesOf(before, '1')
  for (const family of PER_VERSION) t.ok(v1.has(family), `version 1 has ${family} while listed`)
  const v2 = familiesOf(before, '2')

  await writeManifest(root, { default_version: '2', versions: ['2'] })
  await running.app.models.reload()
  const after = await scrape(running)
  t.same([...familiesOf(after, '1')], [], 'no series of version 1 is left')
  const kept = familiesOf(after, '2')
  // Version 2 played no shadow, so it has no shadow series, before or after.
  t.same(
    [...v2].filter((family) => !kept.has(family)),
    [],
    'version 2 keeps every series it had',
  )
  t.equal(sample(after, 'svc_model_prediction_requests_total', { model: 'iris', version: '2', outcome: 'success', environment: 'dev' }), 1)
  t.equal(sample(after, 'svc_model_ready', { model: 'iris', version: '2', environment: 'dev' }), 1)

  // Listed again, version 1 starts afresh.
  await writeManifest(root, { default_version: '2', versions: ['1', '2'] })
  await running.app.models.reload()
  t.equal((await predictIris(running.base, { version: '1', instances: [irisRow(4)] })).version, '1')
  const again = await scrape(running)
  t.equal(sample(again, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success', environment: 'dev' }), 1, 'counted from 0')
})

t.test('a promotion to a version with no reference takes the drift gauges and the last-check timestamp away; the counters stay', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const features = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']
  const root = await tempTree(t, {
    'iris/manifest.json': JSON.stringify({ default_version: '1', versions: ['1', '2'] }),
    'iris/1/model.json': artifactBytes('iris'),
    'iris/2/model.onnx': graphs.bytes('linear-zipmap'),
    'iris/2/metadata.json': JSON.stringify({ features }),
  })
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_DRIFT_MIN_SAMPLES: '1', SVC_MODEL_RELOAD_INTERVAL_S: '1' })
  running.app.models.start()
  const monitor = running.app.drift?.monitor as NonNullable<typeof running.app.drift>['monitor']
  for (let i = 0; i < 20; i++) t.equal((await predictIris(running.base, { instances: [irisRow(i)] })).status, 200)
  await monitor.check()
  const env = { model: 'iris', environment: 'dev' }
  const scored = await scrape(running)
  t.ok(sample(scored, 'svc_drift_last_check_timestamp_seconds', env) !== undefined, 'version 1 is scored')
  for (const feature of features) t.ok(sample(scored, 'svc_drift_psi', { ...env, feature }) !== undefined, `svc_drift_psi for ${feature}`)
  t.ok(sample(scored, 'svc_drift_prediction_psi', { ...env, output: 'species' }) !== undefined)

  // The reload job promotes version 2, an ONNX graph served without a profile.
  await writeManifest(root, { default_version: '2', versions: ['1', '2'] })
  await until(() => running.app.models.entry('iris')?.defaultVersion === '2', 'the hot reload', 15_000)
  await monitor.check()
  const text = await scrape(running)
  t.equal(sample(text, 'svc_drift_checks_total', { ...env, result: 'no_reference' }), 1)
  t.equal(sample(text, 'svc_drift_last_check_timestamp_seconds', env), undefined, 'no timestamp left for SvcDriftStale to read')
  t.notMatch(text, /^svc_drift_psi\{/m, 'no input PSI gauge left')
  t.notMatch(text, /^svc_drift_prediction_psi\{/m, 'no answers PSI gauge left')
  t.equal(sample(text, 'svc_drift_checks_total', { ...env, result: 'ok' }), 1, 'the checks counter stays')
  const alerts = (name: string, labels: Record<string, string>) => [sample(scored, name, labels), sample(text, name, labels)]
  const [severe, severeAfter] = alerts('svc_drift_alerts_total', { ...env, feature: 'petal_length', severity: 'severe' })
  t.ok(severe !== undefined && severeAfter === severe, `the alert counters stay (${severe} → ${severeAfter})`)
  const [answers, answersAfter] = alerts('svc_drift_prediction_alerts_total', { ...env, output: 'species', severity: 'severe' })
  t.ok(answers !== undefined && answersAfter === answers, `the answers' alert counters stay (${answers} → ${answersAfter})`)
})

t.test('a model removed from the store leaves the registry at the second reload without it, and every series of it goes', async (t) => {
  const root = await tempTree(t, {
    ...irisVersions({ default_version: '1', versions: ['1'] }),
    'cars/manifest.json': '{"default_version":"1"}',
    'cars/1/model.json': artifactBytes('cars'),
  })
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_DRIFT_MIN_SAMPLES: '1' })
  const monitor = running.app.drift?.monitor as NonNullable<typeof running.app.drift>['monitor']
  for (let i = 0; i < 5; i++) t.equal((await predictIris(running.base, { instances: [irisRow(i)] })).status, 200)
  await monitor.check()
  const irisLines = (text: string): string[] => text.split('\n').filter((line) => !line.startsWith('#') && line.includes('model="iris"'))
  const before = irisLines(await scrape(running))
  for (const family of ['svc_model_ready', 'svc_model_predictions_total', 'svc_drift_checks_total', 'svc_drift_alerts_total', 'svc_drift_psi'])
    t.ok(
      before.some((line) => line.startsWith(family)),
      `iris has ${family}`,
    )

  await rm(join(root, 'iris'), { recursive: true })
  await running.app.models.reload()
  t.equal((await predictIris(running.base)).status, 200, 'one listing without it: iris still serves')
  t.same(
    running.lines().filter((line) => line.event === 'model_removed'),
    [],
  )

  await running.app.models.reload()
  t.equal(running.app.models.entry('iris'), undefined, 'the second listing without it removes it')
  t.equal((await predictIris(running.base)).status, 404, 'and it answers as an unknown model')
  t.match(
    running.lines().filter((line) => line.event === 'model_removed'),
    [{ level: 'info', model: 'iris' }],
  )
  t.equal(running.app.models.entry('cars')?.state, 'READY', 'the other model serves on')
  await monitor.check()
  t.same(irisLines(await scrape(running)), [], 'no series of iris is left, the drift counters included')
})

t.test('a model missing from one listing only is never removed', async (t) => {
  const files = irisVersions({ default_version: '1', versions: ['1'] })
  const root = await tempTree(t, files)
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  await rm(join(root, 'iris'), { recursive: true })
  await running.app.models.reload()
  for (const [path, bytes] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), bytes)
  }
  await running.app.models.reload()
  await rm(join(root, 'iris'), { recursive: true })
  await running.app.models.reload()
  t.equal(running.app.models.entry('iris')?.state, 'READY', 'two misses, but not in a row: still served')
  t.same(
    running.lines().filter((line) => line.event === 'model_removed'),
    [],
  )
})
