import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { readVersion, VERSION } from '../../lib/config/version.js'

t.test('the version is the one in package.json', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  t.equal(VERSION, pkg.version)
})

t.test('the manifest is found however deep the module sits, skipping other packages', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'svc-version-'))
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'svc', version: '3.2.1' }))
  await mkdir(join(root, 'dist', 'lib'), { recursive: true })
  await writeFile(join(root, 'dist', 'package.json'), JSON.stringify({ name: 'other', version: '0.0.1' }))
  t.equal(readVersion(pathToFileURL(join(root, 'dist', 'lib', 'version.js'))), '3.2.1')
})

t.test('no manifest anywhere above is an error naming where it looked', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'svc-version-'))
  t.throws(() => readVersion(pathToFileURL(join(root, 'version.js'))), /package.json of svc not found above/)
})
