// The payload log as a file of JSON lines: appended a batch at a time, rotated by size into N kept
// files, a device never rotated, and a failed write reopening the file on the next.
import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync, readdirSync, readlinkSync } from 'node:fs'
import { lstat, mkdir, mkdtemp, open, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import t, { type Test } from 'tap'
import { createFileSink, DISK_NOT_ANSWERING, FILE_LINGER_MS } from '../../../lib/serving/payload/file-sink.js'
import type { Sink } from '../../../lib/serving/payload/sink.js'
import { eventually, framed } from '../../fixtures/payload.js'

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
  await sink.write(framed(sink, ['{"a":1}', '{"b":2}']), NEVER)
  await sink.write(framed(sink, ['{"c":3}']), NEVER)
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '{"old":1}\n{"a":1}\n{"b":2}\n{"c":3}\n')
})

t.test('past maxBytes the file shifts to .1, .1 to .2, and the oldest kept is overwritten', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 10, files: 2 })
  for (const event of ['"11111"', '"22222"', '"33333"', '"44444"']) await sink.write(framed(sink, [event]), NEVER)
  await sink.close()
  t.same((await readdir(dir)).sort(), ['p.ndjson', 'p.ndjson.1', 'p.ndjson.2'])
  t.equal(await readFile(path, 'utf8'), '"44444"\n')
  t.equal(await readFile(`${path}.1`, 'utf8'), '"33333"\n')
  t.equal(await readFile(`${path}.2`, 'utf8'), '"22222"\n', 'the first batch is gone: two rotated files are kept')
})

t.test('a rotation that fails part way: the next one fills the gap it left, and no rotated file is lost', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'p.ndjson')
  await writeFile(`${path}.1`, 'one\n')
  await writeFile(`${path}.2`, 'two\n')
  await writeFile(`${path}.3`, 'three\n')
  const sink = createFileSink({ path, maxBytes: 10, files: 3 })
  await sink.write(framed(sink, ['"a"']), NEVER)
  // The live file goes away under the sink: the rotation shifts .2 to .3 and .1 to .2, then fails.
  await rm(path)
  await t.rejects(sink.write(framed(sink, ['"bbbbbbbbbb"']), NEVER), { code: 'ENOENT' })
  t.same((await readdir(dir)).sort(), ['p.ndjson.2', 'p.ndjson.3'], 'a gap at .1')
  await sink.write(framed(sink, ['"bbbbbbbbbb"']), NEVER)
  await sink.write(framed(sink, ['"c"']), NEVER)
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '"c"\n')
  t.equal(await readFile(`${path}.1`, 'utf8'), '"bbbbbbbbbb"\n')
  t.equal(await readFile(`${path}.2`, 'utf8'), 'one\n', 'filled the gap: nothing shifted over .2')
  t.equal(await readFile(`${path}.3`, 'utf8'), 'two\n', 'only the oldest, "three", went, in the first rotation')
})

t.test('a rotated file that cannot be looked at fails the rotation, and renames nothing', async (t) => {
  // A name of 254 bytes: the file may be, `<name>.1` is past NAME_MAX (255), so lstat fails ENAMETOOLONG.
  const dir = await tempDir(t)
  const path = join(dir, 'p'.repeat(254))
  const sink = createFileSink({ path, maxBytes: 1, files: 2 })
  await sink.write(framed(sink, ['"x"']), NEVER)
  await t.rejects(sink.write(framed(sink, ['"y"']), NEVER), { code: 'ENAMETOOLONG' })
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '"x"\n', 'the live file kept as it was')
})

t.test('a batch larger than maxBytes goes whole into a fresh file', async (t) => {
  const path = join(await tempDir(t), 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 4, files: 1 })
  await sink.write(framed(sink, ['"first"']), NEVER)
  await sink.write(framed(sink, ['"a long event"', '"another"']), NEVER)
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
  await sink.write(framed(sink, ['"x"']), NEVER)
  await sink.write(framed(sink, ['"y"']), NEVER)
  await sink.close()
  t.ok((await lstat(path)).isSymbolicLink(), 'still the link to the device')
  t.same(await readdir(dirname(path)), ['null'], 'no rotated file')
})

t.test('a failed write throws, and the next write opens the file again', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'sub', 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 1 << 20, files: 1 })
  await t.rejects(sink.write(framed(sink, ['"lost"']), NEVER), { code: 'ENOENT' })
  await mkdir(join(dir, 'sub'))
  await sink.write(framed(sink, ['"kept"']), NEVER)
  await sink.close()
  t.equal(await readFile(path, 'utf8'), '"kept"\n')
})

/** A FIFO in `dir`, and a reader that opens it and never reads (opened non-blocking, so opening waits for no writer). */
const stalledFifo = async (t: Test, dir: string): Promise<string> => {
  const path = join(dir, 'fifo')
  execFileSync('mkfifo', [path])
  const reader = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(() => reader.close())
  return path
}

t.test('a FIFO whose reader stalled: the write fails at its timeout, and close returns at once', async (t) => {
  const path = await stalledFifo(t, await tempDir(t))
  const sink = createFileSink({ path, maxBytes: 1, files: 1 })
  await sink.write(framed(sink, ['"small"']), NEVER)
  // Past the pipe's buffer (64 KiB on Linux): the reader never reads, so the write cannot finish.
  const started = performance.now()
  await t.rejects(sink.write(framed(sink, ['x'.repeat(1 << 20)]), AbortSignal.timeout(200)), { name: 'TimeoutError' })
  t.ok(performance.now() - started < 1000, `failed after ${Math.round(performance.now() - started)} ms`)
  const closing = performance.now()
  await sink.close()
  t.ok(performance.now() - closing < 100, 'nothing waited for')
  t.same(await readdir(dirname(path)), ['fifo'], 'never rotated')
})

