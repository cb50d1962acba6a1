// The one finder of svc's package root, from source, from a build, and from nowhere.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { packageRoot } from '../../lib/config/package-root.js'

t.test("this checkout's root, from a module in lib/", async (t) => {
  t.equal(packageRoot(new URL('../../lib/config/package-root.ts', import.meta.url)), fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, ''))
})

t.test('the nearest package.json named svc, however deep the module sits, skipping other packages and unreadable ones', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'svc-root-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'svc' }))
  await mkdir(join(root, 'dist', 'lib', 'pages'), { recursive: true })
  await writeFile(join(root, 'dist', 'package.json'), JSON.stringify({ name: 'other' }))
  await writeFile(join(root, 'dist', 'lib', 'package.json'), '{ not json')
  t.equal(packageRoot(pathToFileURL(join(root, 'dist', 'lib', 'pages', 'assets.js'))), root)
  t.equal(packageRoot(pathToFileURL(join(root, 'lib', 'version.ts'))), root)
})

t.test('no svc manifest up to / is an error naming where the walk began', async (t) => {
  t.throws(() => packageRoot(new URL('file:///nowhere/lib/pages/assets.js')), { message: 'package.json of svc not found above /nowhere/lib/pages/assets.js' })
})
