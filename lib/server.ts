// The node:http server and its lifecycle (DESIGN §8): it routes each request to the pipeline built
// for it at start-up, writes the reply exactly once, and drains gracefully on shutdown. What never
// becomes a routed request (bytes that are not HTTP, a head over the limits, a timeout, a connection
// over SVC_MAX_CONNECTIONS) it answers itself, logs as `request_rejected` and counts.
import { randomUUID } from 'node:crypto'
import { createServer as createHttpServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Duplex } from 'node:stream'
import type { Config, Endpoint } from './config.js'
import { Ctx } from './http/context.js'
import { HttpError } from './http/errors.js'
import { INTERNAL_PROBLEM, PROBLEM_CONTENT_TYPE, problem, problemJson } from './http/problem.js'
import type { Headers, Reply, StreamReply } from './pipeline.js'
import { UNMATCHED, type Router } from './router.js'
import { count, type CounterCell, type HttpMetrics } from './telemetry/http-metrics.js'
import { errorFields, type Logger } from './telemetry/logger.js'

export type ServerLimits = Readonly<{
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
  /** How often Node looks for requests past headersTimeout or requestTimeout. */
  checkIntervalMs: number
  maxHeaderBytes: number
  maxUrlBytes: number
  /** A stream whose client has read nothing for this long is dropped. */
  streamStallMs: number
}>

/**
 * Limits, chosen for a service behind a load balancer:
 * - headers must arrive within 10 s (a slowloris client is cut off there), checked every second:
 *   Node checks every 30 s by default, which lets a trickling client hold its socket up to 40 s;
 * - a whole request, body included, within 30 s (1 MiB at a slow 35 KiB/s);
 * - an idle keep-alive connection is kept 65 s, longer than the 60 s idle timeout of common load
 *   balancers, so the balancer closes first and never reuses a socket we are closing (a 502 race);
 * - headers are capped at 16 KiB (431 beyond), Node's default, ample for cookies and traceparent;
 *   the request target at 8 KiB (414 beyond), as common proxies cap it; a target longer than the
 *   16 KiB head is a 431, since Node refuses the head before the target is known;
 * - a stream whose client reads nothing for 30 s is dropped: otherwise a client that never reads
 *   holds a stream slot and its socket for as long as it likes.
 */
export const LIMITS: ServerLimits = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  checkIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  maxUrlBytes: 8 * 1024,
  streamStallMs: 30_000,
})

export type ServerState = 'starting' | 'ready' | 'draining' | 'stopped'

/** Where the process is in its life; shared with the probes, which answer from it. */
export type Lifecycle = { state: ServerState; readonly startedAt: number }
export const createLifecycle = (now: number = performance.now()): Lifecycle => ({ state: 'starting', startedAt: now })

export type SvcServer = Readonly<{
  state(): ServerState
  /** Binds the listener; resolves with the bound address, rejects with the listen error. */
  listen(): Promise<AddressInfo>
  /**
   * Readiness turns 503 at once; after the shutdown delay the listener stops accepting, and
   * in-flight requests and streams finish within the drain timeout.
   */
  drain(): Promise<{ isComplete: boolean }>
  http: Server
}>

export type ServerOptions = Readonly<{
  config: Config
  router: Router
  logger: Logger
  lifecycle?: Lifecycle
  /** Counts what the server refuses before routing, as `endpoint="<unmatched>"`; uncounted without it. */
  metrics?: HttpMetrics
  /** Overrides of LIMITS (tests shorten the timeouts). */
  limits?: Partial<ServerLimits>
  /** Where to listen; HOST and PORT unless given (the admin listener is SVC_ADMIN_HOST:SVC_ADMIN_PORT). */
  address?: Endpoint
}>

const JSON_TYPE = 'application/json'
const TEXT_TYPE = 'text/plain; charset=utf-8'
const SSE_TYPE = 'text/event-stream; charset=utf-8'

// Framing and target problems found in the head (see `inspect`). Each is constant, so built once.
const INVALID_FRAMING = new HttpError(400, 'INVALID_FRAMING', 'Transfer-Encoding must be chunked alone, and HTTP/1.0 requests cannot use it')
const INVALID_HOST = new HttpError(400, 'INVALID_HOST', 'An HTTP/1.1 request carries exactly one Host header')
const INVALID_TARGET = new HttpError(400, 'INVALID_TARGET', 'The request target must be a path or an http(s) URL')
const EXPECTATION_FAILED = new HttpError(417, 'EXPECTATION_FAILED', 'The only expectation supported is 100-continue')

