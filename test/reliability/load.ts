// An in-process load generator over node:http on keep-alive connections. Unlike wrk or autocannon
// it keeps every request's story — when it was sent and answered, its status, request id and trace
// id, whether it went on a kept-alive socket and whether its answer closed the connection — so a
// scenario can match each answer with its log line and its span. A refused connection
// (ECONNREFUSED: nothing listens any more) is an outcome of its own, `refused`, never a failure:
// that request never reached the service.
import { randomBytes } from 'node:crypto'
import { Agent, request, type OutgoingHttpHeaders } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

/** One request: what to send, and the route template the service counts it under. */
export type Shot = Readonly<{ method: 'GET' | 'POST'; path: string; route: string; body?: string }>

export type Outcome = Readonly<{
  shot: Shot
  /** performance.now() when the request was handed to the socket, and when its story ended. */
  sentAt: number
  doneAt: number
  kind: 'response' | 'refused' | 'failed'
  /** 0 without a response. */
  status: number
  requestId: string | undefined
  /** The trace id sent in `traceparent`, when the client traces. */
  traceId: string | undefined
  /** The answer carried `Connection: close`. */
  isClosing: boolean
  /** The request went out on a connection kept alive from an earlier one. */
  isReused: boolean
  /** The error code (or message) of a refused or failed request. */
  error: string | undefined
}>

export type ClientOptions = Readonly<{
  port: number
  /** Keep-alive sockets at most. */
  connections: number
  /** Send a sampled W3C traceparent with a fresh trace id on every request. */
  isTraced?: boolean
  timeoutMs?: number
}>

export type Client = Readonly<{
  send(shot: Shot): Promise<Outcome>
  /** The same, on a connection of its own that the request closes (a load balancer's probe). */
  probe(shot: Shot): Promise<Outcome>
  outcomes(): readonly Outcome[]
  close(): void
}>

export const createClient = ({ port, connections, isTraced = false, timeoutMs = 10_000 }: ClientOptions): Client => {
  // FIFO: every socket of the pool carries requests in turn, so none sits idle for long.
  const agent = new Agent({ keepAlive: true, maxSockets: connections, scheduling: 'fifo' })
  const outcomes: Outcome[] = []

  const exchange = (shot: Shot, isProbe: boolean): Promise<Outcome> =>
    new Promise((resolve) => {
      const traceId = isTraced ? randomBytes(16).toString('hex') : undefined
      const headers: OutgoingHttpHeaders = {}
      if (traceId !== undefined) headers['traceparent'] = `00-${traceId}-${randomBytes(8).toString('hex')}-01`
      if (shot.body !== undefined) {
        headers['content-type'] = 'application/json'
        headers['content-length'] = Buffer.byteLength(shot.body)
      }
      if (isProbe) headers['connection'] = 'close'
      const sentAt = performance.now()
      let isSettled = false
      const settle = (
        kind: Outcome['kind'],
        status: number,
        responseHeaders: Readonly<Record<string, string | string[] | undefined>>,
        error: string | undefined,
      ): void => {
        if (isSettled) return
        isSettled = true
        const requestId = responseHeaders['x-request-id']
        const outcome: Outcome = {
          shot,
          sentAt,
          doneAt: performance.now(),
          kind,
          status,
          requestId: typeof requestId === 'string' ? requestId : undefined,
          traceId,
          isClosing: responseHeaders['connection'] === 'close',
          isReused: req.reusedSocket,
          error,
        }
        outcomes.push(outcome)
        resolve(outcome)
      }
      const req = request({ host: '127.0.0.1', port, method: shot.method, path: shot.path, headers, agent: isProbe ? false : agent }, (res) => {
        // The whole body must arrive: an answer cut short is a failure, not a response.
        res.on('end', () => settle('response', res.statusCode ?? 0, res.headers, undefined))
        res.on('error', (error: NodeJS.ErrnoException) => settle('failed', res.statusCode ?? 0, res.headers, error.code ?? error.message))
        res.resume()
      })
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'TIMEOUT' })))
      req.on('error', (error: NodeJS.ErrnoException) => settle(error.code === 'ECONNREFUSED' ? 'refused' : 'failed', 0, {}, error.code ?? error.message))
      req.end(shot.body)
    })

  return {
    send: (shot) => exchange(shot, false),
    probe: (shot) => exchange(shot, true),
    outcomes: () => outcomes,
    close: () => agent.destroy(),
  }
}

