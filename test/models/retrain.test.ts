// Retrains in-process and compares with what is committed: the artifacts are reproducible from the
// training code and the pinned data sets, byte for byte, and good enough to ship.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { parseArtifact } from '../../lib/models/artifact.js'
import { ARTIFACTS } from '../fixtures/models.js'
import { artifactFiles, trainCars, trainIris } from '../train/models.js'

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
  t.same([...files.keys()].sort(), ['cars/1/model.json', 'cars/manifest.json', 'iris/1/model.json', 'iris/manifest.json'])
  for (const [path, content] of files) {
    const committed = readFileSync(new URL(path, ARTIFACTS), 'utf8')
    t.ok(committed === content, `${path} is identical (if not: npm run train, and review the diff)`)
    if (path.endsWith('model.json')) t.equal(parseArtifact(committed).sha256, parseArtifact(content).sha256)
    else t.same(JSON.parse(committed), { default_version: '1' })
  }
})
