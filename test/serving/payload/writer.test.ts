// The payload log's writer (lib/serving/payload/writer.ts) to a real file: events written after the
// turn that queued them, outside the request's store, within a second; rotation keeping N files; a
// device written, never renamed; a disk that refuses every write (/dev/full: ENOSPC) counted
// `failed` while every enqueue still returns at once; a full queue, pressure and shutdown dropping.
import { execFileSync } from 'node:child_process'
import { constants } from 'node:fs'
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { requestStore } from '../../../lib/telemetry/request-store.js'
import { FILE_LINGER_MS } from '../../../lib/serving/payload/file-sink.js'
import { sample } from '../../fixtures/metrics-text.js'
import { EVENT_BYTES, eventually, payloadHarness } from '../../fixtures/payload.js'

const event = (i: number): string => JSON.stringify({ specversion: '1.0', id: `e-${i}`, type: 'svc.prediction', data: { i } })

const directory = async (t: Test): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const lines = async (path: string): Promise<string[]> => (await readFile(path, 'utf8')).split('\n').filter((line) => line !== '')

t.test('events reach the file as JSON lines within a second, built outside the request store, after the turn that queued them', async (t) => {
  const path = join(await directory(t), 'payload.jsonl')
  const { writer, outcomes } = payloadHarness(t, { target: { kind: 'file', path } })
  const stores: unknown[] = []
  const started = performance.now()
  requestStore.run({ requestId: 'r-1' } as never, () => {
    for (let i = 0; i < 3; i++)
      writer.enqueue(() => {
        stores.push(requestStore.getStore())
        return event(i)
      }, EVENT_BYTES)
  })
  t.same(stores, [], 'nothing is built in the turn that queued it')
  await eventually(async () => (await lines(path).catch(() => [])).length === 3)
  t.ok(performance.now() - started < 1000, `written in ${Math.round(performance.now() - started)} ms`)
  t.same(await lines(path), [event(0), event(1), event(2)])
  t.same(stores, [undefined, undefined, undefined], 'built outside the request store')
  t.same(await outcomes(), { written: 3, dropped: 0, failed: 0 })
})

t.test('past maxBytes the file is rotated to <path>.1 … <path>.N, and N rotated files are kept', async (t) => {
  const dir = await directory(t)
  const path = join(dir, 'payload.jsonl')
  const { writer, outcomes } = payloadHarness(t, { target: { kind: 'file', path }, maxBytes: 200, files: 2 })
  // Each event about 70 bytes: two a file; written one batch at a time.
  for (let i = 0; i < 12; i++) {
    writer.enqueue(() => event(i), EVENT_BYTES)
    await eventually(async () => (await outcomes()).written === i + 1)
  }
  t.same((await readdir(dir)).sort(), ['payload.jsonl', 'payload.jsonl.1', 'payload.jsonl.2'], 'the live file and two rotated ones, no more')
  for (const name of await readdir(dir)) t.ok((await stat(join(dir, name))).size <= 200, `${name} at most maxBytes`)
  t.same([...(await lines(`${path}.2`)), ...(await lines(`${path}.1`)), ...(await lines(path))], [6, 7, 8, 9, 10, 11].map(event), 'the newest events, in order')
})

t.test('a batch larger than maxBytes goes whole to a fresh file: an event is never split', async (t) => {
  const path = join(await directory(t), 'payload.jsonl')
  const { writer, outcomes } = payloadHarness(t, { target: { kind: 'file', path }, maxBytes: 10, files: 1 })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 1)
  writer.enqueue(() => event(2), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 2)
  t.same(await lines(path), [event(2)])
  t.same(await lines(`${path}.1`), [event(1)])
})

t.test(
  'SVC_PAYLOAD_LOG=/dev/full: every write fails with ENOSPC, counted failed, logged once; every enqueue returns at once; the device is never renamed',
  async (t) => {
    const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path: '/dev/full' }, maxBytes: 10, files: 1, retryDelaysMs: [5, 5] })
    const started = performance.now()
    for (let i = 0; i < 100; i++) writer.enqueue(() => event(i), EVENT_BYTES)
    t.ok(performance.now() - started < 50, `100 events queued in ${(performance.now() - started).toFixed(2)} ms`)
    await eventually(async () => (await outcomes()).failed === 100)
    for (let i = 0; i < 100; i++) {
      writer.enqueue(() => event(i), EVENT_BYTES)
      await sleep(0)
    }
    await eventually(async () => (await outcomes()).failed === 200)
    t.same(await outcomes(), { written: 0, dropped: 0, failed: 200 })
    t.same(logs(), [{ event: 'payload_log_failed', level: 'warning', sink: 'file', reason: 'ENOSPC' }], 'logged once for its reason')
    t.ok((await stat('/dev/full')).isCharacterDevice(), '/dev/full is still the device')
    await t.rejects(stat('/dev/full.1'), { code: 'ENOENT' }, 'and was never renamed')
  },
)

