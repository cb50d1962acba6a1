import { Gauge, Registry } from 'prom-client'
import t from 'tap'
import { createLineWriter } from '../../../lib/telemetry/line-writer.js'
import { createLogger } from '../../../lib/telemetry/logger.js'
import { createMetricsRegistry, prefersOpenMetrics } from '../../../lib/telemetry/metrics/registry.js'
import { counterCell, counterSeries, registerSeries } from '../../../lib/telemetry/metrics/cells.js'
import { sample } from '../../fixtures/metrics-text.js'

const PROMETHEUS_2_42 = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'

const ACCEPT_CASES: readonly Readonly<{ name: string; accept: string | undefined; isOpenMetrics: boolean }>[] = [
  { name: 'no Accept header', accept: undefined, isOpenMetrics: false },
  { name: 'an empty Accept header', accept: '', isOpenMetrics: false },
  { name: 'text/plain', accept: 'text/plain', isOpenMetrics: false },
  { name: 'the Prometheus 0.0.4 text format', accept: 'text/plain;version=0.0.4', isOpenMetrics: false },
  { name: "Prometheus 2.42's scrape header", accept: PROMETHEUS_2_42, isOpenMetrics: true },
  { name: 'OpenMetrics alone', accept: 'application/openmetrics-text', isOpenMetrics: true },
  { name: 'OpenMetrics in another case, with spaces', accept: ' Application/OpenMetrics-Text ; Version=1.0.0', isOpenMetrics: true },
  { name: 'OpenMetrics with q=0', accept: 'application/openmetrics-text;q=0', isOpenMetrics: false },
  { name: 'OpenMetrics with a malformed q', accept: 'application/openmetrics-text;q=high', isOpenMetrics: false },
  { name: 'text ranked above OpenMetrics', accept: 'application/openmetrics-text;q=0.5,text/plain;q=0.9', isOpenMetrics: false },
  { name: 'text/* ranked above OpenMetrics', accept: 'text/*;q=0.9,application/openmetrics-text;q=0.8', isOpenMetrics: false },
  { name: '*/* ranked above OpenMetrics', accept: '*/*,application/openmetrics-text;q=0.8', isOpenMetrics: false },
  { name: 'OpenMetrics ranked above text', accept: 'text/plain;q=0.4,application/openmetrics-text;q=0.6', isOpenMetrics: true },
  { name: '*/* only', accept: '*/*', isOpenMetrics: false },
  { name: 'an unrelated media type', accept: 'application/json', isOpenMetrics: false },
]

for (const { name, accept, isOpenMetrics } of ACCEPT_CASES) {
  t.test(`prefersOpenMetrics is ${isOpenMetrics} for ${name}`, async (t) => {
    t.equal(prefersOpenMetrics(accept), isOpenMetrics)
  })
}

const create = () => createMetricsRegistry({ environment: 'stage', version: '1.2.3' })

