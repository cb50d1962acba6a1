// What svc relies on inside prom-client, beyond its documented API, pinned against the real package
// (lib/telemetry/metrics/registry.ts, "prom-client 15.1.3 facts relied on"):
//   lib/telemetry/metrics/cells.ts      registerSeries hands the registry plain objects cast to `Metric`
//                                       (`as unknown as Metric`): the registry must take any object keyed
//                                       by its `name`, hand it out through getMetricsAsArray(), read it
//                                       through `get()` alone and reset it through `reset()`.
//   lib/telemetry/metrics/exposition.ts writes what prom-client's own render would; its test compares
//                                       the two, so the render's habits are pinned here too: an
//                                       OpenMetrics render strips `_total` from counters' `name` in place
//                                       (the comparison writes the names back after it), and a
//                                       collector's samples print as get() returns them.
// A prom-client update that changes any of this fails here, not in production.
import { collectDefaultMetrics, Counter, type Metric, Registry } from 'prom-client'
import t from 'tap'
import {
  count,
  counterCell,
  counterSeries,
  gaugeSeries,
  histogramCell,
  histogramSeries,
  observe,
  registerSeries,
  type Series,
} from '../../../lib/telemetry/metrics/cells.js'
import { createMetricsRegistry } from '../../../lib/telemetry/metrics/registry.js'

const OPENMETRICS = Registry.OPENMETRICS_CONTENT_TYPE
const PROMETHEUS = Registry.PROMETHEUS_CONTENT_TYPE

/** `name`, which prom-client's types leave off its metric classes. */
const nameOf = (metric: object): string => (metric as { name: string }).name
/** Whether getMetricsAsArray() hands out `metric` itself. */
const holds = (registry: Registry, metric: object): boolean => registry.getMetricsAsArray().some((held) => held === metric)

const render = async (registry: Registry, contentType: typeof PROMETHEUS | typeof OPENMETRICS): Promise<string> => {
  registry.setContentType(contentType as typeof PROMETHEUS)
  return registry.metrics()
}

t.test("an OpenMetrics render strips _total from a counter's own name, and leaves it stripped", async (t) => {
  const registry = new Registry()
  const counter = new Counter({ name: 'pinned_total', help: 'Pinned.', registers: [registry] })
  counter.inc()
  const open = await render(registry, OPENMETRICS)
  t.match(open, /^# TYPE pinned counter$/m)
  t.match(open, /^pinned_total 1$/m, 'each sample gets _total back as it is printed')
  t.equal(nameOf(counter), 'pinned', 'the metric itself is renamed: why a render by prom-client is followed by writing the names back')
  t.match(await render(registry, PROMETHEUS), /^pinned 1$/m, 'left so, the next classic scrape prints the counter without _total')
})

t.test('getMetricsAsArray hands out the registered metrics themselves, and a render prints the name they hold then', async (t) => {
  const registry = new Registry()
  const counter = new Counter({ name: 'pinned_total', help: 'Pinned.', registers: [registry] })
  const names = registry.getMetricsAsArray().map((metric) => [metric, metric.name] as const)
  t.ok(holds(registry, counter), 'the object itself, not a copy')
  await render(registry, OPENMETRICS)
  // The restore test/telemetry/metrics/exposition.test.ts does after prom-client's render.
  for (const [metric, name] of names) metric.name = name
  t.equal(nameOf(counter), 'pinned_total', '`name` is a writable field')
  t.match(await render(registry, PROMETHEUS), /^# TYPE pinned_total counter\npinned_total 0$/m)
})

t.test('the registry keys a metric by its name at registration, whatever a render did to `name` since', async (t) => {
  const registry = new Registry()
  const counter = new Counter({ name: 'pinned_total', help: 'Pinned.', registers: [registry] })
  await render(registry, OPENMETRICS)
  t.equal(nameOf(counter), 'pinned')
  t.equal(registry.getSingleMetric('pinned_total'), counter, 'found by the name lib/insights/figures.ts asks for')
  t.equal(registry.getSingleMetric('pinned'), undefined)
  registry.removeSingleMetric('pinned_total')
  t.same(registry.getMetricsAsArray(), [], 'removed by the name it was registered under')
})

t.test('collectDefaultMetrics registers the three gauges named _total that registry.ts removes, beside the per-type ones', async (t) => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    t.equal((registry.getSingleMetric(name) as (Metric & { type?: string }) | undefined)?.type, 'gauge', `${name} is a gauge, as registered`)
    const perType = name.slice(0, -'_total'.length)
    t.ok(registry.getSingleMetric(perType), `${perType} stays`)
  }
  const svc = createMetricsRegistry({ environment: 'test', version: '0.0.0' })
  t.equal(svc.prom.getSingleMetric('nodejs_active_handles_total'), undefined, 'svc removed them by those names')
  t.notMatch((await svc.render(undefined)).text, /_active_\w+_total/)
})

