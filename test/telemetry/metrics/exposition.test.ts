// The exposition writer against prom-client's own rendering of the same registry: a running service
// with a large store (every per-model family populated, exemplars from sampled requests, feedback
// series), both formats, byte for byte apart from the values of the process and Node families, which
// move between two readings. Then the writer's slices: a render of many samples lets the loop run.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import t from 'tap'
import { artifactSha256 } from '../../../lib/models/artifact.js'
import { counterCell, counterSeries, registerSeries } from '../../../lib/telemetry/metrics/cells.js'
import { createExpositionWriter, LINES_PER_PART } from '../../../lib/telemetry/metrics/exposition.js'
import { startApp } from '../../fixtures/app.js'
import { tempTree } from '../../fixtures/model-store.js'
import { ROOT } from '../../fixtures/spawn.js'

const MODELS = 120
const SECRET = 'exposition-test-secret-0123456789abcdef'

const irisStore = (): Record<string, string> => {
  const iris = JSON.parse(readFileSync(join(ROOT, 'lib/models/artifacts/iris/1/model.json'), 'utf8')) as Record<string, unknown>
  const files: Record<string, string> = {}
  for (let i = 0; i < MODELS; i++) {
    const name = `iris-${i}`
    const artifact = { ...iris, name }
    files[`${name}/manifest.json`] = '{"default_version":"1"}\n'
    files[`${name}/1/model.json`] = JSON.stringify({ ...artifact, sha256: artifactSha256(artifact) })
  }
  return files
}

/** prom-client's rendering, with every counter's name as it was before (an OpenMetrics render strips it in place). */
const promClientText = async (registry: Registry, openMetrics: boolean): Promise<string> => {
  const names = registry.getMetricsAsArray().map((metric) => [metric, metric.name] as const)
  registry.setContentType((openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE) as typeof Registry.PROMETHEUS_CONTENT_TYPE)
  try {
    return await registry.metrics()
  } finally {
    for (const [metric, name] of names) metric.name = name
  }
}

/**
 * The text without the samples of prom-client's process and Node families, whose values and even
 * series (a GC kind, an Immediate while a render yields) change between two readings; their HELP
 * and TYPE lines stay. prom-client's own histograms are compared whole in the next test.
 */
