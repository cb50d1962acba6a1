// The payload log POSTed to an HTTP sink (a collector, Knative's broker, a KServe-style logger
// endpoint) in CloudEvents' JSON batch format (CloudEvents JSON Event Format 1.0, §4): a JSON array
// of events, `Content-Type: application/cloudevents-batch+json`. A batch leaves at most
// SVC_PAYLOAD_LOG_FLUSH_MS after its first event (`lingerMs`); any 2xx is accepted, anything else,
// a refused connection or no answer before the writer's timeout fails the batch. Credentials in the
// URL are sent as Basic auth: fetch refuses a URL that holds them.
import { describeError, rootCause } from '../../core/net/describe-error.js'
import { type Frame, lengthOf, type Sink, SinkError } from './sink.js'

export const BATCH_CONTENT_TYPE = 'application/cloudevents-batch+json'

/** A JSON array of events. */
const JSON_ARRAY: Frame = { open: '[', separator: ',', close: ']' }

export type HttpSinkOptions = Readonly<{ url: URL; flushMs: number }>

const headersFor = (url: URL): Readonly<Record<string, string>> =>
  url.username === '' && url.password === ''
    ? { 'content-type': BATCH_CONTENT_TYPE }
    : {
        'content-type': BATCH_CONTENT_TYPE,
        authorization: `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`,
      }

/** The URL without its credentials, which go in the header. */
const bare = (url: URL): URL => {
  const target = new URL(url)
  target.username = ''
  target.password = ''
  return target
}

/**
 * A batch's body, its pieces as they are. Handed one Buffer, fetch (undici, Node 24) copies it whole
 * and wraps it in a web stream in the caller's turn: 35 to 42 ms of CPU for 20 MB (1 000 events of
 * 100 rows); as an iterable of pieces, under 2 ms, with the Content-Length given.
 */
async function* bodyOf(batch: readonly Buffer[]): AsyncGenerator<Buffer> {
  yield* batch
}

export const createHttpSink = ({ url, flushMs }: HttpSinkOptions): Sink => {
  const headers = headersFor(url)
  const target = bare(url)
  return {
    lingerMs: flushMs,
    frame: JSON_ARRAY,
    write: async (batch, signal) => {
      let status: number
      try {
        const res = await fetch(target, {
          method: 'POST',
          headers: { ...headers, 'content-length': String(lengthOf(batch)) },
          body: bodyOf(batch),
          duplex: 'half',
          signal,
          redirect: 'manual',
        })
        status = res.status
        // Read to the end so the connection is kept for the next batch.
        await res.arrayBuffer()
      } catch (error: unknown) {
        throw new SinkError('SINK_FAILED', describeError(rootCause(error)), { cause: error })
      }
      if (status < 200 || status >= 300) throw new SinkError('SINK_FAILED', `HTTP ${status}`)
    },
    close: async () => {},
  }
}
