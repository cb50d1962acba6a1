// Artifacts on an HTTP(S) server, so a fleet reads one copy: `<base>/<model>/<version>/model.json`,
// `<base>/<model>/manifest.json`, and `<base>/index.json` in place of the directory listing HTTP
// lacks (`{"models":["cars","iris"]}`). `read` of `index.json` or a manifest is a conditional GET
// with the ETag last seen for the path, and serves the bytes it kept when the server answers 304;
// `stat` is a HEAD. Only those are kept: `list` reads the index on every pass, and a manifest is
// small, while a version's files (model.json, model.onnx, up to SVC_MODEL_MAX_BYTES each) are read
// only when their stat shows a new etag, which a 304 cannot answer: kept, they held every artifact
// a second time, and those of removed versions for good. A model the index no longer lists loses
// its manifest's entry. Each request has
// a hard timeout covering connect, headers and body, and a body is read only up to `maxBytes`.
// Redirects are not followed, to any origin: the base URL names the artifact server itself, and a
// redirect is a misconfiguration to report (it could also carry the Authorization header elsewhere).
import { CONNECTION_CLOSED, describeError, rootCause } from '../../core/net/describe-error.js'
import { readCapped } from '../../core/net/read-capped.js'
import { isObject } from '../../core/json.js'
import { redactUrl, StoreError } from './error.js'
import { checkPath, isSegment } from './path.js'
import type { Store, StoreStat } from './store.js'

export type HttpStoreOptions = Readonly<{ timeoutMs: number; maxBytes: number }>

/** The list of models a server publishes, since HTTP has no directory listing. */
export const INDEX_PATH = 'index.json'

type Cached = Readonly<{ etag: string; bytes: Buffer }>

const MANIFEST = '/manifest.json'

/** True for what `read` keeps for a conditional GET: the index, and a model's manifest (`<model>/manifest.json`). */
const isConditional = (path: string): boolean => path === INDEX_PATH || (path.endsWith(MANIFEST) && path.indexOf('/') === path.length - MANIFEST.length)
type Method = 'GET' | 'HEAD'

/** Why fetch or its body failed, in a few words: `fetch failed` or `terminated` wrap the cause. */
const failureOf = (error: unknown): string => {
  const cause = rootCause(error)
  // undici's own code for a socket the server closed before the reply was complete.
  return (cause as { code?: unknown }).code === 'UND_ERR_SOCKET' ? CONNECTION_CLOSED : describeError(cause)
}

/** The models of an index.json, or undefined when it is not `{"models":[<names>]}`. */
const modelsOf = (bytes: Buffer): readonly string[] | undefined => {
  let index: unknown
  try {
    index = JSON.parse(bytes.toString('utf8'))
  } catch {
    return undefined
  }
  const models = isObject(index) ? index['models'] : undefined
  return Array.isArray(models) && models.every((name) => typeof name === 'string' && isSegment(name)) ? (models as string[]) : undefined
}

/** What every request sends: JSON wanted, the file's own bytes, and the URL's credentials as Basic auth. */
const requestHeaders = (url: URL): Readonly<Record<string, string>> => ({
  accept: 'application/json',
  // Sizes are the file's, and an nginx with gzip on keeps Content-Length and a strong ETag on HEAD.
  'accept-encoding': 'identity',
  ...(url.username === '' && url.password === ''
    ? {}
    : { authorization: `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` }),
})

/** One request under the timeout; `handle` judges the reply and reads its body before the deadline. */
const exchange = async <T>(
  timeoutMs: number,
  method: Method,
  target: URL,
  sent: Readonly<Record<string, string>>,
  handle: (res: Response, what: string) => Promise<T>,
): Promise<T> => {
  const what = `${method} ${target.href}`
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    return await handle(await fetch(target, { method, headers: sent, signal, redirect: 'manual' }), what)
  } catch (error: unknown) {
    if (error instanceof StoreError) throw error
    // The timeout aborts whatever was under way: connect, headers or body.
    const reason = signal.aborted ? `timed out after ${timeoutMs} ms` : `failed: ${failureOf(error)}`
    throw new StoreError('UPSTREAM_ERROR', `${what} ${reason}`, { cause: error })
  }
}

