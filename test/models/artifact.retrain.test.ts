// Retrains in-process and compares with what is committed: the artifacts are reproducible from the
// training code and the pinned data sets, byte for byte, and good enough to ship.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { categoricalReference, numericalReference } from '../../lib/drift/reference.js'
import { readRows } from '../../lib/tools/loadgen/rows.js'
import { parseArtifact } from '../../lib/models/artifact.js'
import { ARTIFACTS } from '../fixtures/models.js'
import { artifactFiles, CARS_BINS, IRIS_BINS, trainCars, trainIris } from '../train/models.js'

t.test('iris: accuracy of at least 0.9 on the held-out 30 %', async (t) => {
  const { provenance } = trainIris()
  t.ok((provenance.metrics['accuracy'] as number) >= 0.9, `accuracy ${provenance.metrics['accuracy']}`)
  t.same(provenance.split, { test_fraction: 0.3, stratified: true, train_rows: 105, test_rows: 45 })
})

t.test('cars: R² of at least 0.7 on the held-out 30 %', async (t) => {
  const { provenance } = trainCars()
  t.ok((provenance.metrics['r2'] as number) >= 0.7, `R² ${provenance.metrics['r2']}`)
  t.equal(provenance.dataset.rows, 392, 'the 14 rows with a missing value are dropped')
})

t.test('retraining reproduces the committed files byte for byte, and they parse', async (t) => {
  const files = artifactFiles()
  t.same([...files.keys()].sort(), [
    'cars/1/model.json',
    'cars/1/reference-rows.csv',
    'cars/manifest.json',
    'iris/1/model.json',
    'iris/1/reference-rows.csv',
    'iris/manifest.json',
  ])
  for (const [path, content] of files) {
    const committed = readFileSync(new URL(path, ARTIFACTS), 'utf8')
    t.ok(committed === content, `${path} is identical (if not: npm run train, and review the diff)`)
    if (path.endsWith('model.json')) t.equal(parseArtifact(committed).sha256, parseArtifact(content).sha256)
    else if (path.endsWith('manifest.json')) t.same(JSON.parse(committed), { default_version: '1' })
  }
})

t.test("the shipped rows, read as svc loadgen reads them, are the rows of each model's reference", async (t) => {
  for (const [name, bins] of [
    ['iris', IRIS_BINS],
    ['cars', CARS_BINS],
  ] as const) {
    const artifact = parseArtifact(readFileSync(new URL(`${name}/1/model.json`, ARTIFACTS)))
    const path = fileURLToPath(new URL(`${name}/1/reference-rows.csv`, ARTIFACTS))
    const { rows } = await readRows({ path, file: path, format: 'csv', delimiter: ',' }, artifact.inputs, name)
    const reference = artifact.reference
    t.equal(rows.length, reference?.rows, `${name}: as many rows as the reference`)
    const rebuilt = artifact.inputs.map((input) =>
      input.type === 'numerical'
        ? numericalReference(
            input.name,
            rows.map((row) => row[input.name] as number),
            bins,
          )
        : categoricalReference(
            input.name,
            rows.map((row) => row[input.name] as string),
            input.levels,
          ),
    )
    t.same(rebuilt, reference?.features, `${name}: the references computed again from the rows are the shipped ones`)
  }
})
