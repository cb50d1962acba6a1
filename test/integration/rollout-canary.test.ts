// The canary split over real HTTP (lib/models/registry/rollout.ts): a share of the requests naming no
// version goes to the canary, within binomial bounds; a routing key (the body's id, or a configured
// header) always lands on the same version; a request naming a version bypasses the split; the
// answer, the log line and the per-version series all say which version answered; a manifest change
// under load moves the split at the next reload pass with no failed request; and a manifest the
// registry refuses leaves the previous split serving, with the refusal on /api/v1/models/iris.
import t from 'tap'
import { startApp, type Running } from '../fixtures/app.js'
import { tempTree } from '../fixtures/model-store.js'
import {
  binomialBounds,
  inParallel,
  irisRow,
  irisVersions,
  predictIris,
  scrape,
  total,
  until,
  withCanary,
  writeManifest,
  type Answer,
} from '../fixtures/rollout.js'

const REQUESTS = 3000
const PERCENT = 20

const detail = async (running: Running): Promise<Record<string, unknown>> =>
  (await fetch(`${running.base}/api/v1/models/iris`)).json() as Promise<Record<string, unknown>>

const versionsOf = (answers: readonly Answer[]): Map<string | undefined, number> => {
  const counts = new Map<string | undefined, number>()
  for (const { version } of answers) counts.set(version, (counts.get(version) ?? 0) + 1)
  return counts
}

t.test('without a key, the canary answers its share of the requests, and every record says which version answered', async (t) => {
  const root = await tempTree(t, irisVersions(withCanary(PERCENT)))
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const answers = await inParallel(REQUESTS, 16, (i) => predictIris(running.base, { instances: [irisRow(i)] }))
  t.ok(
    answers.every((a) => a.status === 200),
    'every request answered',
  )
  const counts = versionsOf(answers)
  const canary = counts.get('2') ?? 0
  const [low, high] = binomialBounds(REQUESTS, PERCENT / 100)
  t.ok(canary >= low && canary <= high, `canary answered ${canary} of ${REQUESTS}, within [${low.toFixed(0)}, ${high.toFixed(0)}]`)
  t.equal((counts.get('1') ?? 0) + canary, REQUESTS, 'the default answered the rest')

  const text = await scrape(running)
  t.equal(
    total(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '2', outcome: 'success' }),
    canary,
    "the canary's series count its answers",
  )
  t.equal(total(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }), REQUESTS - canary)
  t.equal(total(text, 'svc_model_predictions_total', { version: '2' }), canary, 'rows against the version that answered')
  t.equal(total(text, 'svc_model_prediction_duration_seconds_count', { version: '2' }), canary)
  t.equal(total(text, 'svc_model_rollout_percent', { model: 'iris', version: '1', role: 'default' }), 100 - PERCENT)
  t.equal(total(text, 'svc_model_rollout_percent', { model: 'iris', version: '2', role: 'canary' }), PERCENT)
  t.equal(total(text, 'svc_model_rollout_percent', { role: 'shadow' }), 0, 'no shadow declared, no shadow series')

  const lines = running.lines().filter((l) => l.event === 'request_completed' && l['path'] === '/api/v1/predict')
  t.equal(lines.length, REQUESTS)
  t.equal(lines.filter((l) => l['model'] === 'iris' && l['model_version'] === '2').length, canary, 'the log lines name the version that answered')
  t.same((await detail(running))['rollout'], { canary: { version: '2', percent: PERCENT }, shadow: null }, '/api/v1/models/iris shows the split')

  // The drift window holds the default's rows only: what svc_drift_psi scores.
  const drift = (await detail(running))['drift'] as { window: { samples: number } }
  t.equal(drift.window.samples, Math.min(1000, REQUESTS - canary), "the window holds the default version's rows")
  t.equal(total(text, 'svc_drift_bin_total', { model: 'iris', version: '2', feature: 'sepal_length' }), canary, "the canary's rows are in its own bin counters")
})

