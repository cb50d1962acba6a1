// One attempt against one rate upstream: Node's fetch under a hard timeout, a body read only up to a
// cap, the reply judged by the upstream's reader, and the attempt observed as a CLIENT span (its
// context injected as `traceparent`), a duration and an outcome. An attempt never throws.
import { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api'
import { performance } from 'node:perf_hooks'
import { describeError, rootCause } from '../core/net/describe-error.js'
import { readCapped } from '../core/net/read-capped.js'
import type { Logger } from '../telemetry/logger.js'
import { getTracer } from '../telemetry/tracer.js'
import type { Outcome, UpstreamCells } from './upstream-metrics.js'
import { INVALID, NOT_QUOTED, type Quote, type Upstream } from './upstreams.js'

/** A price reply is well under 1 KiB (Coinbase's, with every currency, about 5 KiB); more is not the API. */
export const MAX_REPLY_BYTES = 64 * 1024

export type Attempt =
  | Readonly<{ outcome: 'quoted'; quote: Quote }>
  | Readonly<{ outcome: 'not_quoted' }>
  /** `reason` is safe to show a client: which way it failed, never what the upstream sent. */
  | Readonly<{ outcome: 'failed'; isTimeout: boolean; reason: string }>

export type UpstreamClient = Readonly<{
  name: string
  /** Asks for BTC in `currency`; `parent` is the request's trace context, if it is traced. */
  fetch(currency: string, parent: Context | undefined): Promise<Attempt>
}>

export type ClientOptions = Readonly<{
  upstream: Upstream
  timeoutMs: number
  cells: UpstreamCells
  logger: Logger
  /** Wall clock, for the time of a rate whose upstream gives none. */
  now?: () => number
}>

const NOT_QUOTED_ATTEMPT: Attempt = Object.freeze({ outcome: 'not_quoted' })
const INVALID_REASON = 'sent an invalid reply'

export const createUpstreamClient = ({ upstream, timeoutMs, cells, logger, now = Date.now }: ClientOptions): UpstreamClient => {
  // Everything but url.full is the same for every attempt: the host never depends on the currency.
  const sample = upstream.url('USD')
  const port = sample.port === '' ? (sample.protocol === 'https:' ? 443 : 80) : Number(sample.port)
  const spanName = `GET ${sample.host}`
  const timeoutReason = `timed out after ${timeoutMs} ms`
  const base: Attributes = { 'http.request.method': 'GET', 'server.address': sample.hostname, 'server.port': port }

  /** `detail` is for the log only: it may say more than a client should see. */
  const failed = (span: Span, isTimeout: boolean, reason: string, errorType: string, detail: string): Attempt => {
    span.setAttribute('error.type', errorType)
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason })
    logger.warning('upstream_failed', { upstream: upstream.name, reason, detail })
    return { outcome: 'failed', isTimeout, reason }
  }

  /** The HTTP exchange; throws only what fetch and the body stream throw (network, abort). */
  const exchange = async (url: URL, headers: Record<string, string>, signal: AbortSignal, span: Span, currency: string): Promise<Attempt> => {
    // Redirects are not followed: a 3xx says the configured base URL is not the API.
    const res = await fetch(url, { headers, signal, redirect: 'manual' })
    span.setAttribute('http.response.status_code', res.status)
    if (!res.ok) {
      // The verdict is in the status line; the body (often an HTML error page) is dropped unread.
      await res.body?.cancel()
      return failed(span, false, `answered HTTP ${res.status}`, String(res.status), `HTTP ${res.status}`)
    }
    const body = await readCapped(res, MAX_REPLY_BYTES)
    if (body === undefined) return failed(span, false, INVALID_REASON, 'invalid_reply', `no body, or one over ${MAX_REPLY_BYTES} bytes`)
    let json: unknown
    try {
      json = JSON.parse(body.toString('utf8'))
    } catch {
      // An HTML page served with 200 (a captive portal, a CDN's block page) ends here.
      return failed(span, false, INVALID_REASON, 'invalid_reply', 'not JSON')
    }
    const reading = upstream.read(json, currency, now())
    if (reading === INVALID) return failed(span, false, INVALID_REASON, 'invalid_reply', 'not the expected JSON')
    return reading === NOT_QUOTED ? NOT_QUOTED_ATTEMPT : { outcome: 'quoted', quote: reading }
  }

  const outcomeOf = (attempt: Attempt): Outcome => (attempt.outcome !== 'failed' ? 'success' : attempt.isTimeout ? 'timeout' : 'error')

  return {
    name: upstream.name,
    fetch: async (currency, parent = ROOT_CONTEXT) => {
      const url = upstream.url(currency)
      const span = getTracer().startSpan(spanName, { kind: SpanKind.CLIENT, attributes: { ...base, 'url.full': url.href } }, parent)
      const headers: Record<string, string> = { accept: 'application/json' }
      // Writes `traceparent` only while tracing runs: the W3C propagator is registered with the SDK.
      propagation.inject(trace.setSpan(parent, span), headers)
      const signal = AbortSignal.timeout(timeoutMs)
      const started = performance.now()
      let attempt: Attempt
      try {
        attempt = await exchange(url, headers, signal, span, currency)
      } catch (error: unknown) {
        // The timeout aborts whatever was under way: connect, headers or body.
        attempt = signal.aborted
          ? failed(span, true, timeoutReason, 'timeout', timeoutReason)
          : failed(span, false, 'could not be reached', 'connection', describeError(rootCause(error)))
      }
      cells.duration.observe((performance.now() - started) / 1000)
      cells.outcomes[outcomeOf(attempt)].inc()
      span.end()
      return attempt
    },
  }
}
