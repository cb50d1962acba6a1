// What every answer carries: `x-request-id`, `x-content-type-options: nosniff` and a Cache-Control
// (lib/README.md §7), with the reply's own headers (lower-case names) winning over the defaults.
// Every header goes into the one writeHead() object: a header set earlier with setHeader() sends
// Node down its slow path, which re-validates and re-stores every header of the response.
import type { OutgoingHttpHeaders } from 'node:http'
import type { Headers } from '../pipeline.js'

export const JSON_TYPE = 'application/json'
export const TEXT_TYPE = 'text/plain; charset=utf-8'
export const SSE_TYPE = 'text/event-stream; charset=utf-8'

/** The reply's own headers win over the defaults. */
export const withExtra = (headers: OutgoingHttpHeaders, extra: Headers | undefined): OutgoingHttpHeaders => {
  if (extra !== undefined) for (const name in extra) headers[name] = extra[name]
  return headers
}
