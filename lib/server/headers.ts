// What every answer carries: `x-request-id`, `x-content-type-options: nosniff` and a Cache-Control
// (lib/README.md §7), with the reply's own headers (lower-case names) winning over the defaults.
// This module is the one place they are written, for each kind of answer: a body (write.ts), no
// body (204, 304), a stream (stream.ts), and the raw bytes of a refusal (refusals.ts).
// Every header goes into the one writeHead() object: a header set earlier with setHeader() sends
// Node down its slow path, which re-validates and re-stores every header of the response.
import type { OutgoingHttpHeaders } from 'node:http'
import type { Headers } from '../core/pipeline.js'

export const JSON_TYPE = 'application/json'
export const TEXT_TYPE = 'text/plain; charset=utf-8'
export const SSE_TYPE = 'text/event-stream; charset=utf-8'

const NOSNIFF = 'nosniff'
/** Cache-Control unless the reply sets its own; a stream's is `no-cache` (lib/README.md §7). */
const NO_STORE = 'no-store'
const STREAM_CACHE_CONTROL = 'no-cache'

/** The reply's own headers win over the defaults. */
export const withExtra = (headers: OutgoingHttpHeaders, extra: Headers | undefined): OutgoingHttpHeaders => {
  if (extra !== undefined) for (const name in extra) headers[name] = extra[name]
  return headers
}

// hot path: one object literal per answer, in wire order, so Node writes it as it is.

/** The head of an answer with a body: its type and length, then the defaults. */
export const bodyHeaders = (type: string, length: number, requestId: string, extra: Headers | undefined): OutgoingHttpHeaders =>
  withExtra({ 'content-type': type, 'content-length': length, 'x-request-id': requestId, 'x-content-type-options': NOSNIFF, 'cache-control': NO_STORE }, extra)

/** The head of an answer without a body (204, 304): the defaults alone. */
export const emptyHeaders = (requestId: string, extra: Headers | undefined): OutgoingHttpHeaders =>
  withExtra({ 'x-request-id': requestId, 'x-content-type-options': NOSNIFF, 'cache-control': NO_STORE }, extra)

/** The head of a stream of server-sent events. */
export const streamHeaders = (requestId: string, extra: Headers | undefined): OutgoingHttpHeaders =>
  withExtra({ 'content-type': SSE_TYPE, 'cache-control': STREAM_CACHE_CONTROL, 'x-request-id': requestId, 'x-content-type-options': NOSNIFF }, extra)

/** The defaults as header lines, for an answer written straight to the socket (refusals.ts). */
export const RAW_DEFAULT_HEADERS = `X-Content-Type-Options: ${NOSNIFF}\r\nCache-Control: ${NO_STORE}\r\n`
