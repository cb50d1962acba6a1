import { Registry, type RegistryContentType } from 'prom-client'
import t from 'tap'
import { count, observe } from '../../../lib/telemetry/metrics/cells.js'
import { DURATION_BUCKETS, HttpMetrics, methodLabel } from '../../../lib/telemetry/metrics/http-metrics.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'

const INF = DURATION_BUCKETS.length

/** Bucket index each observed value lands in: the first bound it does not exceed, else +Inf. */
const BUCKET_CASES: readonly Readonly<{ seconds: number; bucket: number; le: string }>[] = [
  { seconds: 0, bucket: 0, le: '0.005' },
  { seconds: 0.005, bucket: 0, le: '0.005' },
  { seconds: 0.0051, bucket: 1, le: '0.01' },
  { seconds: 0.075, bucket: 4, le: '0.075' },
  { seconds: 0.74, bucket: 8, le: '0.75' },
  { seconds: 0.75, bucket: 8, le: '0.75' },
  { seconds: 0.7500001, bucket: 9, le: '1' },
  { seconds: 10, bucket: 13, le: '10' },
  { seconds: 10.001, bucket: INF, le: '+Inf' },
  { seconds: 3600, bucket: INF, le: '+Inf' },
]

for (const { seconds, bucket, le } of BUCKET_CASES) {
  t.test(`observe puts ${seconds} s in the le=${le} bucket only`, async (t) => {
    const cell = new HttpMetrics('dev').durationCell('GET', '/')
    observe(cell, seconds, undefined)
    const expected = new Float64Array(DURATION_BUCKETS.length + 1)
    expected[bucket] = 1
    t.same([...cell.buckets], [...expected])
    t.equal(cell.count, 1)
    t.equal(cell.sum, seconds)
  })
}

t.test('observe adds to count and sum', async (t) => {
  const cell = new HttpMetrics('dev').durationCell('GET', '/')
  observe(cell, 0.5, undefined)
  observe(cell, 0.25, undefined)
  observe(cell, 0.25, undefined)
  t.equal(cell.count, 3)
  t.equal(cell.sum, 1)
  t.equal(cell.buckets[6], 2, 'le=0.25')
  t.equal(cell.buckets[7], 1, 'le=0.5')
})

const METHOD_CASES: readonly (readonly [string, string])[] = [
  ['GET', 'GET'],
  ['HEAD', 'HEAD'],
  ['POST', 'POST'],
  ['PUT', 'PUT'],
  ['DELETE', 'DELETE'],
  ['PATCH', 'PATCH'],
  ['OPTIONS', 'OPTIONS'],
  ['CONNECT', 'CONNECT'],
  ['TRACE', 'TRACE'],
  ['PROPFIND', 'OTHER'],
  ['get', 'OTHER'],
  ['', 'OTHER'],
]

t.test('methodLabel keeps standard methods and maps the rest to OTHER', async (t) => {
  for (const [method, label] of METHOD_CASES) t.equal(methodLabel(method), label, JSON.stringify(method))
})

t.test('requestCell returns the same cell for the same labels', async (t) => {
  const metrics = new HttpMetrics('prod')
  const cell = metrics.requestCell('GET', '/users/{id}', 200)
  t.equal(metrics.requestCell('GET', '/users/{id}', 200), cell)
  t.not(metrics.requestCell('GET', '/users/{id}', 404), cell)
  t.not(metrics.requestCell('POST', '/users/{id}', 200), cell)
  t.not(metrics.requestCell('GET', '/users', 200), cell)
  t.same(cell, {
    labels: { method: 'GET', endpoint: '/users/{id}', status: '200', environment: 'prod' },
    text: 'method="GET",endpoint="/users/{id}",status="200",environment="prod"',
    value: 0,
    exemplar: { traceId: undefined, value: 0, timestamp: 0 },
  })
  t.ok(Object.isFrozen(cell.labels))
})

t.test('durationCell returns the same cell for the same labels', async (t) => {
  const metrics = new HttpMetrics('stage')
  const cell = metrics.durationCell('GET', '/')
  t.equal(metrics.durationCell('GET', '/'), cell)
  t.not(metrics.durationCell('HEAD', '/'), cell)
  t.same(cell.labels, { method: 'GET', endpoint: '/', environment: 'stage' })
  t.ok(Object.isFrozen(cell.labels))
  t.equal(cell.buckets.length, DURATION_BUCKETS.length + 1)
})