t.test('one registry switches between the two formats, and takes no other', async (t) => {
  const registry = new Registry()
  t.ok((await render(registry, OPENMETRICS)).endsWith('# EOF\n'))
  t.equal(registry.contentType, OPENMETRICS)
  t.notMatch(await render(registry, PROMETHEUS), /# EOF/)
  t.throws(() => registry.setContentType('text/html' as typeof PROMETHEUS), /Content type text\/html is unsupported/)
})

/** svc's three kinds of series over cells, with values and exemplars whose every digit is known. */
const pinnedSeries = () => {
  const requests = counterCell({ route: '/a' })
  count(requests, undefined)
  count(requests, 'abc')
  requests.exemplar.timestamp = 1700000000.5
  const durations = histogramCell({ route: '/a' }, [0.1, 1])
  observe(durations, 0.05, 'def')
  observe(durations, 5, undefined)
  ;(durations.exemplars[0] as { timestamp: number }).timestamp = 1700000001.25
  const series: Series[] = [
    counterSeries('svc_pinned_total', 'Requests.', new Map([['/a', requests]])),
    histogramSeries('svc_pinned_seconds', 'Durations.', new Map([['/a', durations]])),
    gaugeSeries('svc_pinned_open', 'Open.', () => [{ labels: {}, value: 3 }]),
  ]
  return { requests, durations, series }
}

const CLASSIC = `# HELP svc_pinned_total Requests.
# TYPE svc_pinned_total counter
svc_pinned_total{route="/a",environment="test"} 2

# HELP svc_pinned_seconds Durations.
# TYPE svc_pinned_seconds histogram
svc_pinned_seconds_bucket{route="/a",le="0.1",environment="test"} 1
svc_pinned_seconds_bucket{route="/a",le="1",environment="test"} 1
svc_pinned_seconds_bucket{route="/a",le="+Inf",environment="test"} 2
svc_pinned_seconds_sum{route="/a",environment="test"} 5.05
svc_pinned_seconds_count{route="/a",environment="test"} 2

# HELP svc_pinned_open Open.
# TYPE svc_pinned_open gauge
svc_pinned_open{environment="test"} 3
`

const OPEN = `# HELP svc_pinned Requests.
# TYPE svc_pinned counter
svc_pinned_total{route="/a",environment="test"} 2 # {trace_id="abc"} 1 1700000000.5
# HELP svc_pinned_seconds Durations.
# TYPE svc_pinned_seconds histogram
svc_pinned_seconds_bucket{route="/a",le="0.1",environment="test"} 1 # {trace_id="def"} 0.05 1700000001.25
svc_pinned_seconds_bucket{route="/a",le="1",environment="test"} 1
svc_pinned_seconds_bucket{route="/a",le="+Inf",environment="test"} 2
svc_pinned_seconds_sum{route="/a",environment="test"} 5.05
svc_pinned_seconds_count{route="/a",environment="test"} 2
# HELP svc_pinned_open Open.
# TYPE svc_pinned_open gauge
svc_pinned_open{environment="test"} 3
# EOF
`

t.test('registerMetric takes a plain object as a metric, keyed by its name, and refuses a second of that name', async (t) => {
  const registry = new Registry()
  const { series } = pinnedSeries()
  registerSeries(registry, series)
  const collector = (series[0] as Series).collector
  t.equal(registry.getSingleMetric('svc_pinned_total'), collector as unknown as Metric, 'the object itself, found by its name')
  t.throws(() => registerSeries(registry, [pinnedSeries().series[0] as Series]), /A metric with the name svc_pinned_total has already been registered/)
})

t.test("a render prints what a collector's get() returns: labels, then the registry's default labels, metricName, exemplars", async (t) => {
  const registry = new Registry()
  registry.setDefaultLabels({ environment: 'test' })
  const { series } = pinnedSeries()
  registerSeries(registry, series)
  t.equal(await render(registry, PROMETHEUS), CLASSIC, 'the text format, without exemplars')
  t.equal(await render(registry, OPENMETRICS), OPEN, 'OpenMetrics, with them')
})

t.test('an OpenMetrics render renames a collector as it renames its own counters: get() must read `this.name`', async (t) => {
  const registry = new Registry()
  registry.setDefaultLabels({ environment: 'test' })
  const { series } = pinnedSeries()
  registerSeries(registry, series)
  const collector = (series[0] as Series).collector
  await render(registry, OPENMETRICS)
  t.equal(collector.name, 'svc_pinned', 'renamed in place: a name captured instead would print svc_pinned_total_total')
  t.ok(holds(registry, collector), 'so a restore through getMetricsAsArray() reaches it')
  collector.name = 'svc_pinned_total'
  t.equal(await render(registry, PROMETHEUS), CLASSIC)
})

t.test('resetMetrics() resets a collector through its reset()', async (t) => {
  const registry = new Registry()
  const { requests, durations, series } = pinnedSeries()
  registerSeries(registry, series)
  registry.resetMetrics()
  t.equal(requests.value, 0)
  t.equal(durations.count, 0)
  t.equal(requests.exemplar.traceId, undefined)
})

t.test('a collector found by name answers get() with its samples, as lib/insights/figures.ts reads them', async (t) => {
  const registry = new Registry()
  registerSeries(registry, pinnedSeries().series)
  const metric = registry.getSingleMetric('svc_pinned_seconds') as Metric
  // An iterable, read as figures.ts reads it (for…of), not an array: prom-client's types say array.
  const { values } = await metric.get()
  t.match([...values][0], { metricName: 'svc_pinned_seconds_bucket', labels: { route: '/a', le: '0.1' }, value: 1 })
})
