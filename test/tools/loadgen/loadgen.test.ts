// runLoadgen against loopback servers that answer, fail, hang or hang up.
import t from 'tap'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { runLoadgen, type LoadgenOptions } from '../../../lib/tools/loadgen/loadgen.js'
import { tempTree } from '../../fixtures/model-store.js'
import { closedPort, httpServer } from '../../fixtures/tcp.js'

const INPUTS = [
  { name: 'x', type: 'numerical' },
  { name: 'c', type: 'categorical', levels: ['a', 'b'] },
]
const DETAIL = { name: 'm', version: '3', versions: ['3'], sha256: 'f'.repeat(64), inputs: INPUTS }
/** Inputs described with references: a sound one for x, one whose shares sum to 0.9 for c. */
const SKEWED_INPUTS = [
  { ...INPUTS[0], reference: { edges: [1, 2], proportions: [0.25, 0.5, 0.25] } },
  { ...INPUTS[1], reference: { levels: ['a', 'b'], proportions: [0.5, 0.4] } },
]

const rowsFile = async (): Promise<string> => join(await tempTree(t, { 'rows.csv': 'x,c,extra\n0,a,1\n1,b,1\n2,a,1\n3,b,1\n' }), 'rows.csv')

const options = (port: number, rows: string, overrides: Partial<LoadgenOptions> = {}): LoadgenOptions => ({
  urls: [new URL(`http://127.0.0.1:${port}`)],
  model: 'm',
  version: undefined,
  headers: {},
  rows: { path: rows, file: 'rows.csv', format: 'csv', delimiter: ',' },
  shift: 0,
  features: [],
  rate: 50,
  durationMs: 200,
  batch: 2,
  concurrency: 32,
  seed: 9,
  timeoutMs: 1000,
  feedback: false,
  label: undefined,
  labelNoise: 0,
  versionNoise: new Map(),
  ...overrides,
})

/** A fake svc: describes model `m` and answers predictions with `predict`. */
const fake = (predict: (req: IncomingMessage, res: ServerResponse, body: any) => void) =>
  httpServer(t, (req, res) => {
    let text = ''
    req.on('data', (chunk: Buffer) => (text += chunk.toString()))
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/api/v1/models/m')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(DETAIL))
      if (req.method === 'GET' && req.url === '/api/v1/models/broken')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'broken', state: 'UNAVAILABLE' }))
      if (req.method === 'GET' && req.url === '/api/v1/models/gone')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'gone' }))
      if (req.method === 'GET' && req.url === '/api/v1/models/skewed')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...DETAIL, name: 'skewed', inputs: SKEWED_INPUTS }))
      if (req.method === 'GET' && req.url === '/api/v1/models/null') return void res.writeHead(200, { 'content-type': 'application/json' }).end('null')
      if (req.method === 'GET' && req.url === '/base/api/v1/models/m') return void res.writeHead(500).end('{}')
      if (req.method === 'GET')
        return void res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ detail: 'Model nope not found' }))
      predict(req, res, JSON.parse(text))
    })
  })

t.test("sends rate × duration requests of `batch` rows of the file, the model's inputs only, and reports them", async (t) => {
  const bodies: any[] = []
  const server = await fake((_req, res, body) => {
    bodies.push(body)
    res.writeHead(200).end('{}')
  })
  const lines: string[] = []
  const summary = await runLoadgen(options(server.port, await rowsFile()), (line) => lines.push(line), 50)
  t.same(summary, {
    sent: 10,
    ok: 10,
    failed: 0,
    skipped: 0,
    rows: 20,
    byStatus: { 200: 10 },
    instances: [{ url: `http://127.0.0.1:${server.port}`, sent: 10, ok: 10, failed: 0, byStatus: { 200: 10 } }],
  })
  t.equal(bodies.length, 10)
  t.match(bodies[0], {
    model: 'm',
    instances: [
      { x: Number, c: String },
      { x: Number, c: String },
    ],
  })
  t.same(Object.keys(bodies[0].instances[0]), ['x', 'c'], 'no extra column')
  // 20 rows of a 4-row file: five whole cycles, every row five times.
  const sent = bodies.flatMap((body) => body.instances.map((row: any) => `${row.x}${row.c}`)).sort()
  t.same(sent, ['0a', '1b', '2a', '3b'].flatMap((row) => Array(5).fill(row)).sort())
  t.match(lines[0], /^loadgen: m version 3 at http:\/\/127\.0\.0\.1:\d+, 50 req\/s × 2 rows for 0\.2 s, 4 rows of rows\.csv, no shift, seed 9$/)
  t.ok(
    lines.some((line) => /^ {2}\d+ s: sent \d+, ok \d+, in flight \d+, skipped 0$/.test(line)),
    'progress lines',
  )
  t.match(lines.at(-1), /^loadgen: sent 10 requests \(20 rows\) in \d\.\d s, 10 ok, 0 failed, 0 skipped; 200: 10$/)
})

