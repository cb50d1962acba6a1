// Files the CLI writes for a running svc: whole or not at all, with no temporary file left behind.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { writeWhole } from '../../lib/tools/write-whole.js'

t.test('writes the text over the target and leaves only the target', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-write-whole-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const target = join(dir, 'profile.json')
  await writeWhole(target, 'old')
  await writeWhole(target, 'new')
  t.equal(await readFile(target, 'utf8'), 'new')
  t.same(await readdir(dir), ['profile.json'])
})

t.test('a failed rename throws as it came and removes the temporary file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-write-whole-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // A target that is a non-empty directory: the write succeeds, the rename over it fails.
  const target = join(dir, 'taken')
  await mkdir(target)
  await writeFile(join(target, 'inside'), 'x')
  await t.rejects(writeWhole(target, 'text'), { code: /^(EISDIR|ENOTEMPTY|EEXIST)$/ })
  t.same(await readdir(dir), ['taken'])
  t.same(await readdir(target), ['inside'])
})
