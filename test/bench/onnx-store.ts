// The benchmark's model store, written once per run into a temporary directory and served with
// SVC_MODEL_STORE=<dir>, so the built-in kernel and ONNX Runtime answer from the same store and
// the same kind of process:
//   iris/       a copy of the shipped kernel model (lib/models/artifacts/iris)
//   iris_onnx/  an iris-sized ONNX classifier: generate.py's linear-strings-zipmap, a
//               LinearClassifier over X [N, 4] float (the iris features, named by metadata.json),
//               classes setosa/versicolor/virginica, ending in ZipMap
//   forest/     a tree ensemble of realistic size: generate.py's forest, a TreeEnsembleRegressor of
//               300 trees of depth 4 to 6 over X [N, 8] float (features x0…x7), output `variable`
// The graphs come from test/fixtures/onnx/generate.py under Debian's /usr/bin/python3 (python3-onnx);
// without it the store holds iris alone and `skipped` says why.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { mulberry32 } from '../../lib/tools/loadgen/random.js'

const run = promisify(execFile)

/** Debian's interpreter: the one python3-onnx installs into (a pyenv python3 first on PATH has no onnx). */
export const PYTHON = '/usr/bin/python3'

export const IRIS_FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const
export const FOREST_FEATURES = Array.from({ length: 8 }, (_, i) => `x${i}`)

export type BenchStore = Readonly<{
  dir: string
  /** Why the ONNX models are missing from the store; undefined when they are in it. */
  skipped: string | undefined
  /** Removes the directory. */
  remove(): Promise<void>
}>

/** `<dir>/<model>/1/` holding `files`, and a manifest making 1 the default. */
export const writeVersion = async (dir: string, model: string, files: Readonly<Record<string, string | Uint8Array>>): Promise<void> => {
  await mkdir(join(dir, model, '1'), { recursive: true })
  await writeFile(join(dir, model, 'manifest.json'), '{"default_version":"1"}\n')
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, model, '1', name), content)
}

/** Writes the store under a fresh temporary directory; `root` is the repository's. */
export const createBenchStore = async (root: string): Promise<BenchStore> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-store-'))
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true })
  await cp(join(root, 'lib/models/artifacts/iris'), join(dir, 'iris'), { recursive: true })
  try {
    await run(PYTHON, ['-c', 'import onnx'])
  } catch {
    return { dir, skipped: `${PYTHON} cannot import onnx (install Debian's python3-onnx)`, remove }
  }
  const graphs = await mkdtemp(join(tmpdir(), 'svc-bench-graphs-'))
  try {
    await run(PYTHON, [join(root, 'test/fixtures/onnx/generate.py'), graphs], { maxBuffer: 16 * 1024 * 1024 })
    await writeVersion(dir, 'iris_onnx', {
      'model.onnx': await readFile(join(graphs, 'linear-strings-zipmap.onnx')),
      'metadata.json': `${JSON.stringify({ features: IRIS_FEATURES, type: 'LinearClassifier' })}\n`,
    })
    await writeVersion(dir, 'forest', {
      'model.onnx': await readFile(join(graphs, 'forest.onnx')),
      'metadata.json': `${JSON.stringify({ features: FOREST_FEATURES, type: 'TreeEnsembleRegressor' })}\n`,
    })
  } finally {
    await rm(graphs, { recursive: true, force: true })
  }
  return { dir, skipped: undefined, remove }
}

/**
 * `count` rows of the forest's eight features, each standard normal (Box–Muller over mulberry32,
 * seed fixed, four decimals: what a client sends), so every run sends the same bodies and the trees'
 * thresholds, drawn in [−2, 2), send rows down both branches.
 */
export const forestRows = (count: number, seed = 20240611): Record<string, number>[] => normalRows(FOREST_FEATURES, count, seed)

/** `count` rows of `features`, each standard normal with four decimals, as forestRows draws them. */
export const normalRows = (features: readonly string[], count: number, seed: number): Record<string, number>[] => {
  const random = mulberry32(seed)
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  return Array.from({ length: count }, () => Object.fromEntries(features.map((name) => [name, Math.round(normal() * 1e4) / 1e4])))
}