const steady = (text: string): string => text.replace(/^(?:process|nodejs)_\S*(?:\{[^}]*\})? \S+(?: # .*)?\n/gm, '')

t.test("a large store's exposition is prom-client's, byte for byte, in both formats", async (t) => {
  const store = await tempTree(t, irisStore())
  const { base, app } = await startApp(t, {
    SVC_MODEL_STORE: store,
    SVC_FEEDBACK_SECRET: SECRET,
    ENABLE_CONSOLE_TRACES: 'true',
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.5',
  })
  const row = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }
  for (let i = 0; i < MODELS; i++) {
    const answer = await fetch(`${base}/api/v1/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: `iris-${i}`, instances: [row, { ...row, petal_length: 99 }] }),
    })
    t.equal(answer.status, 200)
  }
  const refused = await fetch(`${base}/api/v1/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })
  t.equal(refused.status, 400)
  for (const openMetrics of [false, true]) {
    const accept = openMetrics ? 'application/openmetrics-text' : undefined
    const ours = (await app.metrics.render(accept)).text
    const theirs = await promClientText(app.metrics.prom, openMetrics)
    t.ok(ours.split('\n').length > MODELS * 60, `a large exposition: ${ours.split('\n').length} lines`)
    if (openMetrics) t.match(ours, / # \{trace_id="[0-9a-f]{32}"\} /, 'with exemplars')
    t.equal(steady(ours), steady(theirs), openMetrics ? 'OpenMetrics' : 'text 0.0.4')
  }
})

t.test('what the service does not register is written as prom-client writes it', async (t) => {
  const registry = new Registry()
  registry.setDefaultLabels({ environment: 'dev' })
  const histogram = new Histogram({
    name: 'odd_seconds',
    help: 'Back\\slash\nand newline.',
    labelNames: ['who', 'environment'],
    buckets: [1],
    registers: [registry],
  })
  histogram.observe({ who: 'a"b\\c\nd é 😀', environment: 'mine' }, 0.5)
  // Each character that escapes, alone in a value.
  for (const who of ['q"', 'b\\', 'n\n']) histogram.observe({ who, environment: 'mine' }, 0.5)
  const counter = new Counter({ name: 'odd_total', help: 'Counts.', labelNames: ['n'], registers: [registry] })
  counter.inc({ n: 1 }, 2)
  new Counter({ name: 'lonely', help: 'No samples.', registers: [registry] })
  new Histogram({ name: 'unlabelled_seconds', help: 'No labels.', buckets: [1], registers: [registry] }).observe(2)
  const edges = new Gauge({ name: 'edges', help: 'Infinities.', labelNames: ['side'], registers: [registry] })
  edges.set({ side: 'low' }, Number.NEGATIVE_INFINITY)
  edges.set({ side: 'high' }, Number.POSITIVE_INFINITY)
  // A collector of the bare shape the registry accepts: a sample without labels, a family without values.
  const bareCollector = (name: string, values?: readonly { value: number }[]) => ({
    name,
    help: 'Bare.',
    type: 'gauge',
    aggregator: 'sum',
    get: () => ({ name, help: 'Bare.', type: 'gauge', aggregator: 'sum', values }),
    reset() {},
  })
  registry.registerMetric(bareCollector('bare_one', [{ value: 1 }]) as unknown as Gauge)
  registry.registerMetric(bareCollector('bare_none') as unknown as Gauge)
  const cell = counterCell({})
  cell.value = Number.NaN
  registerSeries(registry, [counterSeries('plain_total', 'No labels.', new Map([['', cell]]))])
  const writer = createExpositionWriter({ environment: 'dev' })
  for (const openMetrics of [false, true]) {
    t.equal((await writer.render(registry.getMetricsAsArray(), openMetrics)).toString(), await promClientText(registry, openMetrics))
  }
  const bare = new Registry()
  new Counter({ name: 'minus', help: 'h', registers: [bare] }).inc(0)
  new Histogram({ name: 'bare_seconds', help: 'h', buckets: [1], registers: [bare] }).observe(2)
  t.equal((await createExpositionWriter({}).render(bare.getMetricsAsArray(), false)).toString(), await promClientText(bare, false))
})

t.test('a metric without get() is refused, as prom-client refuses it', async (t) => {
  await t.rejects(createExpositionWriter({}).render([{ name: 'broken' }], false), TypeError)
})

t.test('a long render lets the loop run between slices', async (t) => {
  const registry = new Registry()
  const cells = new Map(Array.from({ length: 60_000 }, (_, i) => [i, counterCell({ model: `m${i}`, version: '1' })]))
  registerSeries(registry, [counterSeries('many_total', 'Many.', cells)])
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const text = (await createExpositionWriter({ environment: 'dev' }).render(registry.getMetricsAsArray(), false)).toString()
  clearInterval(timer)
  t.equal(text.split('\n').length, 60_000 + 3)
  t.ok(ticks > 0, `the timer ran ${ticks} times during the render`)
})

// With every slice over at once, the writer yields after each part it writes: a part at least every
// LINES_PER_PART lines, whatever the families' sizes. Two lines short of a part before: the next
// family's HELP and TYPE line is the one that fills it, which once left every later line in one
// part and no yield at all.
for (const before of [0, LINES_PER_PART - 2, LINES_PER_PART - 1]) {
  t.test(`the text is written, and the loop let run, every ${LINES_PER_PART} lines (a family of ${before} samples before)`, async (t) => {
    let yields = 0
    const { createExpositionWriter: create } = await t.mockImport<typeof import('../../../lib/telemetry/metrics/exposition.js')>(
      '../../../lib/telemetry/metrics/exposition.js',
      {
        '../../../lib/core/schedule/slices.js': {
          sliceElapsed: () => true,
          nextSlice: async () => {
            yields++
            return performance.now()
          },
        },
      },
    )
    const registry = new Registry()
    const family = (name: string, size: number) =>
      counterSeries(name, 'Many.', new Map(Array.from({ length: size }, (_, i) => [i, counterCell({ n: `${i}` })])))
    registerSeries(registry, [family('before_total', before), family('many_total', 10_000)])
    const text = (await create({}).render(registry.getMetricsAsArray(), false)).toString()
    t.equal(text, await promClientText(registry, false))
    t.ok(yields >= Math.floor((before + 10_000) / LINES_PER_PART), `${yields} yields`)
  })
}

t.test('a body handed back lends its buffer to the next render; one still out never is', async (t) => {
  const registry = new Registry()
  registerSeries(registry, [counterSeries('some_total', 'Some.', new Map([[0, counterCell({ n: '0' })]]))])
  const metrics = registry.getMetricsAsArray()
  const writer = createExpositionWriter({})
  const first = await writer.render(metrics, false)
  const second = await writer.render(metrics, false)
  t.not(second.buffer, first.buffer, 'the first body is still out: the second gets a buffer of its own')
  writer.release(second)
  writer.release(first)
  const third = await writer.render(metrics, false)
  t.equal(third.buffer, first.buffer, 'of two handed back, the larger buffer is kept')
  t.equal(third.toString(), first.toString())
  writer.release(first)
  t.not((await writer.render(metrics, false)).buffer, third.buffer, 'a body handed back again lends nothing: its buffer is out with the third')
  writer.release(third)
  writer.release(second)
  t.equal((await writer.render(metrics, false)).buffer, third.buffer, 'a smaller buffer handed back after does not replace the kept one')
})