/** How Node handed the request over: as is, after `Expect: 100-continue`, or with another Expect. */
type Expect = 'none' | 'continue' | 'unsupported'

export const createServer = ({
  config,
  router,
  logger,
  lifecycle = createLifecycle(),
  metrics,
  limits: overrides,
  address = config,
}: ServerOptions): SvcServer => {
  const limits: ServerLimits = { ...LIMITS, ...overrides }
  const maxBody = config.maxBodyBytes
  const maxUrl = limits.maxUrlBytes
  // SVC_MAX_CONNECTIONS (0: no cap) and SVC_TRUST_REQUEST_ID.
  const { maxConnections, trustRequestId } = config
  // `error` too: Open Inference Protocol clients read that member (DESIGN §10), whatever the route.
  const tooLargeDetail = `Request body exceeds the limit of ${maxBody} bytes`
  const tooLarge = new HttpError(413, 'PAYLOAD_TOO_LARGE', tooLargeDetail, { extra: { error: tooLargeDetail } })
  const uriTooLong = new HttpError(414, 'URI_TOO_LONG', `The request target exceeds ${maxUrl} bytes`)
  const refuse = createRefuser(logger, metrics)
  const refusals = clientErrorRefusals(limits.maxHeaderBytes)

  // hot path: change with care
  const dispatch = (req: IncomingMessage, res: ServerResponse, expect: Expect): void => {
    const ctx = new Ctx(req, res, maxBody, trustRequestId)
    const entry = router.find(ctx)
    const handler = entry.handlers.get(ctx.method) ?? entry.otherMethod
    inspect(ctx, req)
    if (expect !== 'none') expectation(ctx, res, expect)
    let reply: Reply | Promise<Reply>
    try {
      reply = handler(ctx)
    } catch (error: unknown) {
      return lastResort(ctx, res, error)
    }
    if (reply instanceof Promise)
      reply.then(
        (r) => write(ctx, res, r),
        (error: unknown) => lastResort(ctx, res, error),
      )
    else write(ctx, res, reply)
  }
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => dispatch(req, res, 'none')

  /**
   * What Node's parser leaves to the server (RFC 9112): exactly one Host in HTTP/1.1 (§3.2), no
   * transfer coding but `chunked`, and none in HTTP/1.0 (§6.1, §6.3), a target that is a path, or
   * an http(s) URL (absolute-form, made a path by Ctx), or `*` for OPTIONS (§3.2.4), and the
   * limits. A framing problem closes the connection after the answer: the bytes that follow this
   * head cannot be trusted to start the next request. One pass over the raw header list:
   * `req.headers` is built lazily by Node, and most requests never need it.
   */
  const inspect = (ctx: Ctx, req: IncomingMessage): void => {
    const raw = req.rawHeaders
    let hosts = 0
    let length = 0
    let coding: string | undefined
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i] as string
      // Name lengths first: lower-casing only the few names that could match (measured faster than
      // a char-code comparison loop on Node 20: 134 vs 165–207 ns for a 7-header request).
      if (name.length === 4) {
        if (name.toLowerCase() === 'host') hosts++
      } else if (name.length === 14) {
        if (name.toLowerCase() === 'content-length') length = Number(raw[i + 1])
      } else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') coding = raw[i + 1] as string
    }
    if (coding !== undefined) {
      // Node's parser has already refused a duplicate, or one combined with Content-Length.
      if (req.httpVersionMinor === 0 || coding.length !== 7 || coding.toLowerCase() !== 'chunked') return abandon(ctx, INVALID_FRAMING)
      ctx.hasChunkedBody = true
    }
    if (hosts > 1 || (hosts === 0 && req.httpVersionMinor === 1)) return abandon(ctx, INVALID_HOST)
    if (length > maxBody) return abandon(ctx, tooLarge)
    const url = req.url as string
    if (url.length > maxUrl) ctx.rejection = uriTooLong
    else if (url.charCodeAt(0) !== 0x2f && !isTargetAccepted(url, ctx.method)) ctx.rejection = INVALID_TARGET
  }

  const expectation = (ctx: Ctx, res: ServerResponse, expect: Expect): void => {
    // A request already refused is answered without asking for its body: the client never sends it.
    if (expect === 'unsupported') abandon(ctx, EXPECTATION_FAILED)
    else if (ctx.rejection === undefined) res.writeContinue()
  }

  // Every header goes into the one writeHead() object: a header set earlier with setHeader()
  // sends Node down its slow path, which re-validates and re-stores every header of the response.
  // `x-content-type-options` and a default `cache-control` ride along on every answer; a reply's
  // own headers (lower-case names) win.
  const write = (ctx: Ctx, res: ServerResponse, reply: Reply): void => {
    // Draining, a body left unread, or a chunked body still arriving (its size has no bound, and
    // reading it to find the next request would tie the connection up): this response ends the
    // connection. A Content-Length body left unread is at most maxBody, so Node drains it instead.
    if (lifecycle.state === 'draining' || ctx.isBodyAbandoned || (ctx.hasChunkedBody && !ctx.req.complete)) res.shouldKeepAlive = false
    if ('stream' in reply) return void writeStream(ctx, res, reply)

    let type: string
    let payload: string
    if ('problem' in reply) {
      type = PROBLEM_CONTENT_TYPE
      payload = problemJson(reply.problem, ctx)
    } else if ('text' in reply) {
      type = TEXT_TYPE
      payload = reply.text
    } else if (reply.body === undefined) {
      res.writeHead(reply.status, withExtra({ 'x-request-id': ctx.requestId, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }, reply.headers))
      res.end()
      return ctx.onWritten?.(ctx, undefined)
    } else {
      type = JSON_TYPE
      // A body JSON cannot hold (a cycle, a BigInt, nesting deeper than the stack) is the endpoint's
      // failure: a 500, never an exception escaping into Node's request event.
      const json = serialise(reply.body)
      if (typeof json !== 'string') return lastResort(ctx, res, json)
      payload = json
    }
    const headers = {
      'content-type': type,
      'content-length': Buffer.byteLength(payload),
      'x-request-id': ctx.requestId,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    }
    res.writeHead(reply.status, withExtra(headers, reply.headers))
    res.end(payload)
    ctx.onWritten?.(ctx, undefined)
  }

  const writeStream = async (ctx: Ctx, res: ServerResponse, reply: StreamReply): Promise<void> => {
    const headers = { 'content-type': SSE_TYPE, 'cache-control': 'no-cache', 'x-request-id': ctx.requestId, 'x-content-type-options': 'nosniff' }
    res.writeHead(reply.status, withExtra(headers, reply.headers))
    const iterator = reply.stream[Symbol.asyncIterator]()
    let failure: unknown
    // HEAD sends the headers only; the finally below still stops the stream, so layers close it.
    const isHead = ctx.method === 'HEAD'
    try {
      if (!isHead) res.flushHeaders()
      while (!isHead && !res.destroyed) {
        const item = await iterator.next()
        if (item.done === true || res.destroyed) break
        // Backpressure: a slow reader pauses the stream instead of growing our buffer, and one
        // that reads nothing at all is dropped after streamStallMs.
        if (!res.write(item.value) && !(await drained(res, limits.streamStallMs))) {
          logger.warning('stream_stalled', { path: ctx.path, stalled_ms: limits.streamStallMs }, ctx)
          res.destroy()
        }
      }
    } catch (error: unknown) {
      failure = error
      logger.error('stream_failed', { path: ctx.path, error: errorFields(error) }, ctx)
    } finally {
      // Stops a generator that is still running because the client left. Its cleanup may throw
      // too: that is this stream's failure, never the process's.
      try {
        await iterator.return?.()
      } catch (error: unknown) {
        failure ??= error
        logger.error('stream_failed', { path: ctx.path, error: errorFields(error) }, ctx)
      }
      res.end()
      ctx.onWritten?.(ctx, failure)
    }
  }

  /** A layer itself failed, or a body could not be serialised: answer 500 and log it. */
  const lastResort = (ctx: Ctx, res: ServerResponse, error: unknown): void => {
    logger.error('request_failed', { method: ctx.method, path: ctx.path, error: errorFields(error) }, ctx)
    const body = problemJson(INTERNAL_PROBLEM, ctx)
    res.writeHead(500, {
      'content-type': PROBLEM_CONTENT_TYPE,
      'content-length': Buffer.byteLength(body),
      'x-request-id': ctx.requestId,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    })
    res.end(body)
    ctx.onWritten?.(ctx, error)
  }

  // Requests Node refuses before they reach a route (malformed, a head too large, timed out).
  const onClientError = (error: NodeJS.ErrnoException, socket: Duplex): void => {
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

  const http = createHttpServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
      maxHeaderSize: limits.maxHeaderBytes,
      // Checked in `inspect`, so a request without Host gets a problem answer like any other 400.
      requireHostHeader: false,
    },
    onRequest,
  )
  http.on('clientError', onClientError)
  http.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, 'continue'))
  http.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, 'unsupported'))
  // This is no proxy: CONNECT (authority-form) is refused like any other target that is not a path.
  http.on('connect', (_req: IncomingMessage, socket: Duplex) => refuse(socket, NOT_A_PROXY, 'CONNECT', 'CONNECT'))
  if (maxConnections > 0) limitConnections(http, maxConnections, refuse)

  return {
    http,
    state: () => lifecycle.state,
    listen: () =>
      new Promise<AddressInfo>((resolve, reject) => {
        http.once('error', reject)
        http.listen(address.port, address.host, () => {
          http.off('error', reject)
          lifecycle.state = 'ready'
          resolve(http.address() as AddressInfo)
        })
      }),
    drain: async () => {
      lifecycle.state = 'draining'
      if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs)
      return new Promise<{ isComplete: boolean }>((resolve) => {
        const timer = setTimeout(() => {
          http.closeAllConnections()
          resolve({ isComplete: false })
        }, config.drainTimeoutMs)
        http.close(() => {
          clearTimeout(timer)
          lifecycle.state = 'stopped'
          resolve({ isComplete: true })
        })
        // Sockets between requests would otherwise hold the listener open until keepAliveTimeout.
        http.closeIdleConnections()
      })
    },
  }
}