const render = async (metrics: HttpMetrics, contentType: RegistryContentType = Registry.PROMETHEUS_CONTENT_TYPE): Promise<string[]> => {
  const registry = new Registry()
  // registerIn takes prom-client's default (Prometheus-typed) Registry; the content type is switched at run time.
  registry.setContentType(contentType as typeof Registry.PROMETHEUS_CONTENT_TYPE)
  metrics.registerIn(registry)
  return (await registry.metrics()).split('\n')
}

/** The expected lines missing from the output: `[]` when all are there. */
const missing = (lines: readonly string[], expected: readonly string[]): string[] => expected.filter((l) => !lines.includes(l))

t.test('countException groups exceptions by class name', async (t) => {
  class ModelLoadError extends Error {}
  const metrics = new HttpMetrics('dev')
  metrics.countException(new TypeError('a'))
  metrics.countException(new TypeError('b'))
  metrics.countException(new ModelLoadError('c'))
  metrics.countException(new Error('d'))
  metrics.countException('a string')
  metrics.countException(undefined)
  const lines = await render(metrics)
  t.same(
    lines.filter((l) => l.startsWith('http_exceptions_total{')),
    [
      'http_exceptions_total{exception_type="TypeError",environment="dev"} 2',
      'http_exceptions_total{exception_type="ModelLoadError",environment="dev"} 1',
      'http_exceptions_total{exception_type="Error",environment="dev"} 1',
      'http_exceptions_total{exception_type="string",environment="dev"} 1',
      'http_exceptions_total{exception_type="undefined",environment="dev"} 1',
    ],
  )
})

t.test('countException keeps 50 exception types and counts the rest as other', async (t) => {
  const classes = Array.from({ length: 60 }, (_, i) => ({ [`Error${i}`]: class extends Error {} })[`Error${i}`] as typeof Error)
  const metrics = new HttpMetrics('dev')
  for (const Class of classes) metrics.countException(new Class('x'))
  metrics.countException(new (classes[0] as typeof Error)('again')) // a kept type still counts as itself
  metrics.countException(new (classes[55] as typeof Error)('again')) // a dropped type still counts as other
  metrics.countException(new RangeError('new')) // a type first seen past the cap
  const exceptions = (await render(metrics)).filter((l) => l.startsWith('http_exceptions_total{'))
  t.equal(exceptions.length, 51, '50 types and other')
  t.ok(exceptions.includes('http_exceptions_total{exception_type="Error0",environment="dev"} 2'))
  t.ok(exceptions.includes('http_exceptions_total{exception_type="Error49",environment="dev"} 1'))
  t.notOk(exceptions.some((l) => l.includes('"Error50"') || l.includes('"RangeError"')))
  t.equal(exceptions.at(-1), 'http_exceptions_total{exception_type="other",environment="dev"} 12')
})

