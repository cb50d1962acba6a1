// Binding the listener, and the graceful drain on shutdown (lib/README.md §8): the lifecycle turns
// `ready` once bound, `draining` at once on drain (readiness answers 503), and `stopped` once every
// connection has finished.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Lifecycle } from '../core/lifecycle.js'

export type Listener = Readonly<{
  /** Binds the listener; resolves with the bound address, rejects with the listen error. */
  listen(): Promise<AddressInfo>
  /**
   * Readiness turns 503 at once; after the shutdown delay the listener stops accepting, open
   * streams are told to end (`lifecycle.closing`), and in-flight requests finish within the drain
   * timeout.
   */
  drain(): Promise<{ isComplete: boolean }>
}>

export type ListenOptions = Readonly<{
  address: Readonly<{ host: string; port: number }>
  /** SVC_SHUTDOWN_DELAY_MS: how long a load balancer gets to see readiness fail before the listener closes. */
  shutdownDelayMs: number
  /** SVC_DRAIN_TIMEOUT_MS: how long in-flight requests get before their connections are closed. */
  drainTimeoutMs: number
}>

/**
 * Published by node:http once a response's last byte is out, before it decides what becomes of the
 * connection (Node 20.20: `resOnFinish` in lib/_http_server.js); nothing is published while nobody
 * subscribes, so the drain subscribes and requests before it pay nothing.
 */
const RESPONSE_FINISHED = 'http.server.response.finish'
type ResponseFinished = Readonly<{ server: unknown; response: ServerResponse }>

export const createListener = (http: Server, lifecycle: Lifecycle, { address, shutdownDelayMs, drainTimeoutMs }: ListenOptions): Listener => ({
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
    if (shutdownDelayMs > 0) await sleep(shutdownDelayMs)
    return new Promise<{ isComplete: boolean }>((resolve) => {
      // A reply whose head went out keep-alive before the drain (a stream that was running, a body
      // still being sent) leaves its connection idle when it ends, and Node would keep that
      // connection for keepAliveTimeout, holding the drain open until its timeout. So once such a
      // reply is out, idle connections are closed again: on the next tick, when Node has let go of
      // the socket. Replies written during the drain close their connections themselves, so only
      // the few in flight when it began cost a pass over the connections.
      const closeIdle = (): void => http.closeIdleConnections()
      const onFinished = (message: unknown): void => {
        const { server, response } = message as ResponseFinished
        if (server === http && response.shouldKeepAlive) process.nextTick(closeIdle)
      }
      const settle = (isComplete: boolean): void => {
        clearTimeout(timer)
        unsubscribe(RESPONSE_FINISHED, onFinished)
        resolve({ isComplete })
      }
      const timer = setTimeout(() => {
        http.closeAllConnections()
        settle(false)
      }, drainTimeoutMs)
      subscribe(RESPONSE_FINISHED, onFinished)
      http.close(() => {
        lifecycle.state = 'stopped'
        settle(true)
      })
      // Sockets between requests would otherwise hold the listener open until keepAliveTimeout.
      http.closeIdleConnections()
      // Open streams end now, each with a last event that sends its client elsewhere: the balancer
      // has stopped routing here, and a stream would otherwise hold the drain to its timeout.
      lifecycle.close()
    })
  },
})
