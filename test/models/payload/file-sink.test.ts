// The payload log as a file of JSON lines: appended a batch at a time, rotated by size into N kept
// files, a device never rotated, and a failed write reopening the file on the next.
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import t, { type Test } from 'tap'
import { createFileSink, FILE_LINGER_MS } from '../../../lib/models/payload/file-sink.js'

const NEVER = new AbortController().signal

const tempDir = async (t: Test): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-file-sink-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('each event is one line, appended to what the file already holds', async (t) => {
  const path = join(await tempDir(t), 'payload.ndjson')
  await writeFile(path, '{"old":1}\n')
  const sink = createFileSink({ path, maxBytes: 1 << 20, files: 2 })
  t.equal(sink.lingerMs, FILE_LINGER_MS)
  await sink.write(['{"a":1}', '{"b":2}'], NEVER)
  await sink.write(['{"c":3}'], NEVER)
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '{"old":1}\n{"a":1}\n{"b":2}\n{"c":3}\n')
})

t.test('past maxBytes the file shifts to .1, .1 to .2, and the oldest kept is overwritten', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 10, files: 2 })
  for (const event of ['"11111"', '"22222"', '"33333"', '"44444"']) await sink.write([event], NEVER)
  await sink.close()
  t.same((await readdir(dir)).sort(), ['p.ndjson', 'p.ndjson.1', 'p.ndjson.2'])
  t.equal(await readFile(path, 'utf8'), '"44444"\n')
  t.equal(await readFile(`${path}.1`, 'utf8'), '"33333"\n')
  t.equal(await readFile(`${path}.2`, 'utf8'), '"22222"\n', 'the first batch is gone: two rotated files are kept')
})

t.test('a batch larger than maxBytes goes whole into a fresh file', async (t) => {
  const path = join(await tempDir(t), 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 4, files: 1 })
  await sink.write(['"first"'], NEVER)
  await sink.write(['"a long event"', '"another"'], NEVER)
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '"a long event"\n"another"\n')
  t.equal(await readFile(`${path}.1`, 'utf8'), '"first"\n')
})

t.test('a device is written, never rotated', async (t) => {
  // A link to /dev/null in a directory of the test's own: a rotation, were one tried, would rename
  // the link, never the device itself.
  const path = join(await tempDir(t), 'null')
  await symlink('/dev/null', path)
  const sink = createFileSink({ path, maxBytes: 1, files: 1 })
  await sink.write(['"x"'], NEVER)
  await sink.write(['"y"'], NEVER)
  await sink.close()
  t.ok((await lstat(path)).isSymbolicLink(), 'still the link to the device')
  t.same(await readdir(dirname(path)), ['null'], 'no rotated file')
})

t.test('a failed write throws, and the next write opens the file again', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'sub', 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 1 << 20, files: 1 })
  await t.rejects(sink.write(['"lost"'], NEVER), { code: 'ENOENT' })
  await mkdir(join(dir, 'sub'))
  await sink.write(['"kept"'], NEVER)
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '"kept"\n')
})