t.test('a file that cannot be opened fails its events, and is opened again once it can be: a recovery is logged', async (t) => {
  const dir = await directory(t)
  const path = join(dir, 'later', 'payload.jsonl')
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path }, retryDelaysMs: [] })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await outcomes()).failed === 1)
  await mkdir(join(dir, 'later'))
  writer.enqueue(() => event(2), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 1)
  t.same(await lines(path), [event(2)])
  t.same(logs(), [
    { event: 'payload_log_failed', level: 'warning', sink: 'file', reason: 'ENOENT' },
    { event: 'payload_log_recovered', level: 'info', sink: 'file' },
  ])
})

t.test(
  'a directory without write permission (EACCES) is counted failed',
  { skip: process.getuid?.() === 0 && 'root may write anywhere: no EACCES to bring about' },
  async (t) => {
    const dir = await directory(t)
    await writeFile(join(dir, 'payload.jsonl'), '')
    const { chmod } = await import('node:fs/promises')
    await chmod(join(dir, 'payload.jsonl'), 0o400)
    const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path: join(dir, 'payload.jsonl') }, retryDelaysMs: [] })
    writer.enqueue(() => event(1), EVENT_BYTES)
    await eventually(async () => (await outcomes()).failed === 1)
    t.equal(logs()[0]?.reason, 'EACCES')
  },
)

t.test('a rotation that cannot rename fails its batch; the next write tries again', async (t) => {
  const dir = await directory(t)
  const path = join(dir, 'payload.jsonl')
  // `<path>.2` a directory with a file in it: <path>.1 cannot be renamed over it.
  await mkdir(`${path}.2`)
  await writeFile(join(`${path}.2`, 'x'), '')
  await writeFile(`${path}.1`, 'old\n')
  await writeFile(path, `${event(0)}\n`)
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path }, maxBytes: 100, files: 2, retryDelaysMs: [] })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await outcomes()).failed === 1)
  t.match(logs()[0]?.reason, /^E(ISDIR|NOTEMPTY|EXIST)$/)
  t.same(await lines(path), [event(0)], 'the live file is kept as it was')
})

t.test('a full queue drops and counts, and so does pressure, at enqueue and at the drain', async (t) => {
  const path = join(await directory(t), 'payload.jsonl')
  const pressure = { isOn: false }
  const { writer, outcomes, drops } = payloadHarness(t, { target: { kind: 'file', path }, capacity: 3, isUnderPressure: () => pressure.isOn })
  for (let i = 0; i < 5; i++) writer.enqueue(() => event(i), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 3)
  t.same(await outcomes(), { written: 3, dropped: 2, failed: 0 }, 'past the queue')
  pressure.isOn = true
  writer.enqueue(() => event(9), EVENT_BYTES)
  t.same(await outcomes(), { written: 3, dropped: 3, failed: 0 }, 'under pressure, at enqueue')
  pressure.isOn = false
  writer.enqueue(() => event(10), EVENT_BYTES)
  writer.enqueue(() => event(11), EVENT_BYTES)
  pressure.isOn = true
  await eventually(async () => (await outcomes()).dropped === 5)
  t.same(await outcomes(), { written: 3, dropped: 5, failed: 0 }, 'under pressure by the drain: dropped unbuilt')
  t.same(await drops(), { queue: 2, bytes: 0, pressure: 3, shutdown: 0 }, 'each drop counted by its reason')
  t.same(await lines(path), [0, 1, 2].map(event))
})

t.test('an event whose builder throws fails alone, logged with why', async (t) => {
  const path = join(await directory(t), 'payload.jsonl')
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path } })
  writer.enqueue(() => {
    throw new Error('no rows')
  }, EVENT_BYTES)
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(async () => (await outcomes()).written === 1)
  t.same(await outcomes(), { written: 1, dropped: 0, failed: 1 })
  t.equal(logs()[0]?.reason, 'event not built: no rows')
})

