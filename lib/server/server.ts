// The node:http server (lib/README.md §1, §8): it routes each request to the pipeline built for it
// at start-up and writes the reply exactly once. The parts, in lib/server/:
//   inspect.ts   what the head decides before the pipeline runs; the precedence of rejections and
//                the keep-alive rules are written down there, once
//   write.ts     the reply on the wire (stream.ts for streams, headers.ts for what every answer carries)
//   refusals.ts  what never becomes a routed request: answered on the socket, logged, counted
//   listen.ts    binding the listener, and the drain on shutdown
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Config, Endpoint } from '../config/config.js'
import { Ctx } from '../core/http/context.js'
import { createLifecycle, type Lifecycle, type ServerState } from '../core/lifecycle.js'
import type { Handler, Reply } from '../core/pipeline.js'
import type { Router } from '../core/router.js'
import { createInspector, type Expect } from './inspect.js'
import { createListener, type Listener } from './listen.js'
import { refuseBeforeRouting } from './refusals.js'
import { createWriter } from './write.js'
import type { HttpMetrics } from '../telemetry/metrics/http-metrics.js'
import type { Logger } from '../telemetry/logger.js'

export type ServerLimits = Readonly<{
  headersTimeoutMs: number
  requestTimeoutMs: number
  /** SVC_KEEP_ALIVE_TIMEOUT_MS unless overridden. */
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
 * - a whole request, body included, within 30 s (1 MiB at a slow 35 KiB/s); Node refuses a
 *   headers timeout above the request timeout;
 * - an idle keep-alive connection is kept SVC_KEEP_ALIVE_TIMEOUT_MS (65 s by default), longer than
 *   the idle timeout of the balancer in front (60 s for most), so the balancer closes first and
 *   never reuses a socket we are closing (a 502 race). It owes nothing to the headers timeout: since
 *   Node 18 that one runs from a request's first byte, not over the idle time before it (checked on
 *   Node 20.20, test/integration/slow-clients.test.ts), so any keep-alive setting leaves 10 s;
 * - headers are capped at 16 KiB (431 beyond), Node's default, ample for cookies and traceparent;
 *   the request target at 8 KiB (414 beyond), as common proxies cap it; a target longer than the
 *   16 KiB head is a 431, since Node refuses the head before the target is known;
 * - a stream whose client reads nothing for 30 s is dropped: otherwise a client that never reads
 *   holds a stream slot and its socket for as long as it likes; a reply, after
 *   SVC_WRITE_TIMEOUT_MS (30 s by default) in which its client read none of it (write.ts).
 */
export const LIMITS: Omit<ServerLimits, 'keepAliveTimeoutMs'> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  checkIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  maxUrlBytes: 8 * 1024,
  streamStallMs: 30_000,
})

export type SvcServer = Listener &
  Readonly<{
    state(): ServerState
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

export const createServer = ({
  config,
  router,
  logger,
  lifecycle = createLifecycle(),
  metrics,
  limits: overrides,
  address = config,
}: ServerOptions): SvcServer => {
  const limits: ServerLimits = { ...LIMITS, keepAliveTimeoutMs: config.keepAliveTimeoutMs, ...overrides }
  // SVC_MAX_BODY_BYTES and SVC_TRUST_REQUEST_ID.
  const { maxBodyBytes, trustRequestId } = config
  const inspect = createInspector(maxBodyBytes, limits.maxUrlBytes)
  const { write, lastResort } = createWriter(logger, lifecycle, { streamStallMs: limits.streamStallMs, writeTimeoutMs: config.writeTimeoutMs }, metrics)

  // hot path: change with care
  const run = (ctx: Ctx, res: ServerResponse, handler: Handler): void => {
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

  const dispatch = (req: IncomingMessage, res: ServerResponse, expect: Expect): void => {
    const ctx = new Ctx(req, res, maxBodyBytes, trustRequestId)
    const entry = router.find(ctx)
    const handler = entry.handlers.get(ctx.method) ?? entry.otherMethod
    inspect(ctx, req, res, expect)
    // A JSON body its route takes is read first, unless the request is refused already: then the
    // pipeline runs once, in one turn. Anything else runs at once.
    if (entry.bodyMethods.size !== 0 && ctx.rejection === undefined && entry.bodyMethods.has(ctx.method) && ctx.hasJsonType)
      ctx.readBody(() => run(ctx, res, handler))
    else run(ctx, res, handler)
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
    (req, res) => dispatch(req, res, 'none'),
  )
  http.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, 'continue'))
  http.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => dispatch(req, res, 'unsupported'))
  refuseBeforeRouting(http, { logger, metrics, maxHeaderBytes: limits.maxHeaderBytes, maxConnections: config.maxConnections })
  const { listen, drain } = createListener(http, lifecycle, { address, shutdownDelayMs: config.shutdownDelayMs, drainTimeoutMs: config.drainTimeoutMs })
  return { http, state: () => lifecycle.state, listen, drain }
}
