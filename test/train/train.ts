// `npm run train`: retrains the shipped models and writes lib/models/artifacts/. Deterministic, so
// on an unchanged tree it rewrites the same bytes; test/models/artifact.retrain.test.ts checks exactly that.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { artifactFiles } from './models.js'

// Runs compiled, from dist/test/train/.
const ARTIFACTS = fileURLToPath(new URL('../../../lib/models/artifacts/', import.meta.url))

for (const [path, content] of artifactFiles()) {
  const file = join(ARTIFACTS, path)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, content)
  process.stdout.write(`wrote lib/models/artifacts/${path}\n`)
}