t.test('a FIFO without a reader fails at once (ENXIO), where a blocking open would wait for one', async (t) => {
  const path = join(await tempDir(t), 'fifo')
  execFileSync('mkfifo', [path])
  const sink = createFileSink({ path, maxBytes: 1, files: 1 })
  await t.rejects(sink.write(framed(sink, ['"x"']), AbortSignal.timeout(2000)), { code: 'ENXIO' })
  await sink.close()
})

t.test('a reader that goes away fails the write (EPIPE), and the next write opens the FIFO again', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'fifo')
  execFileSync('mkfifo', [path])
  const reader = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const sink = createFileSink({ path, maxBytes: 1, files: 1 })
  await sink.write(framed(sink, ['"a"']), NEVER)
  await reader.close()
  await t.rejects(sink.write(framed(sink, ['"b"']), NEVER), { code: 'EPIPE' })
  const again = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(() => again.close())
  await sink.write(framed(sink, ['"c"']), NEVER)
  await sink.close()
  t.equal((await again.read(Buffer.alloc(16), 0, 16, null)).bytesRead, 4, 'the new reader got "c"\\n')
})

t.test('a batch in several pieces reaches a FIFO whole and in order', async (t) => {
  const path = join(await tempDir(t), 'fifo')
  execFileSync('mkfifo', [path])
  const reader = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(() => reader.close())
  const sink = createFileSink({ path, maxBytes: 1, files: 1 })
  await sink.write([Buffer.from('"a"\n"b'), Buffer.from('"\n'), Buffer.from('"c"\n')], NEVER)
  await sink.close()
  const bytes = Buffer.alloc(64)
  const { bytesRead } = await reader.read(bytes, 0, 64, null)
  t.equal(bytes.subarray(0, bytesRead).toString(), '"a"\n"b"\n"c"\n')
})

/** Whether `sink` took `event`. */
const isWritten = (sink: Sink, event: string): Promise<boolean> =>
  sink.write(framed(sink, [event]), NEVER).then(
    () => true,
    () => false,
  )

/** This process's descriptors open on `path`. */
const openCount = (path: string): number =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path
    } catch {
      return false
    }
  }).length

/**
 * Fills the thread pool with opens that wait for a FIFO's writer: a call the sink makes into the
 * pool then waits as one on a disk that stopped answering would. `free` gives the pool back.
 */
const heldPool = async (t: Test, dir: string): Promise<Readonly<{ free: () => Promise<void> }>> => {
  const path = join(dir, 'held')
  execFileSync('mkfifo', [path])
  const size = Number(process.env['UV_THREADPOOL_SIZE'] ?? '4')
  const held = Array.from({ length: size }, () => open(path, 'r'))
  // Every pool thread is taken once a call queued behind the opens has not run.
  await new Promise((resolve) => setTimeout(resolve, 50))
  let isFree = false
  const free = async (): Promise<void> => {
    if (isFree) return
    isFree = true
    const writer = await new Promise<number>((resolve) => setImmediate(() => resolve(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK))))
    for (const handle of await Promise.all(held)) await handle.close()
    closeSync(writer)
  }
  t.teardown(free)
  return { free }
}

t.test('a regular file whose disk stops answering: the batch fails at its timeout, the next at once, and close waits for nothing', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 1 << 20, files: 1 })
  await sink.write(framed(sink, ['"before"']), NEVER)
  const pool = await heldPool(t, dir)
  const started = performance.now()
  await t.rejects(sink.write(framed(sink, ['"stuck"']), AbortSignal.timeout(100)), { name: 'TimeoutError' })
  t.ok(performance.now() - started < 1000, `failed after ${Math.round(performance.now() - started)} ms`)
  await t.rejects(sink.write(framed(sink, ['"next"']), NEVER), { code: 'SINK_FAILED', message: DISK_NOT_ANSWERING }, 'no second call into the pool')
  const closing = performance.now()
  await sink.close()
  t.ok(performance.now() - closing < 50, 'close waits for nothing')
  await pool.free()
  // The abandoned call returns once the pool is free; then the sink writes again, to a file opened anew.
  await eventually(() => isWritten(sink, '"after"'))
  await sink.close()
  t.same((await readFile(path, 'utf8')).split('\n').filter(Boolean), ['"before"', '"stuck"', '"after"'], 'the abandoned write landed once it returned')
})

t.test('a disk that stops answering while the file is opened: the open is abandoned, and its file closed once it returns', async (t) => {
  const dir = await tempDir(t)
  const path = join(dir, 'p.ndjson')
  const sink = createFileSink({ path, maxBytes: 1 << 20, files: 1 })
  const pool = await heldPool(t, dir)
  await t.rejects(sink.write(framed(sink, ['"x"']), AbortSignal.timeout(50)), { name: 'TimeoutError' })
  await pool.free()
  await eventually(() => isWritten(sink, '"y"'))
  t.equal(openCount(path), 1, "the abandoned open's descriptor was closed once it returned: one open file, the live one")
  await sink.close()
  t.equal(openCount(path), 0)
  t.equal(await readFile(path, 'utf8'), '"y"\n')
})
