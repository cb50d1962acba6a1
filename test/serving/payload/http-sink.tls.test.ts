// The payload log's HTTP sink over TLS (an https:// URL) against a loopback HTTPS server whose
// certificate openssl made: TLS is spoken, and a certificate no CA of Node's signed fails the batch
// before any request is sent.
import { createServer as createHttpsServer } from 'node:https'
import t from 'tap'
import { createHttpSink } from '../../../lib/serving/payload/http-sink.js'
import { framed } from '../../fixtures/payload.js'
import { serve } from '../../fixtures/tcp.js'
import { selfSigned } from '../../fixtures/tls.js'

t.test('an https sink speaks TLS: a self-signed certificate fails the batch, naming the certificate', async (t) => {
  const pair = await selfSigned(t)
  if (pair === undefined) return
  let requests = 0
  const server = await serve(
    t,
    createHttpsServer(pair, (_req, res) => {
      requests++
      res.writeHead(202).end()
    }),
  )
  const sink = createHttpSink({ url: new URL(`https://127.0.0.1:${server.port}/`), flushMs: 10 })
  t.teardown(() => sink.close())
  await t.rejects(sink.write(framed(sink, ['{}']), AbortSignal.timeout(5000)), { name: 'SinkError', code: 'SINK_FAILED', message: /SELF_SIGNED/ })
  t.equal(requests, 0, 'no request got past the handshake')
})