t.test('a routing key lands on the same version every time: the body id by default, a configured header instead', async (t) => {
  const root = await tempTree(t, irisVersions(withCanary(PERCENT)))
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const KEYS = 400
  const first = await inParallel(KEYS, 16, (i) => predictIris(running.base, { id: `user-${i}` }))
  const again = await inParallel(KEYS, 16, (i) => predictIris(running.base, { id: `user-${i}`, instances: [irisRow(i)] }))
  t.same(
    again.map((a) => a.version),
    first.map((a) => a.version),
    'each id is answered by the version it was answered by before',
  )
  const canary = first.filter((a) => a.version === '2').length
  const [low, high] = binomialBounds(KEYS, PERCENT / 100)
  t.ok(canary >= low && canary <= high, `${canary} of ${KEYS} keys in the canary, within [${low.toFixed(0)}, ${high.toFixed(0)}]`)
  const v2 = await fetch(`${running.base}/v2/models/iris/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'user-0', inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 4], data: [[5.1, 3.5, 1.4, 0.2]] }] }),
  })
  t.equal(((await v2.json()) as { model_version: string }).model_version, first[0]?.version, '/v2 routes the same id to the same version')

  // Raising the share only moves keys to the canary: none comes back to the default.
  await writeManifest(root, withCanary(60))
  await running.app.models.reload()
  const raised = await inParallel(KEYS, 16, (i) => predictIris(running.base, { id: `user-${i}` }))
  t.ok(
    first.every((a, i) => a.version !== '2' || raised[i]?.version === '2'),
    'a key in the canary at 20 % is still in it at 60 %',
  )
  t.ok(raised.filter((a) => a.version === '2').length > canary, 'more keys in the canary')

  const keyed = await startApp(t, { SVC_MODEL_STORE: root, SVC_ROLLOUT_KEY_HEADER: 'X-Session-ID' })
  const sessions = await inParallel(100, 8, (i) => predictIris(keyed.base, { id: `request-${i}` }, { 'x-session-id': 'session-42' }))
  t.equal(new Set(sessions.map((a) => a.version)).size, 1, 'one session, one version, whatever the ids')
  const spread = await inParallel(200, 8, (i) => predictIris(keyed.base, { id: 'same-id' }, { 'x-session-id': `session-${i}` }))
  t.equal(new Set(spread.map((a) => a.version)).size, 2, 'with the header configured, the id no longer decides')
})

t.test('a request that names a version bypasses the split', async (t) => {
  const root = await tempTree(t, irisVersions(withCanary(100)))
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  t.equal((await predictIris(running.base)).version, '2', 'at 100 % every unnamed request goes to the canary')
  const named = await inParallel(50, 8, () => predictIris(running.base, { version: '1' }))
  t.ok(
    named.every((a) => a.version === '1'),
    '/api/v1 with version 1',
  )
  const res = await fetch(`${running.base}/v2/models/iris/versions/1/infer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ inputs: [{ name: 'input-0', datatype: 'FP64', shape: [1, 4], data: [[5.1, 3.5, 1.4, 0.2]] }] }),
  })
  t.equal(((await res.json()) as { model_version: string }).model_version, '1', '/v2/models/iris/versions/1/infer')
  const drift = (await detail(running))['drift'] as { window: { samples: number } }
  t.equal(drift.window.samples, 51, 'the requests the default answered feed the window')
})

t.test('a manifest change under load moves the split at the next reload pass, and no request fails', async (t) => {
  const root = await tempTree(t, irisVersions(withCanary(0)))
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_MODEL_RELOAD_INTERVAL_S: '1' })
  running.app.models.start()
  const seen: Array<Answer & { at: number }> = []
  let isRunning = true
  const traffic = inParallel(8, 8, async () => {
    while (isRunning) seen.push({ ...(await predictIris(running.base)), at: performance.now() })
  })
  await until(() => seen.length > 200, 'traffic')
  t.ok(
    seen.every((a) => a.version === '1'),
    'at 0 % the default answers all',
  )
  const written = performance.now()
  await writeManifest(root, withCanary(100))
  await until(() => running.lines().some((l) => l.event === 'model_reloaded'), 'the reload pass', 5000)
  const reloadedAt = performance.now()
  t.ok(reloadedAt - written < 2500, `the pass that read the change published it (${(reloadedAt - written).toFixed(0)} ms after the write)`)
  await until(() => seen.filter((a) => a.at > reloadedAt).length > 200, 'traffic after the pass')
  isRunning = false
  await traffic
  t.ok(
    seen.every((a) => a.status === 200),
    `no request failed (${seen.length})`,
  )
  // A request that arrived before the pass may finish after it: each answer is one or the other.
  const after = seen.filter((a) => a.at > reloadedAt + 50)
  t.ok(after.length > 100 && after.every((a) => a.version === '2'), 'after the pass, the canary answers all')
  const reloaded = running.lines().find((l) => l.event === 'model_reloaded')
  t.same(reloaded?.['canary'], { version: '2', percent: 100 }, 'model_reloaded says the new split')
})