t.test('stop writes what is queued, then drops what comes; a second stop waits for the first', async (t) => {
  const path = join(await directory(t), 'payload.jsonl')
  const { writer, outcomes, drops } = payloadHarness(t, { target: { kind: 'file', path } })
  for (let i = 0; i < 50; i++) writer.enqueue(() => event(i), EVENT_BYTES)
  const stopping = writer.stop(1000)
  t.equal(writer.stop(10), stopping, 'one stop')
  await stopping
  t.same(await outcomes(), { written: 50, dropped: 0, failed: 0 })
  t.equal((await lines(path)).length, 50)
  writer.enqueue(() => event(51), EVENT_BYTES)
  t.same(await outcomes(), { written: 50, dropped: 1, failed: 0 }, 'after stop, dropped')
  t.same(await drops(), { queue: 0, bytes: 0, pressure: 0, shutdown: 1 })
})

t.test('stop with nothing queued returns at once; one with a retry waiting writes without waiting, and fails without retrying', async (t) => {
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path: '/dev/full' }, retryDelaysMs: [60_000] })
  writer.enqueue(() => event(1), EVENT_BYTES)
  await eventually(() => logs().length === 1)
  const started = performance.now()
  await writer.stop(5000)
  t.ok(performance.now() - started < 1000, 'the retry wait was cut short')
  t.same(await outcomes(), { written: 0, dropped: 0, failed: 1 })
  const idle = payloadHarness(t, { target: { kind: 'file', path: '/dev/null' } })
  const at = performance.now()
  await idle.writer.stop(5000)
  t.ok(performance.now() - at < 100, 'nothing to wait for')
})

t.test('a write stuck on a FIFO nobody reads counts failed at its timeout, and stop ends within its budget', async (t) => {
  const path = join(await directory(t), 'fifo')
  execFileSync('mkfifo', [path])
  const reader = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  t.teardown(() => reader.close())
  const { writer, outcomes, logs } = payloadHarness(t, { target: { kind: 'file', path }, timeoutMs: 200, retryDelaysMs: [] })
  // Past the pipe's 64 KiB: the write cannot finish.
  writer.enqueue(() => JSON.stringify('x'.repeat(1 << 20)), EVENT_BYTES)
  const started = performance.now()
  await eventually(async () => (await outcomes()).failed === 1)
  t.ok(performance.now() - started < 1500, `failed in ${Math.round(performance.now() - started)} ms`)
  t.same(logs(), [{ event: 'payload_log_failed', level: 'warning', sink: 'file', reason: 'no answer within 200 ms' }])
  writer.enqueue(() => JSON.stringify('y'.repeat(1 << 20)), EVENT_BYTES)
  const stopping = performance.now()
  await writer.stop(100)
  t.ok(performance.now() - stopping < 1000, `stopped in ${Math.round(performance.now() - stopping)} ms`)
  t.same(await outcomes(), { written: 0, dropped: 1, failed: 1 }, 'the write left at the budget counts dropped')
})

t.test(
  'the queue is bounded in bytes: past SVC_PAYLOAD_LOG_QUEUE_BYTES an event is dropped, counted `bytes`, until written events free their share',
  async (t) => {
    const path = join(await directory(t), 'fifo')
    execFileSync('mkfifo', [path])
    const reader = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
    t.teardown(() => reader.close())
    // A sink that holds its first batch: what follows waits in the queue.
    const { writer, outcomes, drops, registry } = payloadHarness(t, { target: { kind: 'file', path }, capacityBytes: 3500, timeoutMs: 300, retryDelaysMs: [] })
    writer.enqueue(() => JSON.stringify('x'.repeat(1 << 20)), 100)
    await new Promise((resolve) => setTimeout(resolve, FILE_LINGER_MS + 50))
    for (let i = 0; i < 5; i++) writer.enqueue(() => event(i), 1000)
    t.same(await drops(), { queue: 0, bytes: 2, pressure: 0, shutdown: 0 }, 'three of 1 000 bytes fit beside the 100 written: two dropped')
    t.equal(sample(await registry.metrics(), 'svc_payload_log_queue_depth', {}), 3)
    // The stuck batch fails at its timeout; the reader drains the pipe, and the three are written.
    await eventually(async () => (await outcomes()).failed === 1)
    const drainer = setInterval(() => void reader.read(Buffer.alloc(1 << 16), 0, 1 << 16, null).catch(() => {}), 5)
    t.teardown(() => clearInterval(drainer))
    await eventually(async () => (await outcomes()).written === 3)
    writer.enqueue(() => event(9), 3400)
    t.same(await drops(), { queue: 0, bytes: 2, pressure: 0, shutdown: 0 }, 'written events gave their bytes back')
    await eventually(async () => (await outcomes()).written === 4)
  },
)
