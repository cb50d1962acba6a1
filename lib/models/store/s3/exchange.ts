// One HTTP exchange with an S3 server on node:http(s): the request sent, the reply's status and
// headers, and its body read up to a cap, all under one deadline covering connect, headers and
// body. Connections are kept alive and shared (a pass reads up to 16 models at once), and fetch is
// not used: its first request compiles a parser (~20 ms measured here) and it hides a reset behind
// `fetch failed`.
import { Agent as HttpAgent, type IncomingHttpHeaders, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { errorCode, SvcError } from '../../../core/errors.js'

export type Exchange = Readonly<{
  origin: URL
  method: string
  /** The path and query as sent: already encoded, as signed. */
  target: string
  headers: Readonly<Record<string, string>>
  body: Buffer | undefined
  timeoutMs: number
  /** Largest body read; past it the exchange ends as `tooLarge`. */
  maxBytes: number
}>

export type Reply = Readonly<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>

/** How an exchange ended without a reply, for the client to retry or word. */
export type ExchangeFault = Readonly<{ kind: 'timeout' } | { kind: 'tooLarge'; reply: Reply } | { kind: 'network'; error: unknown }>

const FAULT_CODES = { timeout: 'EXCHANGE_TIMEOUT', tooLarge: 'EXCHANGE_TOO_LARGE', network: 'EXCHANGE_FAILED' } as const

/** Carries the fault to the client (client.ts), which words it as a StoreError; never shown as it is. */
export class ExchangeError extends SvcError<(typeof FAULT_CODES)[ExchangeFault['kind']]> {
  override name = 'ExchangeError'
  readonly code: (typeof FAULT_CODES)[ExchangeFault['kind']]
  constructor(readonly fault: ExchangeFault) {
    super(fault.kind)
    this.code = FAULT_CODES[fault.kind]
  }
}

/** Errors of a connection the peer closed or reset: worth one more try, as S3's own SDKs judge. */
const RESETS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET'])

// Node gives "socket hang up" the code ECONNRESET too.
export const isReset = (fault: ExchangeFault): boolean => fault.kind === 'network' && RESETS.has(String(errorCode(fault.error)))

// One agent per scheme for the process: 16 sockets, the registry's MODELS_AT_ONCE.
const AGENTS = { 'http:': new HttpAgent({ keepAlive: true, maxSockets: 16 }), 'https:': new HttpsAgent({ keepAlive: true, maxSockets: 16 }) } as const

export const exchange = ({ origin, method, target, headers, body, timeoutMs, maxBytes }: Exchange): Promise<Reply> =>
  new Promise<Reply>((resolve, reject) => {
    const isHttps = origin.protocol === 'https:'
    const req = (isHttps ? httpsRequest : httpRequest)({
      protocol: origin.protocol,
      hostname: origin.hostname.replace(/^\[|\]$/g, ''),
      port: origin.port === '' ? undefined : Number(origin.port),
      method,
      path: target,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
      agent: AGENTS[isHttps ? 'https:' : 'http:'],
    })
    let settled = false
    const fail = (fault: ExchangeFault): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      reject(new ExchangeError(fault))
    }
    const timer = setTimeout(() => fail({ kind: 'timeout' }), timeoutMs)
    req.on('error', (error) => fail({ kind: 'network', error }))
    req.on('response', (res) => {
      // Always set on a client's reply.
      const status = Number(res.statusCode)
      const chunks: Buffer[] = []
      let size = 0
      const declared = Number(res.headers['content-length'])
      if (method !== 'HEAD' && declared > maxBytes) {
        fail({ kind: 'tooLarge', reply: { status, headers: res.headers, body: Buffer.alloc(0) } })
        return
      }
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > maxBytes) fail({ kind: 'tooLarge', reply: { status, headers: res.headers, body: Buffer.alloc(0) } })
        else chunks.push(chunk)
      })
      res.on('error', (error) => fail({ kind: 'network', error }))
      // A body cut short by the peer: no 'end', and not always an 'error'.
      res.on('close', () => {
        if (!res.complete) fail({ kind: 'network', error: Object.assign(new Error('connection closed mid-body'), { code: 'ECONNRESET' }) })
      })
      res.on('end', () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ status, headers: res.headers, body: Buffer.concat(chunks, size) })
      })
    })
    req.end(body)
  })
