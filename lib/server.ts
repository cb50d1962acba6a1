// The node:http server and its lifecycle (DESIGN §8): it routes each request to the pipeline built
// for it at start-up, writes the reply exactly once, and drains gracefully on shutdown.
import { randomUUID } from 'node:crypto'
import { createServer as createHttpServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Duplex } from 'node:stream'
import type { Config } from './config.js'
import { Ctx } from './http/context.js'
import { HttpError } from './http/errors.js'
import { INTERNAL_PROBLEM, PROBLEM_CONTENT_TYPE, problem, problemJson } from './http/problem.js'
import type { Headers, Reply, StreamReply } from './pipeline.js'
import type { Router } from './router.js'
import { errorFields, type Logger } from './telemetry/logger.js'

/**
 * Timeouts, chosen for a service behind a load balancer:
 * - headers must arrive within 10 s (a slowloris client is cut off there);
 * - a whole request, body included, within 30 s (1 MiB at a slow 35 KiB/s);
 * - an idle keep-alive connection is kept 65 s, longer than the 60 s idle timeout of common load
 *   balancers, so the balancer closes first and never reuses a socket we are closing (a 502 race);
 * - headers are capped at 16 KiB (431 beyond), Node's default, ample for cookies and traceparent.
 */
export const TIMEOUTS = Object.freeze({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 65_000, maxHeaderBytes: 16 * 1024 })

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

export type ServerOptions = Readonly<{ config: Config; router: Router; logger: Logger; lifecycle?: Lifecycle }>

const JSON_TYPE = 'application/json'
const TEXT_TYPE = 'text/plain; charset=utf-8'
const SSE_TYPE = 'text/event-stream; charset=utf-8'

export const createServer = ({ config, router, logger, lifecycle = createLifecycle() }: ServerOptions): SvcServer => {
  const maxBody = config.maxBodyBytes
  // `error` too: Open Inference Protocol clients read that member (DESIGN §10), whatever the route.
  const tooLargeDetail = `Request body exceeds the limit of ${maxBody} bytes`
  const tooLarge = new HttpError(413, 'PAYLOAD_TOO_LARGE', tooLargeDetail, { extra: { error: tooLargeDetail } })

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const ctx = new Ctx(req, res, maxBody)
    const entry = router.find(ctx)
    const handler = entry.handlers.get(ctx.method) ?? entry.otherMethod
    if (declaredLength(req.rawHeaders) > maxBody) {
      ctx.rejection = tooLarge
      ctx.isBodyAbandoned = true
    }
    let reply: Reply | Promise<Reply>
    try {
      reply = handler(ctx)
    } catch (error: unknown) {
      return lastResort(ctx, res, error)
    }
    if (reply instanceof Promise) reply.then((r) => write(ctx, res, r), (error: unknown) => lastResort(ctx, res, error))
    else write(ctx, res, reply)
  }

  // Every header goes into the one writeHead() object: a header set earlier with setHeader()
  // sends Node down its slow path, which re-validates and re-stores every header of the response.
  const write = (ctx: Ctx, res: ServerResponse, reply: Reply): void => {
    // Draining, or a body left unread: tell the client this connection ends with this response.
    if (lifecycle.state === 'draining' || ctx.isBodyAbandoned) res.shouldKeepAlive = false
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
      res.writeHead(reply.status, withExtra({ 'x-request-id': ctx.requestId }, reply.headers))
      res.end()
      return ctx.onWritten?.(ctx, undefined)
    } else {
      type = JSON_TYPE
      payload = JSON.stringify(reply.body)
    }
    const headers = { 'content-type': type, 'content-length': Buffer.byteLength(payload), 'x-request-id': ctx.requestId }
    res.writeHead(reply.status, withExtra(headers, reply.headers))
    res.end(payload)
    ctx.onWritten?.(ctx, undefined)
  }

  const writeStream = async (ctx: Ctx, res: ServerResponse, reply: StreamReply): Promise<void> => {
    res.writeHead(reply.status, withExtra({ 'content-type': SSE_TYPE, 'cache-control': 'no-cache', 'x-request-id': ctx.requestId }, reply.headers))
    const iterator = reply.stream[Symbol.asyncIterator]()
    let failure: unknown
    // HEAD sends the headers only; the finally below still stops the stream, so layers close it.
    const isHead = ctx.method === 'HEAD'
    try {
      if (!isHead) res.flushHeaders()
      while (!isHead && !res.destroyed) {
        const item = await iterator.next()
        if (item.done === true || res.destroyed) break
        // Backpressure: a slow reader pauses the stream instead of growing our buffer.
        if (!res.write(item.value)) await drained(res)
      }
    } catch (error: unknown) {
      failure = error
      logger.error('stream_failed', { path: ctx.path, error: errorFields(error) }, ctx)
    } finally {
      // Stops a generator that is still running because the client left.
      await iterator.return?.()
      res.end()
      ctx.onWritten?.(ctx, failure)
    }
  }

  /** A layer itself failed (endpoint errors never get here): answer 500 and log it. */
  const lastResort = (ctx: Ctx, res: ServerResponse, error: unknown): void => {
    logger.error('request_failed', { method: ctx.method, path: ctx.path, error: errorFields(error) }, ctx)
    const body = problemJson(INTERNAL_PROBLEM, ctx)
    res.writeHead(500, { 'content-type': PROBLEM_CONTENT_TYPE, 'content-length': Buffer.byteLength(body), 'x-request-id': ctx.requestId })
    res.end(body)
    ctx.onWritten?.(ctx, error)
  }

  const http = createHttpServer({
    headersTimeout: TIMEOUTS.headersMs,
    requestTimeout: TIMEOUTS.requestMs,
    keepAliveTimeout: TIMEOUTS.keepAliveMs,
    maxHeaderSize: TIMEOUTS.maxHeaderBytes,
  }, onRequest)
  http.on('clientError', onClientError)

  return {
    http,
    state: () => lifecycle.state,
    listen: () =>
      new Promise<AddressInfo>((resolve, reject) => {
        http.once('error', reject)
        http.listen(config.port, config.host, () => {
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

/**
 * Content-Length as declared, 0 when absent. Scans the raw header list rather than reading
 * `req.headers`, which Node builds lazily and which most requests never need.
 */
export const declaredLength = (rawHeaders: readonly string[]): number => {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 14 && name.toLowerCase() === 'content-length') return Number(rawHeaders[i + 1])
  }
  return 0
}

/** The reply's own headers win over the defaults. */
const withExtra = (headers: OutgoingHttpHeaders, extra: Headers | undefined): OutgoingHttpHeaders => {
  if (extra !== undefined) for (const name in extra) headers[name] = extra[name]
  return headers
}

const drained = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })

// Requests Node refuses before they reach us (malformed, headers too large, timed out) still get a
// problem+json answer where the socket can take one.
const CLIENT_ERRORS: Readonly<Record<string, [number, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', `Request headers exceed ${TIMEOUTS.maxHeaderBytes} bytes`],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time'],
}
const onClientError = (error: NodeJS.ErrnoException, socket: Duplex): void => {
  // Nothing can be answered on a socket the client already reset or closed.
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
  const [status, code, detail] = CLIENT_ERRORS[String(error.code)] ?? [400, 'BAD_REQUEST', 'The request is not valid HTTP/1.1']
  const requestId = randomUUID()
  const body = problem(status, code, detail)
  const json = JSON.stringify({ ...body, request_id: requestId })
  socket.end(
    `HTTP/1.1 ${status} ${body.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `X-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${json}`,
  )
}
