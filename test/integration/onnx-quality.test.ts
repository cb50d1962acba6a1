// The reference quality of a model trained elsewhere, end to end: the built `svc profile --target`
// CLI (dist/, `npm run build`) scores an ONNX regressor against a column of true answers and writes
// the profile's `quality`; the service, with feedback on, exports it as svc_model_reference_quality
// and shows it on /api/v1/models/{name}. A version served without a profile has no quality, and no
// series.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { tempTree } from '../fixtures/model-store.js'
import { onnxGraphs } from '../fixtures/onnx-graphs.js'
import { spawnBuilt } from '../fixtures/spawn.js'

type Json = any

const FEATURES = ['a', 'b', 'c', 'd']

// tree-regressor (test/fixtures/onnx/generate.py): 0.5, plus 1.5 when a <= 1, else -2 when b <= -0.5,
// else 0.25; plus 0.125 when d <= 0, else 3. Every leaf is a multiple of 1/8: the sums are exact.
const ROWS: ReadonlyArray<Readonly<{ x: readonly number[]; answer: number; truth: number }>> = [
  { x: [0, 0, 0, 0], answer: 0.5 + 1.5 + 0.125, truth: 2 },
  { x: [2, -1, 0, 1], answer: 0.5 - 2 + 3, truth: 2 },
  { x: [2, 0, 0, -1], answer: 0.5 + 0.25 + 0.125, truth: 1 },
  { x: [1, 5, 5, 2], answer: 0.5 + 1.5 + 3, truth: 4 },
]
// By hand: errors 0.125, -0.5, -0.125, 1; truths' mean 2.25.
const SQUARED = 0.125 ** 2 + 0.5 ** 2 + 0.125 ** 2 + 1 // 1.28125
const EXPECTED = {
  rmse: Math.sqrt(SQUARED / 4),
  mae: (0.125 + 0.5 + 0.125 + 1) / 4, // 0.4375
  r2: 1 - SQUARED / (0.25 ** 2 + 0.25 ** 2 + 1.25 ** 2 + 1.75 ** 2), // 1 − 1.28125 / 4.75
}

t.test('svc profile --target scores an ONNX regressor; the service exports that quality per version', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  t.same(
    ROWS.map((row) => row.answer),
    [2.125, 1.5, 0.875, 5],
  )
  const root = await tempTree(t, {
    'tree/manifest.json': '{"default_version":"1","versions":["1","2"]}',
    'tree/1/model.onnx': graphs.bytes('tree-regressor'),
    'tree/1/metadata.json': JSON.stringify({ features: FEATURES }),
    'tree/2/model.onnx': graphs.bytes('tree-regressor'),
    'tree/2/metadata.json': JSON.stringify({ features: FEATURES, type: 'unscored' }),
    // The truth column first, and a column the model does not take: neither is profiled.
    'held-out.csv': `y,${FEATURES.join(',')},note\n${ROWS.map(({ x, truth }) => `${truth},${x.join(',')},n`).join('\n')}\n`,
  })
  const profilePath = join(root, 'tree', '1', 'profile.json')
  const args = ['profile', '--input', join(root, 'held-out.csv'), '--model', 'tree', '--store', root, '--bins', '2', '--target', 'y']
  const cli = spawnBuilt([...args, '--output', profilePath])
  const asInput = spawnBuilt(['profile', '--input', join(root, 'held-out.csv'), '--model', 'tree', '--store', root, '--target', 'b'])
  t.equal((await cli.exited).code, 0, cli.stderr())
  t.equal(
    cli.stderr().split('\n')[0],
    `svc profile: wrote ${profilePath}: 4 rows of ${join(root, 'held-out.csv')}, 4 numerical and 0 categorical columns, ` +
      'predictions of tree version 1 scored against y: rmse 0.566, mae 0.4375, r2 0.7303',
    'the summary line (a warning follows: 4 rows are too few to bin)',
  )
  const profile = JSON.parse(await readFile(profilePath, 'utf8')) as Json
  t.same(Object.keys(profile), ['format_version', 'rows', 'features', 'predictions', 'quality'], 'quality is the last member')
  t.same(Object.keys(profile.quality), ['rmse', 'mae', 'r2'])
  t.equal(profile.quality.rmse, EXPECTED.rmse, 'rmse, exactly: every error is a multiple of 1/8')
  t.equal(profile.quality.mae, EXPECTED.mae)
  t.ok(Math.abs(profile.quality.r2 - EXPECTED.r2) < 1e-15, `r2 ${profile.quality.r2} is ${EXPECTED.r2}`)
  t.equal(profile.rows, 4)
  t.same(
    profile.features.map((f: Json) => f.name),
    FEATURES,
  )
  t.equal((await asInput.exited).code, 2)
  t.equal(asInput.stderr(), 'svc profile: --target b is an input of model tree: name the column of true answers\nsvc profile --help lists the options.\n')

  const s = await startApp(t, { SVC_MODEL_STORE: root, SVC_FEEDBACK_SECRET: 'a fleet secret of more than 16 bytes' })
  const metrics = await (await fetch(`${s.base}/metrics`)).text()
  const quality = (version: string, metric: string) => sample(metrics, 'svc_model_reference_quality', { model: 'tree', version, metric, environment: 'dev' })
  t.same({ rmse: quality('1', 'rmse'), mae: quality('1', 'mae'), r2: quality('1', 'r2') }, profile.quality, "version 1: its profile's quality, every digit")
  t.notOk(/svc_model_reference_quality\{[^}]*version="2"/.test(metrics), 'version 2 has no profile: no quality series')
  t.equal(sample(metrics, 'svc_model_feedback_rows_total', { model: 'tree', version: '2', environment: 'dev' }), 0, 'yet it is tracked')

  const detail = (await (await fetch(`${s.base}/api/v1/models/tree`)).json()) as Json
  t.same(detail.metrics, profile.quality, '/api/v1/models/{name} shows the default version’s quality')
  t.equal(detail.dataset, null)
})
