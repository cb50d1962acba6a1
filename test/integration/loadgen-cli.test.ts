// `svc loadgen` as a user runs it: a child process against a running service.
import { join } from 'node:path'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { tempTree } from '../fixtures/model-store.js'
import { spawnTs } from '../fixtures/spawn.js'

const CLI = 'bin/svc.ts'

t.test('svc loadgen: a run and its summary exit 0, usage errors and bad rows 2, an unknown model 1', async (t) => {
  const running = await startApp(t)
  const root = await tempTree(t, { 'rows.csv': 'sepal_length,sepal_width,petal_length\n5.1,3.5,1.4\n' })
  // In parallel: each child pays the TypeScript loader's start-up.
  const run = spawnTs(CLI, [
    'loadgen',
    '--model',
    'iris',
    '--url',
    running.base,
    '--rate',
    '20',
    '--duration',
    '1s',
    '--batch',
    '5',
    '--seed',
    '3',
    '--shift',
    '1',
  ])
  const help = spawnTs(CLI, ['loadgen', '--help'])
  const usage = spawnTs(CLI, ['loadgen', '--model', 'iris', '--rate', '0'])
  const unknown = spawnTs(CLI, ['loadgen', '--model', 'tulips', '--url', running.base])
  const badRows = spawnTs(CLI, ['loadgen', '--model', 'iris', '--url', running.base, '--rows', join(root, 'rows.csv')])

  t.equal((await run.exited).code, 0, run.stderr())
  t.match(
    run.stdout(),
    /^loadgen: iris version 1 at http:\/\/127\.0\.0\.1:\d+, 20 req\/s × 5 rows for 1 s, 150 rows of \/\S+\/iris\/1\/reference-rows\.csv, sepal_length, sepal_width, petal_length, petal_width shifted by 1 sd, seed 3\n/,
  )
  t.match(run.stdout(), /loadgen: sent 20 requests \(100 rows\) in \d+\.\d s, 20 ok, 0 failed, 0 skipped; 200: 20\n$/)
  t.equal(running.app.drift?.monitor.status(running.app.models.resolve('iris')!).window.samples, 100)

  t.equal((await help.exited).code, 0)
  t.match(help.stdout(), /^Usage: svc loadgen --model NAME/)
  t.equal((await usage.exited).code, 2)
  t.equal(usage.stderr(), 'svc loadgen: --rate 0: expected a rate above 0 and at most 100000\nsvc loadgen --help lists the options.\n')
  t.equal((await unknown.exited).code, 1)
  t.equal(unknown.stderr(), 'svc loadgen: GET /api/v1/models/tulips: 404 Model tulips not found\n')
  t.equal((await badRows.exited).code, 2)
  t.equal(badRows.stderr(), `svc loadgen: ${join(root, 'rows.csv')}:1: the header has no column "petal_width", an input of model iris\n`, 'one line')
})

t.test('svc loadgen exits 1 when requests fail', async (t) => {
  const running = await startApp(t, { SVC_MAX_BATCH: '2' })
  const child = spawnTs(CLI, ['loadgen', '--model', 'iris', '--url', running.base, '--rate', '10', '--duration', '300ms', '--batch', '3'])
  t.equal((await child.exited).code, 1, child.stderr())
  // 10 req/s for 0.3 s is 3 requests; 3 rows each against a limit of 2 makes every one a 400.
  t.match(child.stdout(), /\nloadgen: sent 3 requests \(9 rows\) in \d+\.\d s, 0 ok, 3 failed, 0 skipped; 400: 3\n$/)
})

t.test('svc loadgen --feedback: labels back and a summary of them, exit 0; no label column 2; answers without tokens 1', async (t) => {
  const running = await startApp(t, { SVC_FEEDBACK_SECRET: 'a secret of at least 16 bytes' })
  const off = await startApp(t)
  const root = await tempTree(t, { 'rows.csv': 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n' })
  const args = (url: string) => ['loadgen', '--model', 'iris', '--url', url, '--rate', '20', '--duration', '500ms', '--batch', '5', '--seed', '3', '--feedback']
  const run = spawnTs(CLI, [...args(running.base), '--label-noise', '0.3'])
  const noLabel = spawnTs(CLI, [...args(running.base), '--rows', join(root, 'rows.csv')])
  const untokened = spawnTs(CLI, args(off.base))

  t.equal((await run.exited).code, 0, run.stderr())
  t.match(run.stdout(), /, seed 3; labels from species to the same instance, 30 % of them wrong\n/)
  // 10 requests of 5 rows: 50 labels, one feedback request.
  t.match(run.stdout(), /\nloadgen: labels: sent 50 in 1 requests, 50 accepted, 0 refused, 0 failed; 200: 1\n$/)
  t.equal((await noLabel.exited).code, 2)
  t.equal(
    noLabel.stderr(),
    `svc loadgen: --feedback: ${join(root, 'rows.csv')} has no column "species" (the model's output; --label COLUMN names another) to read the labels from\n` +
      'svc loadgen --help lists the options.\n',
  )
  t.equal((await untokened.exited).code, 1)
  t.match(untokened.stdout(), /, 0 failed, 50 rows answered without a token \(is SVC_FEEDBACK_SECRET set\?\)\n$/)
})
