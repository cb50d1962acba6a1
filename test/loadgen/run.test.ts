// runLoadgen against loopback servers that answer, fail, hang or hang up.
import t from 'tap'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { runLoadgen, type LoadgenOptions } from '../../lib/loadgen/loadgen.js'
import { closedPort, httpServer } from '../fixtures/tcp.js'

const INPUTS = [{ name: 'x', type: 'numerical', reference: { edges: [0], proportions: [0.5, 0.5] }, standardisation: { mean: 0, scale: 1 } }]

const options = (port: number, overrides: Partial<LoadgenOptions> = {}): LoadgenOptions => ({
  url: new URL(`http://127.0.0.1:${port}`),
  model: 'm',
  shift: 0,
  features: [],
  rate: 50,
  durationMs: 200,
  batch: 2,
  concurrency: 4,
  seed: 9,
  timeoutMs: 1000,
  ...overrides,
})

/** A fake svc: describes model `m` and answers predictions with `predict`. */
const fake = (predict: (req: IncomingMessage, res: ServerResponse, body: any) => void) =>
  httpServer(t, (req, res) => {
    let text = ''
    req.on('data', (chunk: Buffer) => (text += chunk.toString()))
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/api/v1/models/m')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'm', inputs: INPUTS }))
      if (req.method === 'GET' && req.url === '/api/v1/models/broken')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'broken', state: 'UNAVAILABLE' }))
      if (req.method === 'GET' && req.url === '/api/v1/models/gone')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'gone' }))
      if (req.method === 'GET' && req.url === '/base/api/v1/models/m') return void res.writeHead(500).end('{}')
      if (req.method === 'GET')
        return void res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ detail: 'Model nope not found' }))
      predict(req, res, JSON.parse(text))
    })
  })

t.test('sends rate × duration requests of `batch` rows drawn for the model, and reports them', async (t) => {
  const bodies: any[] = []
  const server = await fake((_req, res, body) => {
    bodies.push(body)
    res.writeHead(200).end('{}')
  })
  const lines: string[] = []
  const summary = await runLoadgen(options(server.port, { shift: 1 }), (line) => lines.push(line), 50)
  t.same(summary, { sent: 10, ok: 10, failed: 0, skipped: 0, rows: 20, byStatus: { 200: 10 } })
  t.equal(bodies.length, 10)
  t.match(bodies[0], { model: 'm', instances: [{ x: Number }, { x: Number }] })
  t.match(lines[0], /^loadgen: m at http:\/\/127\.0\.0\.1:\d+, 50 req\/s × 2 rows for 0\.2 s, x shifted by 1 sd, seed 9$/)
  t.ok(
    lines.some((line) => /^ {2}\d+ s: sent \d+, ok \d+, in flight \d+, skipped 0$/.test(line)),
    'progress lines',
  )
  t.match(lines.at(-1), /^loadgen: sent 10 requests \(20 rows\) in \d\.\d s, 10 ok, 0 failed, 0 skipped; 200: 10$/)
})

t.test('failures are counted by status; hang-ups and timeouts by kind; a full pipeline skips', async (t) => {
  let n = 0
  const server = await fake((req, res) => {
    n++
    if (n % 3 === 0) return void res.writeHead(503).end('{}')
    if (n % 3 === 1) return void req.socket.destroy()
    // else: never answer
  })
  const summary = await runLoadgen(options(server.port, { rate: 100, durationMs: 300, concurrency: 2, timeoutMs: 200 }), () => {})
  t.ok(summary.skipped > 0, `${summary.skipped} skipped while two requests hung`)
  t.equal(summary.ok, 0)
  t.equal(summary.failed, summary.sent)
  t.ok((summary.byStatus['connection_error'] ?? 0) > 0 && (summary.byStatus['timeout'] ?? 0) > 0, JSON.stringify(summary.byStatus))
})

t.test('a model that cannot be described stops the run before it starts', async (t) => {
  const server = await fake(() => {})
  await t.rejects(
    runLoadgen(options(server.port, { model: 'nope' }), () => {}),
    /^GET \/api\/v1\/models\/nope: 404 Model nope not found$/,
  )
  await t.rejects(
    runLoadgen(options(server.port, { model: 'broken' }), () => {}),
    /^model broken is UNAVAILABLE: nothing to draw from$/,
  )
  await t.rejects(
    runLoadgen(options(server.port, { model: 'gone' }), () => {}),
    /^model gone is not served: nothing to draw from$/,
  )
  await t.rejects(
    runLoadgen(options(await closedPort()), () => {}),
    /fetch failed/,
  )
  const base = options(server.port)
  await t.rejects(
    runLoadgen({ ...base, url: new URL('/base', base.url) }, () => {}),
    /^GET \/base\/api\/v1\/models\/m: 500$/,
    'a base path without its slash, and a failure without a detail',
  )
})

t.test('nothing sent: the summary says so without a status list', async (t) => {
  const server = await fake(() => {})
  const lines: string[] = []
  const summary = await runLoadgen(options(server.port, { rate: 1, durationMs: 100 }), (line) => lines.push(line))
  t.equal(summary.sent, 0)
  t.match(lines.at(-1), /0 ok, 0 failed, 0 skipped$/)
})