t.test('--header and --token go on every request, with the version --version names in each body', async (t) => {
  const seen: Array<{ method: string; team: unknown; authorization: unknown; type: unknown }> = []
  const bodies: any[] = []
  const server = await httpServer(t, (req, res) => {
    seen.push({ method: req.method as string, team: req.headers['x-team'], authorization: req.headers.authorization, type: req.headers['content-type'] })
    let text = ''
    req.on('data', (chunk: Buffer) => (text += chunk.toString()))
    req.on('end', () => {
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(DETAIL))
      bodies.push(JSON.parse(text))
      res.writeHead(200).end('{}')
    })
  })
  const headers = { 'x-team': 'ml', authorization: 'Bearer abcdefghijklmnop' }
  const summary = await runLoadgen(options(server.port, await rowsFile(), { headers, version: '3' }), () => {})
  t.equal(summary.ok, 10)
  t.same(seen[0], { method: 'GET', team: 'ml', authorization: 'Bearer abcdefghijklmnop', type: undefined }, 'the description')
  t.same(
    seen.slice(1).filter((s) => s.team === 'ml' && s.authorization === 'Bearer abcdefghijklmnop' && s.type === 'application/json').length,
    10,
    'every prediction',
  )
  t.ok(
    bodies.every((body) => body.version === '3' && body.model === 'm'),
    'each body names the version',
  )
})

t.test('a shift moves the rows sent by standard deviations of the file', async (t) => {
  const xs: number[] = []
  const server = await fake((_req, res, body) => {
    for (const row of body.instances) xs.push(row.x)
    res.writeHead(200).end('{}')
  })
  const lines: string[] = []
  await runLoadgen(options(server.port, await rowsFile(), { shift: 2, batch: 4 }), (line) => lines.push(line))
  // x is 0, 1, 2, 3 in the file: a population standard deviation of √1.25.
  t.same(
    [...new Set(xs)].sort((a, b) => a - b),
    [0, 1, 2, 3].map((x) => x + 2 * Math.sqrt(1.25)),
  )
  t.match(lines[0], /, 4 rows of rows\.csv, x shifted by 2 sd, seed 9$/)
})

t.test('failures are counted by status; hang-ups and timeouts by kind; a full pipeline skips', async (t) => {
  let n = 0
  const server = await fake((req, res) => {
    n++
    if (n % 3 === 0) return void res.writeHead(503).end('{}')
    if (n % 3 === 1) return void req.socket.destroy()
    // else: never answer
  })
  const summary = await runLoadgen(options(server.port, await rowsFile(), { rate: 100, durationMs: 300, concurrency: 2, timeoutMs: 200 }), () => {})
  t.ok(summary.skipped > 0, `${summary.skipped} skipped while two requests hung`)
  t.equal(summary.ok, 0)
  t.equal(summary.failed, summary.sent)
  t.ok((summary.byStatus['connection_error'] ?? 0) > 0 && (summary.byStatus['timeout'] ?? 0) > 0, JSON.stringify(summary.byStatus))
})

t.test('a model that cannot be described, or has nothing to replay, stops the run before it starts', async (t) => {
  const server = await fake(() => {})
  const rows = await rowsFile()
  await t.rejects(
    runLoadgen(options(server.port, rows, { model: 'nope' }), () => {}),
    /^GET \/api\/v1\/models\/nope: 404 Model nope not found$/,
  )
  await t.rejects(
    runLoadgen(options(server.port, rows, { model: 'broken' }), () => {}),
    /^model broken is UNAVAILABLE: nothing to predict with$/,
  )
  await t.rejects(
    runLoadgen(options(server.port, rows, { model: 'gone' }), () => {}),
    /^model gone is not served: nothing to predict with$/,
  )
  await t.rejects(
    runLoadgen(options(server.port, rows, { model: 'skewed' }), () => {}),
    { name: 'ProfileError', message: /^model skewed inputs\[1\]\.reference\.proportions: must sum to 1 \(within 1e-9\), sum to 0\.9/ },
    'a reference described unsound, checked as a profile entry is',
  )
  await t.rejects(
    runLoadgen(options(server.port, rows, { model: 'null' }), () => {}),
    /^model null is not served: nothing to predict with$/,
    'a description that is not a JSON object',
  )
  await t.rejects(
    runLoadgen(options(await closedPort(), rows), () => {}),
    /fetch failed/,
  )
  const base = options(server.port, rows)
  await t.rejects(
    runLoadgen({ ...base, urls: [new URL('/base', base.urls[0])] }, () => {}),
    /^GET \/base\/api\/v1\/models\/m: 500$/,
    'a base path without its slash, and a failure without a detail',
  )
  await t.rejects(
    runLoadgen({ ...base, rows: undefined }, () => {}),
    { name: 'LoadgenUsageError', message: 'svc ships no rows of model m version 3 to replay: pass --rows FILE' },
    'no --rows, and svc ships no rows of it',
  )
  await t.rejects(
    runLoadgen({ ...base, features: ['c'], shift: 1 }, () => {}),
    { name: 'LoadgenUsageError', message: '--features names c, a categorical input: only numerical inputs can be shifted' },
    'the shift is checked against the model before the rows are read',
  )
  await t.rejects(
    runLoadgen({ ...base, rows: { ...(base.rows as NonNullable<LoadgenOptions['rows']>), path: `${rows}.gone`, file: 'gone.csv' } }, () => {}),
    {
      name: 'ProfileInputError',
      message: 'gone.csv: no such file',
    },
  )
})

t.test('nothing sent: the summary says so without a status list', async (t) => {
  const server = await fake(() => {})
  const lines: string[] = []
  const summary = await runLoadgen(options(server.port, await rowsFile(), { rate: 1, durationMs: 100 }), (line) => lines.push(line))
  t.equal(summary.sent, 0)
  t.match(lines.at(-1), /0 ok, 0 failed, 0 skipped$/)
})