t.test('the registry renders the four HTTP series with exact lines', async (t) => {
  const metrics = new HttpMetrics('dev')
  metrics.requestCell('GET', '/', 200).value += 3
  metrics.requestCell('POST', '/items', 201).value += 1
  const cell = metrics.durationCell('GET', '/')
  observe(cell, 0.25, undefined)
  observe(cell, 0.5, undefined)
  observe(cell, 20, undefined)
  metrics.inFlight = 2
  metrics.countException(new TypeError('x'))
  const lines = await render(metrics)
  const labels = 'method="GET",endpoint="/",environment="dev"'
  t.same(
    missing(lines, [
      '# HELP http_requests_total Total HTTP requests.',
      '# TYPE http_requests_total counter',
      'http_requests_total{method="GET",endpoint="/",status="200",environment="dev"} 3',
      'http_requests_total{method="POST",endpoint="/items",status="201",environment="dev"} 1',
      '# HELP http_request_duration_seconds HTTP request duration in seconds.',
      '# TYPE http_request_duration_seconds histogram',
      `http_request_duration_seconds_bucket{${labels},le="0.005"} 0`,
      `http_request_duration_seconds_bucket{${labels},le="0.1"} 0`,
      `http_request_duration_seconds_bucket{${labels},le="0.25"} 1`,
      `http_request_duration_seconds_bucket{${labels},le="0.5"} 2`,
      `http_request_duration_seconds_bucket{${labels},le="0.75"} 2`,
      `http_request_duration_seconds_bucket{${labels},le="10"} 2`,
      `http_request_duration_seconds_bucket{${labels},le="+Inf"} 3`,
      `http_request_duration_seconds_sum{${labels}} 20.75`,
      `http_request_duration_seconds_count{${labels}} 3`,
      '# HELP http_requests_in_flight HTTP requests currently being processed.',
      '# TYPE http_requests_in_flight gauge',
      'http_requests_in_flight{environment="dev"} 2',
      '# HELP http_exceptions_total Exceptions raised while handling HTTP requests.',
      '# TYPE http_exceptions_total counter',
      'http_exceptions_total{exception_type="TypeError",environment="dev"} 1',
    ]),
    [],
  )
  t.equal(lines.filter((l) => l.startsWith('http_request_duration_seconds_bucket{')).length, DURATION_BUCKETS.length + 1, 'one line per bound and +Inf')
})

t.test('bucket lines are cumulative and end at the count', async (t) => {
  const metrics = new HttpMetrics('dev')
  const cell = metrics.durationCell('GET', '/')
  for (const seconds of [0.001, 0.02, 0.02, 0.3, 2, 7, 11]) observe(cell, seconds, undefined)
  const counts = (await render(metrics)).filter((l) => l.startsWith('http_request_duration_seconds_bucket{')).map((l) => Number(l.split(' ')[1]))
  t.same(counts, [1, 1, 3, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 6, 7])
})

t.test('the registry reads the cells at scrape time', async (t) => {
  const metrics = new HttpMetrics('dev')
  const registry = new Registry()
  metrics.registerIn(registry)
  const cell = metrics.requestCell('GET', '/', 200)
  cell.value = 1
  t.match(await registry.metrics(), /^http_requests_total\{method="GET",endpoint="\/",status="200",environment="dev"\} 1$/m)
  cell.value = 5
  metrics.inFlight = 7
  const text = await registry.metrics()
  t.match(text, /^http_requests_total\{method="GET",endpoint="\/",status="200",environment="dev"\} 5$/m)
  t.match(text, /^http_requests_in_flight\{environment="dev"\} 7$/m)
})

t.test('an empty HttpMetrics renders headers and the in-flight gauge only', async (t) => {
  const lines = await render(new HttpMetrics('dev'))
  t.same(
    lines.filter((l) => l !== '' && !l.startsWith('#')),
    ['http_requests_in_flight{environment="dev"} 0'],
  )
})

t.test('OpenMetrics output names counter samples with _total and ends with # EOF', async (t) => {
  const metrics = new HttpMetrics('dev')
  metrics.requestCell('GET', '/', 200).value = 3
  metrics.countException(new TypeError('x'))
  observe(metrics.durationCell('GET', '/'), 0.1, undefined)
  const lines = await render(metrics, Registry.OPENMETRICS_CONTENT_TYPE)
  t.same(
    missing(lines, [
      '# TYPE http_requests counter',
      'http_requests_total{method="GET",endpoint="/",status="200",environment="dev"} 3',
      '# TYPE http_exceptions counter',
      'http_exceptions_total{exception_type="TypeError",environment="dev"} 1',
      '# TYPE http_request_duration_seconds histogram',
      'http_request_duration_seconds_bucket{method="GET",endpoint="/",environment="dev",le="0.1"} 1',
      'http_request_duration_seconds_count{method="GET",endpoint="/",environment="dev"} 1',
      'http_requests_in_flight{environment="dev"} 0',
    ]),
    [],
  )
  t.same(lines.slice(-2), ['# EOF', ''])
})

