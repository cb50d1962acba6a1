// The payload log POSTed as a CloudEvents JSON batch to a real loopback server: the body, its type,
// credentials as Basic auth, and what fails a batch.
import type { IncomingHttpHeaders } from 'node:http'
import t, { type Test } from 'tap'
import { BATCH_CONTENT_TYPE, createHttpSink } from '../../../lib/serving/payload/http-sink.js'
import { SinkError } from '../../../lib/serving/payload/sink.js'
import { framed } from '../../fixtures/payload.js'
import { closedPort, httpServer } from '../../fixtures/tcp.js'

type Received = Readonly<{ url: string; headers: IncomingHttpHeaders; body: string }>

const collector = async (t: Test, status: number) => {
  const received: Received[] = []
  const server = await httpServer(t, (req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body })
      // A redirect points at a path that would take the batch, were it followed.
      if (req.url === '/elsewhere') res.writeHead(200).end('ok')
      else res.writeHead(status, status === 307 ? { location: '/elsewhere' } : {}).end('ok')
    })
  })
  return { port: server.port, received }
}

t.test('a batch is one POST of a JSON array, typed as a CloudEvents batch', async (t) => {
  const { port, received } = await collector(t, 202)
  const sink = createHttpSink({ url: new URL(`http://127.0.0.1:${port}/events?x=1`), flushMs: 250 })
  t.equal(sink.lingerMs, 250)
  await sink.write(framed(sink, ['{"id":"a"}', '{"id":"b"}']), AbortSignal.timeout(5000))
  t.equal(received.length, 1)
  t.equal(received[0]?.url, '/events?x=1')
  t.equal(received[0]?.headers['content-type'], BATCH_CONTENT_TYPE)
  t.equal(received[0]?.headers.authorization, undefined)
  t.same(JSON.parse(received[0]?.body ?? ''), [{ id: 'a' }, { id: 'b' }])
  await sink.close()
})

t.test("the URL's credentials go as Basic auth, decoded, and not in the URL", async (t) => {
  const { port, received } = await collector(t, 200)
  const sink = createHttpSink({ url: new URL(`http://us%40er:p%3Ass@127.0.0.1:${port}/`), flushMs: 10 })
  await sink.write(framed(sink, ['{}']), AbortSignal.timeout(5000))
  t.equal(received[0]?.headers.authorization, `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`)
})

t.test('a status outside 2xx fails the batch with the status', async (t) => {
  const { port } = await collector(t, 503)
  const sink = createHttpSink({ url: new URL(`http://127.0.0.1:${port}/`), flushMs: 10 })
  await t.rejects(sink.write(framed(sink, ['{}']), AbortSignal.timeout(5000)), new SinkError('SINK_FAILED', 'HTTP 503'))
})

t.test('a redirect is not followed: it fails the batch', async (t) => {
  const { port, received } = await collector(t, 307)
  const sink = createHttpSink({ url: new URL(`http://127.0.0.1:${port}/`), flushMs: 10 })
  await t.rejects(sink.write(framed(sink, ['{}']), AbortSignal.timeout(5000)), { code: 'SINK_FAILED', message: 'HTTP 307' })
  t.equal(received.length, 1)
})

t.test('a refused connection fails the batch, naming the cause', async (t) => {
  const sink = createHttpSink({ url: new URL(`http://127.0.0.1:${await closedPort()}/`), flushMs: 10 })
  await t.rejects(sink.write(framed(sink, ['{}']), AbortSignal.timeout(5000)), { name: 'SinkError', code: 'SINK_FAILED', message: /refused|ECONNREFUSED/i })
})

t.test('a large batch goes a piece a turn of the loop, whole and in order, and batches share one connection', async (t) => {
  const bodies: Buffer[] = []
  const ports = new Set<number>()
  const server = await httpServer(t, (req, res) => {
    ports.add(req.socket.remotePort ?? 0)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => void chunks.push(chunk))
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks))
      res.writeHead(202).end()
    })
  })
  const sink = createHttpSink({ url: new URL(`http://127.0.0.1:${server.port}/`), flushMs: 10 })
  t.teardown(() => sink.close())
  const pieces = Array.from({ length: 40 }, (_, i) => Buffer.alloc(1 << 16, 65 + (i % 26)))
  let turns = 0
  let isWriting = true
  const count = (): void => {
    turns++
    if (isWriting) setImmediate(count)
  }
  setImmediate(count)
  await sink.write(pieces, AbortSignal.timeout(5000))
  isWriting = false
  t.ok(turns >= pieces.length, `${turns} turns of the loop for ${pieces.length} pieces`)
  await sink.write(pieces.slice(0, 2), AbortSignal.timeout(5000))
  t.ok(bodies[0]?.equals(Buffer.concat(pieces)), 'the first batch whole, in order')
  t.ok(bodies[1]?.equals(Buffer.concat(pieces.slice(0, 2))))
  t.equal(ports.size, 1, 'the second batch on the first connection')
})

t.test('a sink that stops reading fails the batch at its timeout; the next batch goes on a new connection', async (t) => {
  let requests = 0
  const server = await httpServer(t, (req, res) => {
    // The first request is never read: its sender fills the socket and waits.
    if (requests++ === 0) return void req.pause()
    req.resume()
    req.on('end', () => res.writeHead(200).end())
  })
  const sink = createHttpSink({ url: new URL(`http://127.0.0.1:${server.port}/`), flushMs: 10 })
  t.teardown(() => sink.close())
  const signal = AbortSignal.timeout(300)
  await t.rejects(sink.write([Buffer.alloc(32 << 20, 32)], signal), { name: 'SinkError', code: 'SINK_FAILED' })
  t.ok(signal.aborted, 'failed by the timeout')
  await sink.write(framed(sink, ['{}']), AbortSignal.timeout(5000))
  t.equal(requests, 2)
})
