// Signed requests to one bucket, retried as S3 asks clients to: up to two more tries on a 5xx, a
// SlowDown (S3's 503 for throttling), a 409 ConditionalRequestConflict or a reset connection, after a
// jittered backoff (100–200 ms, then 200–400), so a pass that meets a blip still completes and a
// fleet does not retry in step. A timeout is not retried: a slow server would make a pass three
// timeouts long. An ExpiredToken asks the credentials for fresh ones, once. Every try is signed
// anew, since a signature carries its time.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { describeError } from '../../../core/net/describe-error.js'
import { StoreError } from '../error.js'
import type { S3Endpoint } from './endpoint.js'
import { ExchangeError, exchange, isReset, type Reply } from './exchange.js'
import { s3Failure } from './failures.js'
import type { CredentialSource } from './credentials.js'
import { canonicalPath, canonicalQuery, createSigningKeys, EMPTY_SHA256, type SigningKeys, type SigV4Credentials, signRequest } from './sigv4.js'
import { errorCodeOf } from './xml.js'

export type S3Request = Readonly<{
  method: 'GET' | 'HEAD' | 'PUT'
  /** The object's key; undefined for the bucket itself (a listing). */
  key: string | undefined
  query?: ReadonlyArray<readonly [string, string]>
  headers?: Readonly<Record<string, string>>
  body?: Buffer
  /** Largest body read from a success; an error's is read up to ERROR_BYTES. */
  maxBytes: number
  /** The request in words for a message: `GET s3://bucket/prefix/iris/manifest.json`. */
  what: string
}>

export type S3ClientOptions = Readonly<{
  endpoint: S3Endpoint
  credentials: CredentialSource
  timeoutMs: number
  /** Retries after the first try; RETRIES unless a test says. */
  retries?: number
  /** The backoff before retry n (from 0), in ms; jittered doubling from 100 unless a test says. */
  backoffMs?: (retry: number) => number
  now?: () => number
}>

export type S3Client = Readonly<{
  /** The reply, a success or an error the caller words (404, 412…); rejects with a StoreError on a fault or after retries. */
  send(request: S3Request): Promise<Reply>
  /** The StoreError for a reply the caller does not accept. */
  failure(request: S3Request, reply: Reply): StoreError
}>

export const RETRIES = 2
/** An error document is a few hundred bytes; more is not an error document. */
const ERROR_BYTES = 64 * 1024

const jittered = (retry: number): number => 100 * 2 ** retry * (1 + Math.random())

const isRetried = (reply: Reply, code: string | undefined): boolean => reply.status >= 500 || code === 'SlowDown' || code === 'ConditionalRequestConflict'

const isExpired = (code: string | undefined): boolean => code === 'ExpiredToken' || code === 'TokenRefreshRequired'

const bodyCode = (reply: Reply): string | undefined => (reply.status >= 300 && reply.body.length > 0 ? errorCodeOf(reply.body.toString('utf8')) : undefined)

/** What every try of a client signs with and is bound by. */
type Signing = Readonly<{ endpoint: S3Endpoint; keys: SigningKeys; timeoutMs: number; now: () => number }>

/** One signed try: the reply, or an ExchangeError. */
const attempt = async ({ endpoint, keys, timeoutMs, now }: Signing, request: S3Request, signed: SigV4Credentials): Promise<Reply> => {
  const path = `${endpoint.base}${request.key ?? ''}`
  const query = request.query ?? []
  const payloadHash = request.body === undefined ? EMPTY_SHA256 : createHash('sha256').update(request.body).digest('hex')
  const given = request.headers ?? {}
  const auth = signRequest(
    {
      method: request.method,
      host: endpoint.host,
      path,
      query,
      headers: given,
      payloadHash,
      credentials: signed,
      region: endpoint.region,
      service: 's3',
      time: new Date(now()),
    },
    keys,
  )
  const search = canonicalQuery(query)
  return exchange({
    origin: endpoint.origin,
    method: request.method,
    target: `${canonicalPath(path, 's3')}${search === '' ? '' : `?${search}`}`,
    headers: { ...given, host: endpoint.host, ...auth },
    body: request.body,
    timeoutMs,
    // An error's body is read too, for its code; a success's up to the caller's cap.
    maxBytes: Math.max(request.maxBytes, ERROR_BYTES),
  })
}

export const createS3Client = ({ endpoint, credentials, timeoutMs, retries = RETRIES, backoffMs = jittered, now = Date.now }: S3ClientOptions): S3Client => {
  const signing: Signing = { endpoint, keys: createSigningKeys(), timeoutMs, now }
  const context = (what: string) => ({ what, region: endpoint.region, credentials: credentials.describe })

  const failure = (request: S3Request, reply: Reply): StoreError => {
    const region = reply.headers['x-amz-bucket-region']
    return s3Failure(reply.status, bodyCode(reply), typeof region === 'string' ? region : undefined, context(request.what))
  }

  /** Try `retry` (from 0) of `request`, signed with `signed`; the next try is a call of its own. */
  const sendFrom = async (request: S3Request, retry: number, signed: SigV4Credentials, hasRefreshed: boolean): Promise<Reply> => {
    let reply: Reply
    try {
      reply = await attempt(signing, request, signed)
    } catch (error: unknown) {
      if (!(error instanceof ExchangeError)) throw error
      const fault = error.fault
      if (fault.kind === 'tooLarge') throw new StoreError('TOO_LARGE', `${request.what} sent a body over the limit of ${request.maxBytes} bytes`)
      if (fault.kind === 'timeout') throw new StoreError('UPSTREAM_ERROR', `${request.what} timed out after ${timeoutMs} ms`)
      if (isReset(fault) && retry < retries) {
        await sleep(backoffMs(retry))
        return sendFrom(request, retry + 1, signed, hasRefreshed)
      }
      const tries = retry + 1
      throw new StoreError('UPSTREAM_ERROR', `${request.what} failed: ${describeError(fault.error)}${tries > 1 ? ` (${tries} tries)` : ''}`, {
        cause: fault.error,
      })
    }
    const code = bodyCode(reply)
    // Not counted as a retry: new credentials are another request.
    if (isExpired(code) && !hasRefreshed) return sendFrom(request, retry, await credentials.refresh(signed), true)
    if (isRetried(reply, code) && retry < retries) {
      await sleep(backoffMs(retry))
      return sendFrom(request, retry + 1, signed, hasRefreshed)
    }
    if (reply.status < 300 && reply.body.length > request.maxBytes) {
      throw new StoreError('TOO_LARGE', `${request.what} sent a body over the limit of ${request.maxBytes} bytes`)
    }
    return reply
  }

  const send = async (request: S3Request): Promise<Reply> => sendFrom(request, 0, await credentials.get(), false)

  return { send, failure }
}
