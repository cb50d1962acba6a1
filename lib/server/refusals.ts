// What never becomes a routed request (row 0 of the precedence table in lib/server/inspect.ts):
// bytes Node's parser refuses, a head over the limits or too slow, CONNECT, and a connection over
// SVC_MAX_CONNECTIONS. Each is answered straight on the socket with `Connection: close`, logged as
// `request_rejected` and counted under endpoint="<unmatched>".
import { randomUUID } from 'node:crypto'
import type { Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { PROBLEM_CONTENT_TYPE, problem } from '../core/http/problem-body.js'
import { UNMATCHED } from '../core/pipeline.js'
import { count, type CounterCell } from '../telemetry/metrics/cells.js'
import type { HttpMetrics } from '../telemetry/metrics/http-metrics.js'
import type { Logger } from '../telemetry/logger.js'
import { RAW_DEFAULT_HEADERS } from './headers.js'

export type RefusalOptions = Readonly<{
  logger: Logger
  /** Uncounted without it. */
  metrics: HttpMetrics | undefined
  maxHeaderBytes: number
  /** SVC_MAX_CONNECTIONS; 0: no cap. */
  maxConnections: number
}>

/** Wires every refusal into the server: its clientError and connect events, and the connection cap. */
export const refuseBeforeRouting = (http: Server, { logger, metrics, maxHeaderBytes, maxConnections }: RefusalOptions): void => {
  const refuse = createRefuser(logger, metrics)
  http.on('clientError', onClientError(refuse, clientErrorRefusals(maxHeaderBytes)))
  // This is no proxy: CONNECT (authority-form) is refused like any other target that is not a path.
  http.on('connect', (_req: unknown, socket: Duplex) => refuse(socket, NOT_A_PROXY, 'CONNECT', 'CONNECT'))
  if (maxConnections > 0) limitConnections(http, maxConnections, refuse)
}

/**
 * An answer written straight to the socket: the bytes on the wire are built once, with the request
 * id spliced in twice (header and body). The problem has no `instance`: there is no parsed path to name.
 */
type Refusal = Readonly<{ status: number; code: string; wire: readonly [string, string, string] }>

const refusal = (status: number, code: string, detail: string, extraHeaders = ''): Refusal => {
  const members = problem(status, code, detail)
  const bodyHead = `${JSON.stringify(members).slice(0, -1)},"request_id":"`
  const length = Buffer.byteLength(bodyHead) + 36 + 2
  const head =
    `HTTP/1.1 ${status} ${members.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${length}\r\n` +
    `${RAW_DEFAULT_HEADERS}${extraHeaders}Connection: close\r\nX-Request-ID: `
  return { status, code, wire: [head, `\r\n\r\n${bodyHead}`, '"}'] }
}

const BAD_REQUEST = refusal(400, 'BAD_REQUEST', 'The request is not valid HTTP/1.1')
const NOT_A_PROXY = refusal(400, 'INVALID_TARGET', 'The request target must be a path or an http(s) URL')
const TOO_MANY_CONNECTIONS = refusal(503, 'TOO_MANY_CONNECTIONS', 'Too many open connections; retry later', 'Retry-After: 1\r\n')

/** Node's error codes for what it refuses, each with its answer; any other is BAD_REQUEST. */
const clientErrorRefusals = (maxHeaderBytes: number): ReadonlyMap<string, Refusal> => {
  const framing = refusal(400, 'INVALID_FRAMING', 'Content-Length or Transfer-Encoding is invalid, or they conflict')
  return new Map([
    ['HPE_HEADER_OVERFLOW', refusal(431, 'HEADERS_TOO_LARGE', `Request line and headers exceed ${maxHeaderBytes} bytes`)],
    ['ERR_HTTP_REQUEST_TIMEOUT', refusal(408, 'REQUEST_TIMEOUT', 'The request did not arrive in time')],
    ['HPE_INVALID_CONTENT_LENGTH', framing],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', framing],
    ['HPE_INVALID_TRANSFER_ENCODING', framing],
    ['HPE_INVALID_CHUNK_SIZE', framing],
  ])
}

type Refuse = (socket: Duplex, answer: Refusal, method: string, reason: string) => void

/**
 * Answers, logs (`request_rejected`: status, code and `reason`, Node's error code) and counts a
 * refusal. The count goes to http_requests_total{endpoint="<unmatched>"}, with `method="OTHER"`
 * (the method was never parsed) except for CONNECT: a handful of series whatever clients send.
 */
const createRefuser = (logger: Logger, metrics: HttpMetrics | undefined): Refuse => {
  const info = logger.prepare('info', 'request_rejected')
  const warning = logger.prepare('warning', 'request_rejected')
  const cells = new Map<string, CounterCell>()
  return (socket, { status, code, wire }, method, reason) => {
    const requestId = randomUUID()
    socket.end(`${wire[0]}${requestId}${wire[1]}${requestId}${wire[2]}`)
    if (metrics !== undefined) {
      const key = `${method} ${status}`
      let cell = cells.get(key)
      if (cell === undefined) cells.set(key, (cell = metrics.requestCell(method, UNMATCHED, status)))
      count(cell, undefined)
    }
    const line = status >= 500 ? warning : info
    line?.(`,"status":${status},"code":"${code}","reason":${JSON.stringify(reason)}`, {
      requestId,
      traceId: undefined,
      spanId: undefined,
      traceContext: undefined,
    })
  }
}

/** Requests Node refuses before they reach a route (malformed, a head too large, timed out). */
const onClientError =
  (refuse: Refuse, refusals: ReadonlyMap<string, Refusal>) =>
  (error: NodeJS.ErrnoException, socket: Duplex): void => {
    // Nothing can be answered on a socket the client already reset or closed.
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
    // A connection that never sent a byte made no request: it is closed without an answer.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && (socket as Socket).bytesRead === 0) return void socket.destroy()
    // A response still owns the socket (the broken bytes followed a request): an answer now would
    // interleave with it. A written one closes the connection once sent; one still being prepared
    // is cut, since its request cannot arrive whole (its log line and count show it, as a 400).
    // Node's own default handler makes the same check on the same field.
    const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (current !== undefined && current !== null) return void (current.writableEnded ? socket.end() : socket.destroy())
    refuse(socket, refusals.get(String(error.code)) ?? BAD_REQUEST, 'OTHER', String(error.code))
  }

/**
 * SVC_MAX_CONNECTIONS: a connection beyond the cap is answered 503 with Retry-After at once and
 * closed in the same turn, before a byte of its request is read, so none of it reaches an
 * endpoint. This listener runs after Node's own, which has attached the parser to the socket;
 * the socket closes before that parser reads anything.
 */
const limitConnections = (http: Server, max: number, refuse: Refuse): void => {
  let open = 0
  const release = (): void => {
    open--
  }
  http.on('connection', (socket: Socket) => {
    if (open >= max) {
      refuse(socket, TOO_MANY_CONNECTIONS, 'OTHER', 'MAX_CONNECTIONS')
      return void socket.destroy()
    }
    open++
    socket.once('close', release)
  })
}
