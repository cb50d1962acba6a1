// The per-request context handed to every layer and endpoint. A class with every field assigned in
// its constructor, so V8 keeps one hidden class for all requests; nothing is added to `req`.
//
// Its fields: `method`, `path` (no query, still percent-encoded), `rawQuery` and a lazily parsed
// `query`, `params`, `requestId`, `startTime`, `header(name)`, a lazily created `signal` that
// aborts when the client leaves, `body()` (capped at SVC_MAX_BODY_BYTES) and `json()` (415 for
// another media type, 400 for malformed JSON), `jsonNow()` (the same, in the same turn, once the
// server has read the body: `isBodyRead`), the trace ids and context, `rejection` (an answer
// decided before the endpoint: 413, 414, a malformed path parameter…), and the reply-written hooks:
// any layer may add one with `ctx.whenWritten(hook)`. An endpoint never touches `res`; it gets its
// dependencies from the factory that made it.
import type { Context, Span } from '@opentelemetry/api'
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { errorMessage } from '../errors.js'
import { HttpError, payloadTooLarge } from './errors.js'

/**
 * What a log line inside a request carries, found through AsyncLocalStorage. The same store holds
 * the request's OpenTelemetry context, so tracing needs no second store; a custom span made active
 * outside any request has bindings without a request id.
 */
export type RequestBindings = {
  readonly requestId: string | undefined
  /** Set for sampled requests only: logs and exemplars point at traces that exist. */
  traceId: string | undefined
  spanId: string | undefined
  traceContext: Context | undefined
}

/**
 * Called by the server once the reply is fully written (a stream's last byte included); `error` is
 * what broke the writing (a stream that threw, a layer that failed), else undefined.
 */
export type WrittenHook = (ctx: Ctx, error: unknown) => void

/**
 * What the server does with a written hook that throws: `error` is what the hook threw. The hooks
 * after it still run, so one failing layer never leaves another's span unended.
 */
export type HookFailed = (ctx: Ctx, error: unknown) => void

export type Params = Readonly<Record<string, string>>
const NO_PARAMS: Params = Object.freeze({})

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * An inbound X-Request-ID worth keeping: a UUID or up to 64 of [A-Za-z0-9._-], so it can go into
 * logs and headers as it is; anything else (a repeated header arrives joined by ", ") gets a fresh id.
 */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/
export const inboundRequestId = (value: string | string[] | undefined): string => (typeof value === 'string' && REQUEST_ID.test(value) ? value : randomUUID())

export class Ctx implements RequestBindings {
  readonly method: string
  /** The path without the query string, still percent-encoded. */
  readonly path: string
  /** The query string without `?`; parsed only when `query` is read. */
  readonly rawQuery: string
  readonly req: IncomingMessage
  readonly requestId: string
  /** `performance.now()` when the request arrived. */
  readonly startTime: number
  params: Params
  traceId: string | undefined
  spanId: string | undefined
  traceContext: Context | undefined
  /** The request's SERVER span, while tracing runs. */
  span: Span | undefined
  /** An answer decided before the endpoint runs; which one wins: the table in lib/server/inspect.ts. */
  rejection: HttpError | undefined
  /** Part of the body was left unread, so the connection cannot carry another request (the keep-alive rules, same table). */
  isBodyAbandoned: boolean
  /** The body is chunked: its size is unknown until its last chunk arrives. */
  hasChunkedBody: boolean
  /**
   * Content-Type as sent (the first, if repeated), from the server's one pass over the head, so
   * Node never builds `req.headers` for it; undefined when there is none or the head was not read.
   */
  contentType: string | undefined
  /**
   * JSON members the endpoint adds to its request_completed line, as text written as it is
   * (`,"model":"iris","model_version":"2"`); empty for most routes. Set by an endpoint, read by logging.
   */
  logMembers: string
  readonly #res: ServerResponse
  readonly #maxBodyBytes: number
  #query: URLSearchParams | undefined
  /** The whole body once read; `#bodyError` says why there is none. */
  #bodyBytes: Buffer | undefined
  #bodyError: HttpError | undefined
  /** The read in progress, for `body()` called before it has finished. */
  #bodyRead: Promise<Buffer> | undefined
  #abort: AbortController | undefined
  /** None, one, or several: most requests add none, and then nothing is allocated for them. */
  #written: WrittenHook | WrittenHook[] | undefined