/** A reply other than 200 (or a 304 the store can serve), its body dropped unread. */
const failure = async (res: Response, what: string): Promise<StoreError> => {
  await res.body?.cancel()
  const status = res.status
  const message = `${what} answered HTTP ${status}`
  if (status === 404 || status === 410) return new StoreError('NOT_FOUND', message)
  if (status === 401 || status === 403) return new StoreError('UNREADABLE', message)
  return new StoreError('UPSTREAM_ERROR', status >= 300 && status < 400 ? `${message}, a redirect (not followed)` : message)
}

/** The body, refused once it passes maxBytes: at once by Content-Length, else while streaming (lib/core/net/read-capped.ts). */
const readBody = async (res: Response, what: string, maxBytes: number): Promise<Buffer> => {
  const bytes = await readCapped(res, maxBytes)
  // A 200 reply to a GET always has a body (fetch gives none only to HEAD and 204/304): undefined is over the cap.
  if (bytes === undefined) throw new StoreError('TOO_LARGE', `${what} sent a body over the limit of ${maxBytes} bytes`)
  return bytes
}

/** A HEAD's answer as a stat: its size, its Last-Modified, its ETag or one derived from those two. */
const statOf = async (res: Response, what: string): Promise<StoreStat> => {
  if (res.status !== 200) throw await failure(res, what)
  const length = res.headers.get('content-length')
  if (length === null || !/^\d+$/.test(length)) throw new StoreError('UPSTREAM_ERROR', `${what} answered without a Content-Length`)
  const lastModified = Date.parse(res.headers.get('last-modified') ?? '')
  const hasMtime = !Number.isNaN(lastModified)
  // Without an ETag, one derived from Last-Modified and the size, as nginx derives its own.
  const etag = res.headers.get('etag') ?? (hasMtime ? `W/"${lastModified.toString(16)}-${Number(length).toString(16)}"` : undefined)
  if (etag === undefined) throw new StoreError('UPSTREAM_ERROR', `${what} answered with neither ETag nor Last-Modified, so a change cannot be seen`)
  return { size: Number(length), mtimeMs: hasMtime ? lastModified : 0, etag }
}

export const createHttpStore = (url: URL, { timeoutMs, maxBytes }: HttpStoreOptions): Store => {
  // fetch refuses a URL with credentials: they travel as a header, and the URL used (and shown in
  // every message) is the base without them.
  const base = new URL(redactUrl(url))
  if (!base.pathname.endsWith('/')) base.pathname += '/'
  const description = base.href
  const headers = requestHeaders(url)
  /** The last 200 with an ETag of the index and each listed model's manifest: what a 304 stands for. */
  const cache = new Map<string, Cached>()

  // Segments are encoded, so a name holding `?`, `#`, `%` or `:` stays one segment of the path.
  const urlOf = (path: string): URL => new URL(checkPath(path).map(encodeURIComponent).join('/'), base)

  // Async, so an invalid path rejects like every other failure rather than throwing.
  const read = async (path: string): Promise<Buffer> => {
    const target = urlOf(path)
    const cached = cache.get(path)
    const sent = cached === undefined ? headers : { ...headers, 'if-none-match': cached.etag }
    return exchange(timeoutMs, 'GET', target, sent, async (res, what) => {
      // A 304 to a request without If-None-Match is the server's error, reported as its status.
      if (res.status === 304 && cached !== undefined) return Buffer.from(cached.bytes)
      if (res.status !== 200) throw await failure(res, what)
      const bytes = await readBody(res, what, maxBytes)
      const etag = res.headers.get('etag')
      if (etag === null || !isConditional(path)) cache.delete(path)
      else cache.set(path, { etag, bytes: Buffer.from(bytes) })
      return bytes
    })
  }

  return {
    description,
    list: async () => {
      const models = modelsOf(await read(INDEX_PATH))
      if (models === undefined)
        throw new StoreError('INVALID_INDEX', `${description}${INDEX_PATH} is not {"models":["<model>", …]} (names of directories under ${description})`)
      const listed = new Set(models)
      for (const path of cache.keys()) if (path !== INDEX_PATH && !listed.has(path.slice(0, -MANIFEST.length))) cache.delete(path)
      return [...listed].sort()
    },
    read,
    // Async, so an invalid path rejects like every other failure rather than throwing.
    stat: async (path) => exchange(timeoutMs, 'HEAD', urlOf(path), headers, statOf),
    write: async (path) => {
      throw new StoreError(
        'READ_ONLY',
        `${description}${path} cannot be written: the HTTP store is read-only; push to the directory or bucket the server publishes`,
      )
    },
  }
}