const HTTP_URL = /^https?:\/\//i
/** A target that is not a path: an http(s) URL (absolute-form), or `*` for OPTIONS (asterisk-form). */
const isTargetAccepted = (url: string, method: string): boolean => HTTP_URL.test(url) || (url === '*' && method === 'OPTIONS')

const abandon = (ctx: Ctx, rejection: HttpError): void => {
  ctx.rejection = rejection
  ctx.isBodyAbandoned = true
}

/** JSON text, or what JSON.stringify threw; a body it cannot represent at all (a function) is an error too. */
const serialise = (body: unknown): string | unknown => {
  try {
    return JSON.stringify(body) ?? new TypeError(`a reply body of type ${typeof body} is not JSON`)
  } catch (error: unknown) {
    return error
  }
}

/** The reply's own headers win over the defaults. */
const withExtra = (headers: OutgoingHttpHeaders, extra: Headers | undefined): OutgoingHttpHeaders => {
  if (extra !== undefined) for (const name in extra) headers[name] = extra[name]
  return headers
}

/** Waits until the client has read what is buffered: true then (or when it left), false if it read nothing for `stallMs`. */
const drained = (res: ServerResponse, stallMs: number): Promise<boolean> =>
  new Promise((resolve) => {
    const settle = (isDrained: boolean): void => {
      clearTimeout(timer)
      res.off('drain', onDrain)
      res.off('close', onDrain)
      resolve(isDrained)
    }
    const onDrain = (): void => settle(true)
    const timer = setTimeout(settle, stallMs, false)
    res.on('drain', onDrain)
    res.on('close', onDrain)
  })

/**
 * An answer written straight to the socket, for what never became a routed request: the bytes on
 * the wire are built once, with the request id spliced in twice (header and body). The problem
 * has no `instance`: there is no parsed path to name.
 */
type Refusal = Readonly<{ status: number; code: string; wire: readonly [string, string, string] }>

const refusal = (status: number, code: string, detail: string, extraHeaders = ''): Refusal => {
  const members = problem(status, code, detail)
  const bodyHead = `${JSON.stringify(members).slice(0, -1)},"request_id":"`
  const length = Buffer.byteLength(bodyHead) + 36 + 2
  const head =
    `HTTP/1.1 ${status} ${members.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${length}\r\n` +
    `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n${extraHeaders}Connection: close\r\nX-Request-ID: `
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
