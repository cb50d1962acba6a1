// Binding the listener, and the graceful drain on shutdown (lib/README.md §8): the lifecycle turns
// `ready` once bound, `draining` at once on drain (readiness answers 503), and `stopped` once every
// connection has finished.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Lifecycle } from '../lifecycle.js'

export type Listener = Readonly<{
  /** Binds the listener; resolves with the bound address, rejects with the listen error. */
  listen(): Promise<AddressInfo>
  /**
   * Readiness turns 503 at once; after the shutdown delay the listener stops accepting, and
   * in-flight requests and streams finish within the drain timeout.
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
      const timer = setTimeout(() => {
        http.closeAllConnections()
        resolve({ isComplete: false })
      }, drainTimeoutMs)
      http.close(() => {
        clearTimeout(timer)
        lifecycle.state = 'stopped'
        resolve({ isComplete: true })
      })
      // Sockets between requests would otherwise hold the listener open until keepAliveTimeout.
      http.closeIdleConnections()
    })
  },
})
