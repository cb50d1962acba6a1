// Network errors in a few stable words, for whatever reports a failed connection to an operator or a
// client: the probes (/ready bodies), the rate upstreams and the HTTP model store. No addresses and
// no stack traces: these texts are shown in responses.
import { errorCode } from '../errors.js'

export const CONNECTION_CLOSED = 'connection closed'

// A reset or a broken pipe is the peer closing too, only less politely.
const MESSAGES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: CONNECTION_CLOSED,
  EPIPE: CONNECTION_CLOSED,
}

/** An error in words: a known cause spelled out, otherwise Node's error code, otherwise its message. */
export const describeError = (error: unknown): string => {
  const code = errorCode(error)
  if (code !== undefined) return MESSAGES[code] ?? code
  return error instanceof Error ? error.message : String(error)
}

/** fetch rejects with `TypeError: fetch failed` (or `terminated` mid-body); what happened is its cause. */
export const rootCause = (error: unknown): unknown => (error instanceof Error && error.cause !== undefined ? error.cause : error)
