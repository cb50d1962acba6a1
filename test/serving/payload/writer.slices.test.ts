// The payload writer (lib/serving/payload/writer.ts) builds and encodes a batch in slices of the
// loop: a backlog of 1 000-event batches of 100 rows each, held by a sink that was down, drains with
// no long turn, each retry sending the bytes of the first attempt; and a stop in the middle of a
// build counts every event once, as written, failed or dropped `shutdown`.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { eventually, irisEvents, loopProbe, payloadHarness } from '../../fixtures/payload.js'
import { httpServer } from '../../fixtures/tcp.js'

/**
 * The longest turn allowed while a backlog drains: generous for a loaded machine and its collections,
 * far under what one turn per batch took (about 500 ms for 1 000 events of 100 rows).
 */
const LONGEST_TURN_MS = 100

t.test('a backlog of two 1 000-event batches of 100 rows drains once the sink is up, with no turn over 100 ms; a retry resends the same bytes', async (t) => {
  let refusals = 1
  // Each body's chunks, joined only once the drain is measured: a join of 20 MB is a long turn of its own.
  const received: Buffer[][] = []
  const sink = await httpServer(t, (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => void chunks.push(chunk))
    req.on('end', () => {
      received.push(chunks)
      res.writeHead(refusals-- > 0 ? 503 : 202).end()
    })
  })
  const { writer, outcomes } = payloadHarness(t, {
    target: { kind: 'http', url: new URL(`http://127.0.0.1:${sink.port}/`) },
    capacity: 2000,
    flushMs: 10,
    retryDelaysMs: [50],
  })
  const { build, bytes } = irisEvents(100)
  let built = 0
  for (let i = 0; i < 2000; i++)
    writer.enqueue(() => {
      built++
      return build()
    }, bytes)
  const probe = loopProbe()
  await eventually(async () => (await outcomes()).written === 2000, 30_000)
  const longest = probe.stop()
  t.ok(longest < LONGEST_TURN_MS, `the longest turn: ${longest.toFixed(1)} ms`)
  t.equal(built, 2000, 'each event built once')
  const bodies = received.map((chunks) => Buffer.concat(chunks))
  t.equal(bodies.length, 3, 'the first batch twice (refused, then taken), the second once')
  t.ok(bodies[0]?.equals(bodies[1] as Buffer), 'the retry sent the bytes of the refused attempt')
  const events = [bodies[1], bodies[2]].flatMap((body) => JSON.parse((body as Buffer).toString()) as { id: string; data: { rows: unknown[] } }[])
  t.equal(events.length, 2000)
  t.equal(new Set(events.map((event) => event.id)).size, 2000, 'every event once')
  t.ok(events.every((event) => event.data.rows.length === 100))
  t.same(await outcomes(), { written: 2000, dropped: 0, failed: 0 })
})

t.test('a stop in the middle of a build ends within its budget and counts every event once: failed, or dropped `shutdown`, never written late', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-payload-slices-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'payload.jsonl')
  const { writer, outcomes, drops } = payloadHarness(t, { target: { kind: 'file', path } })
  const { build, bytes } = irisEvents(100)
  let built = 0
  writer.enqueue(() => {
    built++
    throw new Error('no rows')
  }, bytes)
  for (let i = 1; i < 1000; i++)
    writer.enqueue(() => {
      built++
      return build()
    }, bytes)
  await eventually(() => built > 1, 5000)
  t.ok(built < 1000, `stopped with ${built} of 1 000 built: the build is under way`)
  const started = performance.now()
  await writer.stop(20)
  t.ok(performance.now() - started < 200, `stopped in ${(performance.now() - started).toFixed(1)} ms`)
  const atStop = built
  t.same(await outcomes(), { written: 0, dropped: 999, failed: 1 })
  t.same(await drops(), { queue: 0, bytes: 0, pressure: 0, shutdown: 999 })
  await sleep(100)
  t.equal(built, atStop, 'nothing built after the stop')
  t.same(await outcomes(), { written: 0, dropped: 999, failed: 1 }, 'nothing counted twice')
  t.equal(await readFile(path, 'utf8').catch(() => ''), '', 'nothing written')
})