t.test('a manifest the registry refuses leaves the previous split serving, and says why in a member of its own', async (t) => {
  const root = await tempTree(t, { ...irisVersions(withCanary(PERCENT)), 'iris/3/model.json': '{"broken": true}' })
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const refusals: Array<[Record<string, unknown>, string]> = [
    [withCanary(150), 'canary.percent: must be a number from 0 to 100, is 150'],
    [{ default_version: '1', versions: ['1', '2', '3'], canary: { version: '3', percent: 5 } }, 'canary.version: "3" is not loaded'],
    [{ default_version: '2', versions: ['1', '2'], canary: { version: '2', percent: 5 } }, 'canary.version: "2" is the default version'],
    [withCanary(5, { shadow: { version: '4', percent: 100 } }), 'shadow.version: "4" is not listed in versions'],
  ]
  for (const [manifest, reason] of refusals) {
    await writeManifest(root, manifest)
    await running.app.models.reload()
    const body = await detail(running)
    t.equal(body['state'], 'READY', `${reason}: the model stays READY`)
    t.equal(body['reason'], null, 'reason keeps its meaning: UNAVAILABLE only')
    t.match(body['rollout_error'], reason, 'rollout_error names the bad member')
    t.same(body['rollout'], { canary: { version: '2', percent: PERCENT }, shadow: null }, 'the previous split serves on')
    t.equal(body['default_version'], '1')
    const answers = await inParallel(200, 8, () => predictIris(running.base))
    t.ok(answers.every((a) => a.status === 200) && answers.some((a) => a.version === '2') && answers.some((a) => a.version === '1'), 'requests still split')
    t.equal(total(await scrape(running), 'svc_model_rollout_percent', { role: 'canary', version: '2' }), PERCENT)
  }
  const refused = running.lines().filter((l) => l.event === 'model_rollout_refused')
  t.equal(refused.length, refusals.length, 'model_rollout_refused once per new reason')
  t.equal(refused[0]?.level, 'warning')

  await writeManifest(root, withCanary(50, { shadow: { version: '2', percent: 10 } }))
  await running.app.models.reload()
  const fixed = await detail(running)
  t.equal(fixed['rollout_error'], null, 'a valid manifest clears the refusal')
  t.same(fixed['rollout'], { canary: { version: '2', percent: 50 }, shadow: { version: '2', percent: 10 } })

  // Promotion: version 2 the default, the canary and shadow gone, and their series with them.
  await writeManifest(root, { default_version: '2', versions: ['1', '2'] })
  await running.app.models.reload()
  const text = await scrape(running)
  t.equal(total(text, 'svc_model_rollout_percent', { model: 'iris', version: '2', role: 'default' }), 100)
  t.notMatch(text, /svc_model_rollout_percent\{[^}]*role="(canary|shadow)"/, 'no canary or shadow series left')
  t.notMatch(text, /svc_model_rollout_percent\{[^}]*version="1"/, 'version 1 plays no part')
  t.ok(
    (await inParallel(50, 8, () => predictIris(running.base))).every((a) => a.version === '2'),
    'the new default answers all',
  )
})

t.test('a refused rollout at start-up serves the default alone', async (t) => {
  const root = await tempTree(t, irisVersions(withCanary(5, { shadow: { version: '2', percent: -1 } })))
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const body = await detail(running)
  t.equal(body['state'], 'READY')
  t.match(body['rollout_error'], /^shadow\.percent: /)
  t.same(body['rollout'], { canary: null, shadow: null })
  const answers = await inParallel(100, 8, () => predictIris(running.base))
  t.ok(
    answers.every((a) => a.version === '1'),
    'the default answers every request',
  )
})
