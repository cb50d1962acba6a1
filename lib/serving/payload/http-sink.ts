// The payload log POSTed to an HTTP sink (a collector, Knative's broker, a KServe-style logger
// endpoint) in CloudEvents' JSON batch format (CloudEvents JSON Event Format 1.0, §4): a JSON array
// of events, `Content-Type: application/cloudevents-batch+json`. A batch leaves at most
// SVC_PAYLOAD_LOG_FLUSH_MS after its first event (`lingerMs`); any 2xx is accepted, anything else,
// a refused connection or no answer before the writer's timeout fails the batch. Credentials in the
// URL are sent as Basic auth: fetch refuses a URL that holds them.
import { describeError, rootCause } from '../../core/net/describe-error.js'
import { type Sink, SinkError } from './sink.js'

export const BATCH_CONTENT_TYPE = 'application/cloudevents-batch+json'

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

export const createHttpSink = ({ url, flushMs }: HttpSinkOptions): Sink => {
  const headers = headersFor(url)
  const target = bare(url)
  return {
    lingerMs: flushMs,
    write: async (events, signal) => {
      let status: number
      try {
        const res = await fetch(target, { method: 'POST', headers, body: `[${events.join(',')}]`, signal, redirect: 'manual' })
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
