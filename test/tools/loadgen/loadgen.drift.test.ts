// What svc loadgen is for, end to end against the real service: the rows svc ships, replayed
// unshifted, look like the training data to the drift check (inputs and answers), and shifted they
// do not. PSI is read where a user reads it, GET /api/v1/models/{name}, after a check.
import t, { type Test } from 'tap'
import { runLoadgen, type LoadgenOptions, type LoadgenSummary } from '../../../lib/tools/loadgen/loadgen.js'
import { startApp, type Running } from '../../fixtures/app.js'
import { loadgenOptions } from '../../fixtures/loadgen.js'

type Drift = { features: Array<{ name: string; psi: number }>; predictions: { name: string; psi: number } }

const replay = (running: Running, model: string, overrides: Partial<LoadgenOptions> = {}): Promise<LoadgenSummary> =>
  runLoadgen(loadgenOptions(running.base, { model, seed: 5, ...overrides }), () => {})

/** A fresh service, `model` replayed into it, one drift check, and the drift its detail then shows. */
const driftAfter = async (t: Test, model: string, overrides: Partial<LoadgenOptions> = {}): Promise<Drift> => {
  const running = await startApp(t, { SVC_DRIFT_WINDOW: '1000', SVC_DRIFT_MIN_SAMPLES: '1000' })
  const summary = await replay(running, model, overrides)
  t.same([summary.failed, summary.skipped, summary.rows], [0, 0, 1000], `${model}: 1000 rows sent and answered`)
  await running.app.drift?.scheduler.trigger()
  const detail = (await (await fetch(`${running.base}/api/v1/models/${model}`)).json()) as { drift: Drift & { status: string } }
  t.equal(detail.drift.status, 'ok', `${model}: scored`)
  return detail.drift
}

const figures = (drift: Drift): string => [...drift.features, drift.predictions].map((f) => `${f.name} ${f.psi.toFixed(4)}`).join(', ')

for (const model of ['iris', 'cars']) {
  t.test(`${model}: its shipped rows replayed unshifted score input and prediction PSI below 0.1`, async (t) => {
    const drift = await driftAfter(t, model)
    t.ok(drift.features.length >= 4, 'every input scored')
    for (const feature of [...drift.features, drift.predictions]) t.ok(feature.psi < 0.1, `${model} ${feature.name}: PSI ${feature.psi.toFixed(4)}`)
    t.comment(`${model} unshifted: ${figures(drift)}`)
  })

  t.test(`${model}: replayed with --shift 2, every numerical input and the predictions score above 0.25`, async (t) => {
    const drift = await driftAfter(t, model, { shift: 2 })
    for (const feature of drift.features.filter((f) => f.name !== 'origin')) t.ok(feature.psi > 0.25, `${model} ${feature.name}: PSI ${feature.psi.toFixed(3)}`)
    t.ok(drift.predictions.psi > 0.25, `${model} ${drift.predictions.name}: PSI ${drift.predictions.psi.toFixed(3)}`)
    t.comment(`${model} --shift 2: ${figures(drift)}`)
  })
}