  /** `trustRequestId` (SVC_TRUST_REQUEST_ID): keep a well-formed inbound X-Request-ID. */
  constructor(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number, trustRequestId = false) {
    // Both are always set on a request that came through http.Server; the types cover client use.
    let url = req.url as string
    // Absolute-form (`GET http://host/path`), which servers must accept (RFC 9112 §3.2.2): the
    // path routes; the authority, which may hold credentials, is dropped.
    if (url.charCodeAt(0) !== 0x2f) url = originForm(url)
    const q = url.indexOf('?')
    this.method = req.method as string
    this.path = q === -1 ? url : url.slice(0, q)
    this.rawQuery = q === -1 ? '' : url.slice(q + 1)
    this.req = req
    this.requestId = trustRequestId ? inboundRequestId(req.headers['x-request-id']) : randomUUID()
    this.startTime = performance.now()
    this.params = NO_PARAMS
    this.traceId = undefined
    this.spanId = undefined
    this.traceContext = undefined
    this.span = undefined
    this.rejection = undefined
    this.isBodyAbandoned = false
    this.hasChunkedBody = false
    this.contentType = undefined
    this.logMembers = ''
    this.#res = res
    this.#maxBodyBytes = maxBodyBytes
    this.#query = undefined
    this.#bodyBytes = undefined
    this.#bodyError = undefined
    this.#bodyRead = undefined
    this.#abort = undefined
    this.#written = undefined
  }

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.rawQuery))
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name]
    return Array.isArray(value) ? value.join(', ') : value
  }

  /** Aborted when the client goes away; created on first use, since most requests never ask. */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      const abort = (this.#abort = new AbortController())
      this.#res.once('close', () => abort.abort())
    }
    return this.#abort.signal
  }

  /** Adds a hook the server calls once the reply is written; any layer may add one, and all run. */
  whenWritten(hook: WrittenHook): void {
    const hooks = this.#written
    if (hooks === undefined) this.#written = hook
    else if (typeof hooks === 'function') this.#written = [hooks, hook]
    else hooks.push(hook)
  }

  /**
   * The server's call once the reply is fully written: runs the hooks in the order they were added,
   * each on its own, handing what one throws to `failed` and going on with the next.
   */
  replyWritten(error: unknown, failed: HookFailed): void {
    const hooks = this.#written
    if (hooks === undefined) return
    if (typeof hooks === 'function') return runHook(hooks, this, error, failed)
    for (const hook of hooks) runHook(hook, this, error, failed)
  }

  /**
   * Reads the whole body, at most the configured limit (413 beyond it, without reading the rest),
   * then calls `done`: the server's read, before the pipeline runs, for a route that takes a JSON
   * body (RouteDef `body`), so its endpoint and every layer around it answer in one turn.
   */
  readBody(done: () => void): void {
    readBody(this, this.#maxBodyBytes, (bytes, error) => {
      this.#bodyBytes = bytes
      this.#bodyError = error
      done()
    })
  }

  /** The body has been read, or has failed to arrive: `jsonNow()` answers at once. */
  get isBodyRead(): boolean {
    return this.#bodyBytes !== undefined || this.#bodyError !== undefined
  }

  /** The whole body, at most the configured limit (413 beyond it, without reading the rest). */
  body(): Promise<Buffer> {
    if (this.#bodyBytes !== undefined) return Promise.resolve(this.#bodyBytes)
    if (this.#bodyError !== undefined) return Promise.reject(this.#bodyError)
    return (this.#bodyRead ??= new Promise((resolve, reject) =>
      readBody(this, this.#maxBodyBytes, (bytes, error) => (bytes === undefined ? reject(error) : resolve(bytes))),
    ))
  }

  /** The body parsed as JSON: 415 for another media type, 400 for malformed JSON. */
  async json(): Promise<unknown> {
    this.#checkJsonType()
    return parseJson(await this.body())
  }

  /**
   * The body parsed as JSON, in this turn, once `isBodyRead`: throws what `json()` rejects with. A
   * type other than JSON is refused before any byte is needed.
   */
  jsonNow(): unknown {
    this.#checkJsonType()
    if (this.#bodyError !== undefined) throw this.#bodyError
    if (this.#bodyBytes === undefined) throw new TypeError('jsonNow() before the body was read: the route must declare body: "json"')
    return parseJson(this.#bodyBytes)
  }

  /** Whether the body is JSON by its Content-Type: the server reads it before the pipeline only then (anything else is refused 415 unread). */
  get hasJsonType(): boolean {
    const type = this.contentType ?? this.req.headers['content-type']
    return type !== undefined && JSON_MEDIA_TYPE.test(type)
  }

  #checkJsonType(): void {
    if (this.hasJsonType) return
    const type = this.contentType ?? this.req.headers['content-type']
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, got ${type === undefined ? 'none' : JSON.stringify(type)}`)
  }
}

const parseJson = (bytes: Buffer): unknown => {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown
  } catch (error: unknown) {
    throw new HttpError(400, 'INVALID_JSON', `Request body is not valid JSON: ${errorMessage(error)}`)
  }
}

/** One hook, on its own. The try/catch costs a few ns a call, nothing allocated (Node 20.20, 2e7 calls: 2.5 → 7.4 ns with one hook). */
const runHook = (hook: WrittenHook, ctx: Ctx, error: unknown, failed: HookFailed): void => {
  try {
    hook(ctx, error)
  } catch (thrown: unknown) {
    failed(ctx, thrown)
  }
}

const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i

/**
 * `http://host/a?b` → `/a?b`, `http://host?b` → `/?b`; any other target is returned as it is. Any
 * scheme's authority goes (the server refuses schemes other than http(s) from the raw target), so
 * no log line or answer ever carries one.
 */
export const originForm = (url: string): string => {
  const authority = ABSOLUTE_FORM.exec(url)
  if (authority === null) return url
  const rest = url.slice(authority[0].length)
  return rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`
}

const INCOMPLETE_BODY = new HttpError(400, 'INCOMPLETE_BODY', 'The request body ended before it was complete')

/**
 * The body, in one Buffer (no copy when it came in one chunk, as a small body does), or why not;
 * `done` is called once. Plain listeners, no promise: a promise per read costs a hook per turn
 * where AsyncLocalStorage runs on async_hooks (Node 20).
 */
const readBody = (ctx: Ctx, limit: number, done: (bytes: Buffer | undefined, error: HttpError | undefined) => void): void => {
  const { req } = ctx
  const chunks: Buffer[] = []
  let size = 0
  let isDone = false
  const finish = (bytes: Buffer | undefined, error: HttpError | undefined): void => {
    if (isDone) return
    isDone = true
    done(bytes, error)
  }
  const onData = (chunk: Buffer): void => {
    size += chunk.length
    if (size > limit) {
      ctx.isBodyAbandoned = true
      req.off('data', onData)
      req.pause()
      finish(undefined, payloadTooLarge(limit))
      return
    }
    chunks.push(chunk)
  }
  req.on('data', onData)
  req.on('end', () => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size), undefined))
  req.on('error', () => {
    ctx.isBodyAbandoned = true
    finish(undefined, INCOMPLETE_BODY)
  })
}
