// The payload log POSTed to an HTTP sink (a collector, Knative's broker, a KServe-style logger
// endpoint) in CloudEvents' JSON batch format (CloudEvents JSON Event Format 1.0, §4): a JSON array
// of events, `Content-Type: application/cloudevents-batch+json`. A batch leaves at most
// SVC_PAYLOAD_LOG_FLUSH_MS after its first event (`lingerMs`); any 2xx is accepted, anything else,
// a refused connection or no answer before the writer's timeout fails the batch. Redirects are not
// followed. Credentials in the URL are sent as Basic auth. An https sink's certificate is checked
// against Node's CAs (NODE_EXTRA_CA_CERTS adds a private one).
//
// node:http, not fetch: a batch of 1 000 events of 100 rows is 20 MB, and its pieces go out one a
// turn of the loop, so that a write to a fast peer (on loopback the kernel delivers in the sender's
// call) never holds the loop for the whole body: fetch wrote them all in one turn, 30 to 40 ms of
// CPU, and its first request compiled its HTTP parser in the caller's turns (about 20 ms).
import { once } from 'node:events'
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { nextSlice } from '../../core/schedule/slices.js'
import { describeError } from '../../core/net/describe-error.js'
import { type Frame, lengthOf, type Sink, SinkError } from './sink.js'

export const BATCH_CONTENT_TYPE = 'application/cloudevents-batch+json'

/** A JSON array of events. */
const JSON_ARRAY: Frame = { open: '[', separator: ',', close: ']' }

export type HttpSinkOptions = Readonly<{ url: URL; flushMs: number }>

/** The pieces one a turn of the loop; the pipe waits for the socket to drain when it asks to. */
async function* paced(batch: readonly Buffer[]): AsyncGenerator<Buffer> {
  for (const piece of batch) {
    yield piece
    await nextSlice()
  }
}

/** The answer, or the error that ended the request first (a refused connection, the timeout). */
const answerOf = (req: ClientRequest): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    req.once('response', resolve)
    req.once('error', reject)
  })

const isAccepted = (status: number | undefined): boolean => status !== undefined && status >= 200 && status < 300

export const createHttpSink = ({ url, flushMs }: HttpSinkOptions): Sink => {
  const isHttps = url.protocol === 'https:'
  // One batch in flight at a time (the writer awaits each), so one kept connection.
  const agent = isHttps ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 })
  const send = isHttps ? httpsRequest : httpRequest
  return {
    lingerMs: flushMs,
    frame: JSON_ARRAY,
    write: async (batch, signal) => {
      // Given the URL, node:http takes its credentials (decoded) as Basic auth and an IPv6 literal without brackets.
      const req = send(url, { method: 'POST', headers: { 'content-type': BATCH_CONTENT_TYPE, 'content-length': lengthOf(batch) }, agent, signal })
      let status: number | undefined
      try {
        // A failure while sending rejects both waits: the first names it.
        const answered = answerOf(req)
        const [, res] = await Promise.all([pipeline(Readable.from(paced(batch)), req), answered])
        // Read to the end so the connection is kept for the next batch.
        res.resume()
        await once(res, 'end')
        status = res.statusCode
      } catch (error: unknown) {
        req.destroy()
        throw new SinkError('SINK_FAILED', describeError(error), { cause: error })
      }
      if (!isAccepted(status)) throw new SinkError('SINK_FAILED', `HTTP ${status}`)
    },
    close: async () => agent.destroy(),
  }
}
