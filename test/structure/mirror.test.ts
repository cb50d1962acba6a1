// test/ mirrors lib/ (lib/README.md, Layout): `test/<path>.test.ts` tests `lib/<path>.ts`, and a
// module with several test files names each aspect, `test/<path>.<aspect>.test.ts`. Tests of the
// whole service keep folders of their own. Every lib module is imported by some file under test/.
// A failure names the file, so the fix starts from the message; an exception is listed here with why.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { readImportGraph, ROOT } from '../fixtures/import-graph.js'

/** Folders of tests that run the service whole, or check what is not lib/: they mirror nothing. */
const OWN_FOLDERS = ['integration', 'ops', 'browser', 'bench', 'reliability', 'train', 'structure', 'fixtures']

/** Test files that mirror no module, and why. */
const UNMIRRORED: Readonly<Record<string, string>> = {}

/** lib modules no test imports, and why. */
const UNIMPORTED: Readonly<Record<string, string>> = {
  'lib/models/onnx/pool/worker.ts': 'a worker thread started by its file (workers.ts); test/models/onnx/pool/worker-session.test.ts starts it',
}

const testFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return dir === 'test' && OWN_FOLDERS.includes(entry.name) ? [] : testFiles(path)
    return entry.name.endsWith('.test.ts') ? [path] : []
  })

/** The lib module a test file mirrors: its path less `.test.ts` and any `.<aspect>`, under lib/. */
export const mirrored = (file: string): string | undefined => {
  const stem = file.replace(/^test\//, 'lib/').replace(/\.test\.ts$/, '')
  for (let name = stem; ; ) {
    if (existsSync(join(ROOT, `${name}.ts`))) return `${name}.ts`
    const dot = name.lastIndexOf('.')
    if (dot <= name.lastIndexOf('/')) return undefined
    name = name.slice(0, dot)
  }
}

t.test('every test file outside the service-wide folders is named after the lib module it tests', async (t) => {
  const files = testFiles('test')
  t.ok(files.length > 50, `${files.length} test files`)
  t.same(
    files.filter((file) => mirrored(file) === undefined && !(file in UNMIRRORED)),
    [],
  )
  t.same(
    Object.keys(UNMIRRORED).filter((file) => !files.includes(file) || mirrored(file) !== undefined),
    [],
    'every listed exception exists and mirrors nothing',
  )
})

t.test('an aspect names its module; a name that is no module mirrors nothing', async (t) => {
  t.equal(mirrored('test/models/registry/registry.reload.test.ts'), 'lib/models/registry/registry.ts')
  t.equal(mirrored('test/core/router.test.ts'), 'lib/core/router.ts')
  t.equal(mirrored('test/models/no-such.test.ts'), undefined)
})

t.test('every lib module is imported by a file under test/', async (t) => {
  const lib = readImportGraph(['lib'])
  const imported = new Set([...readImportGraph(['test']).values()].flat())
  t.ok(lib.size > 100, `${lib.size} modules`)
  t.same(
    [...lib.keys()].filter((module) => !imported.has(module) && !(module in UNIMPORTED)),
    [],
  )
  t.same(
    Object.keys(UNIMPORTED).filter((module) => !lib.has(module) || imported.has(module)),
    [],
    'every listed exception exists and is imported by none',
  )
})