export type DriveOptions = Readonly<{
  /** Requests in flight at most: one loop per connection. */
  workers: number
  /** Requests a second over all workers, on a fixed schedule; undefined: as fast as answers come. */
  rate?: number | undefined
  /** The i-th request. */
  pick(i: number): Shot
  isDone(): boolean
  /** Pause after a refused connection, so a closed listener is not hammered in a tight loop. */
  refusedPauseMs?: number
}>

/**
 * Runs `workers` loops until `isDone()`. With a rate, request i is due at start + i/rate: a worker
 * waits for its slot, or sends at once when the service has fallen behind (the schedule does not
 * slip, so a slow phase is followed by a burst that catches up, as real clients would).
 */
export const drive = async (client: Client, { workers, rate, pick, isDone, refusedPauseMs = 10 }: DriveOptions): Promise<void> => {
  const start = performance.now()
  let next = 0
  const loop = async (): Promise<void> => {
    while (!isDone()) {
      const i = next++
      if (rate !== undefined) {
        const wait = start + (i * 1000) / rate - performance.now()
        if (wait > 0) await sleep(wait)
      }
      const outcome = await client.send(pick(i))
      if (outcome.kind === 'refused') await sleep(refusedPauseMs)
    }
  }
  await Promise.all(Array.from({ length: workers }, loop))
}

/** The q-quantile (0..1) of `values`, nearest rank; NaN when there are none. */
export const quantile = (values: readonly number[], q: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number
}

/** Latency in ms of every answered request, and answers a second over the span of `outcomes`. */
export const summarise = (outcomes: readonly Outcome[]): { responses: number; rps: number; p50Ms: number; p99Ms: number } => {
  const answered = outcomes.filter((o) => o.kind === 'response')
  const latencies = answered.map((o) => o.doneAt - o.sentAt)
  // Not Math.min(...list): a long run's hundreds of thousands of arguments overflow the stack.
  const first = answered.reduce((min, o) => Math.min(min, o.sentAt), Number.POSITIVE_INFINITY)
  const last = answered.reduce((max, o) => Math.max(max, o.doneAt), Number.NEGATIVE_INFINITY)
  return { responses: answered.length, rps: (answered.length * 1000) / (last - first), p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99) }
}

const IRIS_ROW = { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 }
const IRIS_TENSORS = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'].map((name, i) => ({
  name,
  datatype: 'FP64',
  shape: [1],
  data: [[6.3, 3.3, 6.0, 2.5][i]],
}))

/** The endpoints the load scenarios use, each with its route template. */
export const SHOTS = {
  root: { method: 'GET', path: '/', route: '/' },
  health: { method: 'GET', path: '/health', route: '/health' },
  ready: { method: 'GET', path: '/ready', route: '/ready' },
  metrics: { method: 'GET', path: '/metrics', route: '/metrics' },
  externalData: { method: 'GET', path: '/api/external-data?currency=USD', route: '/api/external-data' },
  insights: { method: 'GET', path: '/api/insights?count=2&interval=0', route: '/api/insights' },
  predict: { method: 'POST', path: '/api/v1/predict', route: '/api/v1/predict', body: JSON.stringify({ model: 'iris', instances: [IRIS_ROW] }) },
  models: { method: 'GET', path: '/api/v1/models', route: '/api/v1/models' },
  model: { method: 'GET', path: '/api/v1/models/iris', route: '/api/v1/models/{name}' },
  infer: { method: 'POST', path: '/v2/models/iris/infer', route: '/v2/models/{name}/infer', body: JSON.stringify({ inputs: IRIS_TENSORS }) },
} as const satisfies Readonly<Record<string, Shot>>

/** Round robin over `shots`: request i is shots[i mod n], so every mix is exact and repeatable. */
export const roundRobin =
  (shots: readonly Shot[]): ((i: number) => Shot) =>
  (i) =>
    shots[i % shots.length] as Shot
