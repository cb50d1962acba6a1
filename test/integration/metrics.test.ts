// The four HTTP series after known traffic, read back from GET /metrics over a real socket.
import { execFile } from 'node:child_process'
import { writeFile, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { labelValues, sample } from '../fixtures/metrics-text.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { testRoutes } from '../fixtures/routes.js'
import { findTool } from '../fixtures/tools.js'

const scrape = async (base: string, accept?: string): Promise<string> =>
  (await fetch(`${base}/metrics`, accept === undefined ? {} : { headers: { accept } })).text()

t.test('counts, durations and in-flight are exact after known traffic; /metrics is not counted', async (t) => {
  const { base } = await startApp(t, { SVC_ENVIRONMENT: 'prod' }, testRoutes(20))
  const send = async (n: number, path: string, init: RequestInit = {}) => {
    for (let i = 0; i < n; i++) await (await fetch(base + path, init)).arrayBuffer()
  }
  await send(7, '/')
  await send(3, '/nope')
  await send(2, '/', { method: 'DELETE' })
  await send(2, '/', { method: 'HEAD' })
  await Promise.all([send(1, '/test/slow'), send(1, '/test/slow')])
  await send(4, '/metrics')
  const text = await scrape(base)

  const env = { environment: 'prod' }
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/', status: '200', ...env }), 7)
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '<unmatched>', status: '404', ...env }), 3)
  t.equal(sample(text, 'http_requests_total', { method: 'DELETE', endpoint: '/', status: '405', ...env }), 2)
  t.equal(sample(text, 'http_requests_total', { method: 'HEAD', endpoint: '/', status: '200', ...env }), 2)
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/test/slow', status: '200', ...env }), 2)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', endpoint: '/', ...env }), 7)
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', endpoint: '/', le: '+Inf', ...env }), 7)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', endpoint: '/test/slow', ...env }), 2)
  t.equal(
    sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', endpoint: '/test/slow', le: '0.01', ...env }),
    0,
    'a 20 ms request is not under 10 ms',
  )
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { method: 'GET', endpoint: '/test/slow', le: '0.25', ...env }), 2)
  // libuv keeps timers on a millisecond clock read at the start of the loop turn, so a 20 ms timer
  // can fire up to 1 ms early by performance.now(): two of them sum to at least 38 ms.
  t.ok((sample(text, 'http_request_duration_seconds_sum', { method: 'GET', endpoint: '/test/slow', ...env }) ?? 0) >= 0.038)
  t.equal(sample(text, 'http_requests_in_flight', env), 0, 'in-flight is back to 0')
  t.equal(labelValues(text, 'http_requests_total', 'endpoint').has('/metrics'), false, 'scrapes are not counted')
  t.match(text, /^# TYPE http_request_duration_seconds histogram$/m)
  const bounds = [...text.matchAll(/^http_request_duration_seconds_bucket\{method="GET",endpoint="\/",environment="prod",le="([^"]+)"\}/gm)].map((m) => m[1])
  t.same(bounds, ['0.005', '0.01', '0.025', '0.05', '0.075', '0.1', '0.25', '0.5', '0.75', '1', '1.5', '2.5', '5', '10', '+Inf'])
})

t.test('in-flight counts requests while they run', async (t) => {
  const { base } = await startApp(t, {}, testRoutes(300))
  const slow = Promise.all([fetch(`${base}/test/slow`), fetch(`${base}/test/slow`)])
  await new Promise((r) => setTimeout(r, 100))
  t.equal(sample(await scrape(base), 'http_requests_in_flight', { environment: 'dev' }), 2)
  await slow
  t.equal(sample(await scrape(base), 'http_requests_in_flight', { environment: 'dev' }), 0)
})

t.test('an endpoint that throws answers 500, counts the exception by class and the request by status', async (t) => {
  const { base } = await startApp(t, {}, testRoutes())
  t.equal((await fetch(`${base}/test/throw`)).status, 500)
  t.equal((await fetch(`${base}/test/throw`)).status, 500)
  t.equal((await fetch(`${base}/test/reject`)).status, 500)
  t.equal((await fetch(`${base}/test/teapot`)).status, 418)
  const text = await scrape(base)
  t.equal(sample(text, 'http_exceptions_total', { exception_type: 'BoomError', environment: 'dev' }), 2)
  t.equal(sample(text, 'http_exceptions_total', { exception_type: 'TypeError', environment: 'dev' }), 1)
  t.equal(labelValues(text, 'http_exceptions_total', 'exception_type').has('HttpError'), false, 'a deliberate HttpError is not an exception')
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/test/throw', status: '500', environment: 'dev' }), 2)
})

t.test('OpenMetrics is served when the scraper asks for it', async (t) => {
  const { base } = await startApp(t)
  await fetch(base)
  const res = await fetch(`${base}/metrics`, { headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' } })
  t.equal(res.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8')
  const text = await res.text()
  t.match(text, /^http_requests_total\{method="GET",endpoint="\/",status="200",environment="dev"\} 1$/m)
  t.match(text, /# EOF\n$/)
  const classic = await fetch(`${base}/metrics`)
  t.equal(classic.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
  t.notMatch(await classic.text(), /# EOF/)
})

t.test('default process metrics and svc_build_info are exposed', async (t) => {
  const { base } = await startApp(t, { SVC_ENVIRONMENT: 'stage' })
  const text = await scrape(base)
  t.equal(sample(text, 'svc_build_info', { version: PACKAGE_VERSION, node_version: process.version, environment: 'stage' }), 1)
  t.match(text, /^process_resident_memory_bytes\{environment="stage"\} \d+/m)
  t.match(text, /^nodejs_eventloop_lag_seconds/m)
})

t.test('10 000 random paths and odd methods leave the endpoint and method labels bounded', async (t) => {
  const { base } = await startApp(t, {}, testRoutes())
  let seed = 42
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND', 'MKCOL', 'SEARCH']
  const requests: Array<Promise<unknown>> = []
  for (let i = 0; i < 10_000; i++) {
    const path = `/${random().toString(36).slice(2)}/${Math.floor(random() * 1e6)}`
    const method = methods[Math.floor(random() * methods.length)] as string
    requests.push(fetch(base + (i % 10 === 0 ? `/test/items/${i}/parts/x` : path), { method }).then((r) => r.arrayBuffer()))
    if (requests.length >= 100) await Promise.all(requests.splice(0))
  }
  await Promise.all(requests)
  const text = await scrape(base)
  const endpoints = labelValues(text, 'http_requests_total', 'endpoint')
  t.same([...endpoints].sort(), ['/test/items/{id}/parts/{part}', '<unmatched>'])
  t.ok(labelValues(text, 'http_requests_total', 'method').size <= 7, 'methods outside the standard set are OTHER')
  t.ok(labelValues(text, 'http_requests_total', 'method').has('OTHER'))
  const total = [...text.matchAll(/^http_requests_total\{.*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
  t.equal(total, 10_000, 'every request counted once')
})

t.test('promtool check metrics accepts the exposition', async (t) => {
  const promtool = await findTool(t, 'promtool', 'prometheus')
  if (promtool === undefined) return
  const { base } = await startApp(t, {}, testRoutes())
  await fetch(base)
  await fetch(`${base}/test/throw`)
  const dir = await mkdtemp(join(tmpdir(), 'svc-metrics-'))
  const file = join(dir, 'metrics.txt')
  await writeFile(file, await scrape(base))
  const run = promisify(execFile)
  const { stdout, stderr } = await run('sh', ['-c', `${promtool} check metrics < ${file}`])
  t.equal(`${stdout}${stderr}`.trim(), '', 'no lint findings')
})