t.test('resetMetrics zeroes counters and histograms', async (t) => {
  const metrics = new HttpMetrics('dev')
  const registry = new Registry()
  metrics.registerIn(registry)
  const requests = metrics.requestCell('GET', '/', 200)
  requests.value = 9
  const durations = metrics.durationCell('GET', '/')
  observe(durations, 0.2, TRACE_ID)
  observe(durations, 30, undefined)
  count(requests, TRACE_ID)
  metrics.countException(new Error('x'))
  metrics.inFlight = 1
  registry.resetMetrics()
  t.equal(requests.value, 0)
  t.equal(requests.exemplar.traceId, undefined, 'exemplars go with the values they point at')
  t.same(
    durations.exemplars.map((e) => e.traceId),
    new Array(DURATION_BUCKETS.length + 1).fill(undefined),
  )
  t.same(
    { count: durations.count, sum: durations.sum, buckets: [...durations.buckets] },
    { count: 0, sum: 0, buckets: new Array(DURATION_BUCKETS.length + 1).fill(0) },
  )
  const lines = (await registry.metrics()).split('\n')
  t.same(
    missing(lines, [
      'http_requests_total{method="GET",endpoint="/",status="200",environment="dev"} 0',
      'http_request_duration_seconds_bucket{method="GET",endpoint="/",environment="dev",le="+Inf"} 0',
      'http_request_duration_seconds_sum{method="GET",endpoint="/",environment="dev"} 0',
      'http_exceptions_total{exception_type="Error",environment="dev"} 0',
    ]),
    [],
  )
  t.ok(lines.includes('http_requests_in_flight{environment="dev"} 1'), 'the in-flight gauge is live state and is not reset')
})

t.test('a sampled request becomes the exemplar of its counter and of the bucket it falls in', async (t) => {
  const metrics = new HttpMetrics('dev')
  const requests = metrics.requestCell('GET', '/', 200)
  const durations = metrics.durationCell('GET', '/')
  const before = Date.now() / 1000
  count(requests, TRACE_ID)
  count(requests, undefined)
  observe(durations, 0.3, TRACE_ID)
  observe(durations, 0.001, undefined)
  t.equal(requests.value, 2)
  t.equal(requests.exemplar.traceId, TRACE_ID, 'an unsampled request leaves the last exemplar in place')
  t.equal(requests.exemplar.value, 1)
  t.ok(requests.exemplar.timestamp >= before && requests.exemplar.timestamp <= Date.now() / 1000)
  const le05 = durations.exemplars[7]
  t.same({ traceId: le05?.traceId, value: le05?.value }, { traceId: TRACE_ID, value: 0.3 })
  t.equal(durations.exemplars[0]?.traceId, undefined, 'the le=0.005 bucket had no sampled request')
})

t.test('exemplars appear in OpenMetrics output only, after the value they belong to', async (t) => {
  const metrics = new HttpMetrics('dev')
  count(metrics.requestCell('GET', '/', 200), TRACE_ID)
  observe(metrics.durationCell('GET', '/'), 0.3, TRACE_ID)
  observe(metrics.durationCell('GET', '/'), 20, TRACE_ID)
  const open = await render(metrics, Registry.OPENMETRICS_CONTENT_TYPE)
  const exemplar = (line: string | undefined): string | undefined => line?.split(' # ')[1]?.replace(/ [\d.]+$/, '')
  const find = (lines: string[], prefix: string): string | undefined => lines.find((l) => l.startsWith(prefix))
  t.equal(exemplar(find(open, 'http_requests_total{')), `{trace_id="${TRACE_ID}"} 1`)
  t.equal(exemplar(find(open, 'http_request_duration_seconds_bucket{method="GET",endpoint="/",environment="dev",le="0.5"}')), `{trace_id="${TRACE_ID}"} 0.3`)
  t.equal(exemplar(find(open, 'http_request_duration_seconds_bucket{method="GET",endpoint="/",environment="dev",le="+Inf"}')), `{trace_id="${TRACE_ID}"} 20`)
  t.equal(exemplar(find(open, 'http_request_duration_seconds_bucket{method="GET",endpoint="/",environment="dev",le="0.25"}')), undefined)
  t.equal(exemplar(find(open, 'http_request_duration_seconds_count{')), undefined)
  const text = await render(metrics)
  t.same(
    text.filter((l) => l.includes('trace_id')),
    [],
    'the Prometheus text format has no exemplars',
  )
})