t.test('render answers Prometheus text by default', async (t) => {
  const { contentType, text } = await create().render(undefined)
  t.equal(contentType, Registry.PROMETHEUS_CONTENT_TYPE)
  t.notMatch(text, /# EOF/)
  t.match(text, /^# TYPE http_requests_total counter$/m)
})

t.test('render answers OpenMetrics when the Accept header prefers it', async (t) => {
  const { contentType, text } = await create().render(PROMETHEUS_2_42)
  t.equal(contentType, Registry.OPENMETRICS_CONTENT_TYPE)
  t.ok(text.endsWith('\n# EOF\n'))
  t.match(text, /^# TYPE http_requests counter$/m)
})

t.test('render includes svc_build_info with version, Node version and environment', async (t) => {
  const { text } = await create().render(undefined)
  t.ok(text.split('\n').includes(`svc_build_info{version="1.2.3",node_version="${process.version}",environment="stage"} 1`), 'build info line')
  t.match(text, /^# TYPE svc_build_info gauge$/m)
})

t.test('render includes the default process and Node metrics with the environment label', async (t) => {
  const { text } = await create().render(undefined)
  t.match(text, /^# TYPE process_cpu_user_seconds_total counter$/m)
  t.match(text, /^process_cpu_user_seconds_total\{environment="stage"\} [\d.e-]+$/m)
  t.match(text, /^nodejs_eventloop_lag_seconds\{environment="stage"\} /m)
})

t.test('render includes the HTTP series fed through the http cells', async (t) => {
  const metrics = create()
  metrics.http.requestCell('GET', '/', 200).value = 4
  const { text } = await metrics.render(undefined)
  t.ok(text.split('\n').includes('http_requests_total{method="GET",endpoint="/",status="200",environment="stage"} 4'))
  t.ok(text.split('\n').includes('http_requests_in_flight{environment="stage"} 0'))
})

t.test('the registry is exposed and holds the metrics render publishes', async (t) => {
  const metrics = create()
  t.type(metrics.prom, Registry)
  t.ok(metrics.prom.getSingleMetric('svc_build_info'))
  t.ok(metrics.prom.getSingleMetric('http_requests_total'))
})

t.test('concurrent renders with different Accept headers each get their own format', async (t) => {
  const metrics = create()
  metrics.http.requestCell('GET', '/', 200).value = 1
  const [open1, prom, open2] = await Promise.all([
    metrics.render('application/openmetrics-text'),
    metrics.render('text/plain'),
    metrics.render(PROMETHEUS_2_42),
  ])
  for (const [name, open] of [
    ['first', open1],
    ['third', open2],
  ] as const) {
    t.equal(open?.contentType, Registry.OPENMETRICS_CONTENT_TYPE, `${name} content type`)
    t.ok(open?.text.endsWith('\n# EOF\n'), `${name} ends with # EOF`)
    t.ok(open?.text.split('\n').includes('http_requests_total{method="GET",endpoint="/",status="200",environment="stage"} 1'), `${name} counter sample`)
  }
  t.equal(prom?.contentType, Registry.PROMETHEUS_CONTENT_TYPE)
  t.notMatch(prom?.text, /# EOF/)
})

/** A gauge whose collect() counts the renders that read it. */
const countRenders = (metrics: ReturnType<typeof create>): { renders: () => number } => {
  let renders = 0
  new Gauge({
    name: 'renders_seen',
    help: 'Renders that read this gauge.',
    registers: [metrics.prom],
    collect() {
      renders++
    },
  })
  return { renders: () => renders }
}

t.test('scrapes arriving while a render is in flight share it: one render, the same bytes', async (t) => {
  const metrics = create()
  const { renders } = countRenders(metrics)
  const scrapes = await Promise.all(Array.from({ length: 8 }, () => metrics.render(undefined)))
  t.equal(renders(), 1, 'eight scrapes, one render')
  for (const scrape of scrapes) t.equal(scrape.body, scrapes[0]?.body, 'the very same body')
  const open = await Promise.all([metrics.render('application/openmetrics-text'), metrics.render(PROMETHEUS_2_42)])
  t.equal(renders(), 2, 'one render for the OpenMetrics pair')
  t.equal(open[0]?.body, open[1]?.body)
  await metrics.render(undefined)
  t.equal(renders(), 3, 'a scrape after the render settled gets a render of its own')
})

t.test("a shared render's buffer serves the next render only once every scrape released it", async (t) => {
  const metrics = create()
  const [first, second] = await Promise.all([metrics.render(undefined), metrics.render(undefined)])
  first?.release()
  first?.release()
  const meanwhile = await metrics.render(undefined)
  t.not(meanwhile.body.buffer, first?.body.buffer, 'one scrape still sending it: a new buffer, though the other released twice')
  second?.release()
  const after = await metrics.render(undefined)
  t.equal(after.body.buffer, first?.body.buffer, 'released by both: the buffer is written again')
})

t.test('a failed render does not stop later renders', async (t) => {
  const metrics = create()
  new Gauge({
    name: 'broken_gauge',
    help: 'Fails to collect.',
    registers: [metrics.prom],
    collect() {
      throw new Error('collect failed')
    },
  })
  const failed = metrics.render(undefined)
  const next = metrics.render(undefined)
  await t.rejects(failed, /collect failed/)
  await t.rejects(next, /collect failed/)
  metrics.prom.removeSingleMetric('broken_gauge')
  const { contentType } = await metrics.render(undefined)
  t.equal(contentType, Registry.PROMETHEUS_CONTENT_TYPE)
})

t.test('a classic scrape after an OpenMetrics one still names counters with _total', async (t) => {
  const metrics = createMetricsRegistry({ environment: 'dev', version: '9.9.9' })
  metrics.http.requestCell('GET', '/', 200).value = 1
  t.match((await metrics.render(undefined)).text, /^http_requests_total\{/m)
  t.match((await metrics.render('application/openmetrics-text')).text, /^http_requests_total\{/m)
  const after = (await metrics.render(undefined)).text
  t.match(after, /^# TYPE http_requests_total counter$/m)
  t.match(after, /^http_requests_total\{/m)
  t.match(after, /^process_cpu_user_seconds_total\{/m)
})

t.test('svc_log_lines_dropped_total follows the count it is given, with the environment label', async (t) => {
  let dropped = 0
  const metrics = createMetricsRegistry({ environment: 'stage', version: '1.2.3', droppedLogLines: () => dropped })
  const value = async (accept?: string) => sample((await metrics.render(accept)).text, 'svc_log_lines_dropped_total', { environment: 'stage' })
  const text = (await metrics.render(undefined)).text
  t.match(text, /^# TYPE svc_log_lines_dropped_total counter$/m)
  t.match(text, /^# HELP svc_log_lines_dropped_total Log lines lost because their reader went away/m)
  t.equal(await value(), 0, 'exported at 0 from the start')
  dropped = 3
  t.equal(await value(), 3)
  t.equal(await value(), 3, 'a scrape without loss since the last adds nothing')
  dropped = 10
  t.equal(await value(PROMETHEUS_2_42), 10, 'OpenMetrics scrapes follow too')
  t.equal(await value(), 10)
})

t.test('a line writer whose reader went away feeds svc_log_lines_dropped_total', async (t) => {
  const epipe = Object.assign(new Error('EPIPE: broken pipe, write'), { code: 'EPIPE' })
  const writer = createLineWriter(1, () => {
    throw epipe
  })
  const metrics = createMetricsRegistry({ environment: 'dev', version: '1.2.3', droppedLogLines: writer.dropped })
  const logger = createLogger({ name: 'svc', level: 'info', format: 'json', write: writer.write })
  logger.info('first')
  logger.info('second')
  writer.flush()
  logger.info('third')
  t.equal(sample((await metrics.render(undefined)).text, 'svc_log_lines_dropped_total', { environment: 'dev' }), 3)
})

t.test('without a count of lost lines there is no svc_log_lines_dropped_total', async (t) => {
  t.notMatch((await create().render(undefined)).text, /svc_log_lines_dropped/)
})

t.test('a render of many series lets the loop run while it writes them', async (t) => {
  const metrics = create()
  const cells = new Map(Array.from({ length: 60_000 }, (_, i) => [i, counterCell({ model: `m${i}`, version: '1' })]))
  registerSeries(metrics.prom, [counterSeries('svc_many_total', 'Many.', cells)])
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const { text } = await metrics.render(undefined)
  clearInterval(timer)
  t.match(text, /^svc_many_total\{model="m59999",version="1",environment="stage"\} 0$/m)
  t.ok(ticks > 0, `a 1 ms timer ran ${ticks} times during the render: it is not one run of the loop`)
})
