// --url with several instances: request i goes to instance i mod n, the first describes the model,
// and the lines say what each instance got. Against real services.
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { runLoadgen, type LoadgenOptions } from '../../../lib/tools/loadgen/loadgen.js'
import { startApp, type Running } from '../../fixtures/app.js'
import { sample } from '../../fixtures/metrics-text.js'
import { ARTIFACTS } from '../../fixtures/models.js'
import { closedPort } from '../../fixtures/tcp.js'

const options = (urls: readonly string[], overrides: Partial<LoadgenOptions> = {}): LoadgenOptions => ({
  urls: urls.map((url) => new URL(url)),
  model: 'iris',
  version: undefined,
  headers: {},
  rows: undefined,
  shift: 0,
  features: [],
  rate: 50,
  durationMs: 200,
  batch: 3,
  // Above any run's request count here: the instances answer from this process's own loop, so on a
  // busy machine they may lag, and a run that skipped a request for want of a slot would send fewer.
  concurrency: 64,
  seed: 2,
  timeoutMs: 5000,
  feedback: false,
  label: undefined,
  labelNoise: 0,
  versionNoise: new Map(),
  ...overrides,
})

const metric = async (running: Running, endpoint: string, method: string): Promise<number> =>
  sample(await (await fetch(`${running.base}/metrics`)).text(), 'http_requests_total', { method, endpoint, status: '200', environment: 'dev' }) ?? 0

/** Rows the instance's drift window took in: what it answered. */
const windowRows = (running: Running): number => running.app.drift?.monitor.status(running.app.models.resolve('iris')!).window.samples ?? -1

t.test('three instances take the requests in turn; the first alone is asked for the model', async (t) => {
  const apps = [await startApp(t), await startApp(t), await startApp(t)]
  const urls = apps.map((app) => app.base)
  const lines: string[] = []
  // 50 req/s for 0.2 s: 10 requests, so 4, 3 and 3.
  const summary = await runLoadgen(options(urls), (line) => lines.push(line), 50)
  t.same(summary.instances, [
    { url: urls[0], sent: 4, ok: 4, failed: 0, byStatus: { 200: 4 } },
    { url: urls[1], sent: 3, ok: 3, failed: 0, byStatus: { 200: 3 } },
    { url: urls[2], sent: 3, ok: 3, failed: 0, byStatus: { 200: 3 } },
  ])
  t.same([summary.sent, summary.ok, summary.rows], [10, 10, 30])
  t.same(apps.map(windowRows), [12, 9, 9], 'each instance answered its share of the rows')
  t.same(await Promise.all(apps.map((app) => metric(app, '/api/v1/models/{name}', 'GET'))), [1, 0, 0], 'the model is described by the first')
  t.same(await Promise.all(apps.map((app) => metric(app, '/api/v1/predict', 'POST'))), [4, 3, 3])

  const rowsFile = fileURLToPath(new URL('iris/1/reference-rows.csv', ARTIFACTS))
  t.equal(lines[0], `loadgen: iris version 1 at ${urls.join(', ')} in turn, 50 req/s × 3 rows for 0.2 s, 150 rows of ${rowsFile}, no shift, seed 2`)
  const progress = lines.filter((line) => line.startsWith('  ') && / s: sent /.test(line))
  t.ok(progress.length > 0, 'progress lines')
  for (const line of progress) t.match(line, new RegExp(`; ${urls[0]} \\d+ ok, ${urls[1]} \\d+ ok, ${urls[2]} \\d+ ok$`), 'progress names each instance')
  t.same(lines.slice(-3), [
    `  ${urls[0]}: sent 4, 4 ok, 0 failed; 200: 4`,
    `  ${urls[1]}: sent 3, 3 ok, 0 failed; 200: 3`,
    `  ${urls[2]}: sent 3, 3 ok, 0 failed; 200: 3`,
  ])
  t.match(lines.at(-4), /^loadgen: sent 10 requests \(30 rows\) in \d\.\d s, 10 ok, 0 failed, 0 skipped; 200: 10$/)
})

t.test('an instance that is down fails its own share, and one that got nothing says so', async (t) => {
  const apps = [await startApp(t), await startApp(t)]
  const down = `http://127.0.0.1:${await closedPort()}`
  const lines: string[] = []
  // 10 req/s for 0.2 s: 2 requests over 3 instances; the third gets none.
  const summary = await runLoadgen(options([apps[0]!.base, down, apps[1]!.base], { rate: 10 }), (line) => lines.push(line))
  t.same(
    summary.instances.map(({ sent, ok, failed, byStatus }) => [sent, ok, failed, byStatus]),
    [
      [1, 1, 0, { 200: 1 }],
      [1, 0, 1, { connection_error: 1 }],
      [0, 0, 0, {}],
    ],
  )
  t.same([summary.sent, summary.ok, summary.failed], [2, 1, 1])
  t.same(lines.slice(-3), [
    `  ${apps[0]!.base}: sent 1, 1 ok, 0 failed; 200: 1`,
    `  ${down}: sent 1, 0 ok, 1 failed; connection_error: 1`,
    `  ${apps[1]!.base}: sent 0, 0 ok, 0 failed`,
  ])
})
