// Files served as they are: read once at start-up, each answered with a reply built once — the
// body, its Content-Type, a strong ETag and Cache-Control — and 304 to a request that already
// holds that version. Unknown names under a folder route are a 404 problem.
import { createHash } from 'node:crypto'
import { extname } from 'node:path'
import { HttpError } from '../core/http/errors.js'
import type { Endpoint, Handler, Headers, PathParams, Reply } from '../core/pipeline.js'

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.json': 'application/json',
}

/** The Content-Type of a file name; start-up fails on any other extension, so nothing goes out untyped. */
export const contentType = (name: string): string => {
  const type = TYPES[extname(name)]
  if (type === undefined) throw new TypeError(`${name}: no content type is known for its extension`)
  return type
}

/**
 * `no-cache` lets a browser keep a file but makes it ask (If-None-Match) before each reuse, so a
 * deploy never leaves a page with scripts of the version before; an unchanged file costs a 304
 * without a body. Versioned URLs could skip that round trip, at the price of a build step.
 */
const CACHE_CONTROL = 'no-cache'

/** A strong validator: the SHA-256 of the body, base64url. */
export const etagOf = (text: string): string => `"${createHash('sha256').update(text).digest('base64url')}"`

/** RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (a `W/` prefix is ignored). */
export const isFresh = (ifNoneMatch: string | undefined, etag: string): boolean => {
  if (ifNoneMatch === undefined) return false
  for (const raw of ifNoneMatch.split(',')) {
    const tag = raw.trim()
    if (tag === '*' || tag === etag || tag === `W/${etag}`) return true
  }
  return false
}

/** One file's handler; `headers` adds to the defaults (a Content-Security-Policy for a page). */
export const serveText = (text: string, type: string, headers: Headers = {}): Handler => {
  const etag = etagOf(text)
  const ok: Reply = Object.freeze({
    kind: 'text',
    status: 200,
    headers: Object.freeze({ 'content-type': type, 'cache-control': CACHE_CONTROL, etag, 'x-content-type-options': 'nosniff', ...headers }),
    text,
  })
  const notModified: Reply = Object.freeze({ kind: 'json', status: 304, headers: Object.freeze({ 'cache-control': CACHE_CONTROL, etag }) })
  return (ctx) => (isFresh(ctx.header('if-none-match'), etag) ? notModified : ok)
}

/** Files by name, for a route with an `{asset}` parameter: a fixed list, so nothing else is reachable. */
export const serveFolder = (files: ReadonlyMap<string, string>, folder: string): Endpoint<PathParams<'/{asset}'>> => {
  const handlers = new Map([...files].map(([name, text]) => [name, serveText(text, contentType(name))]))
  const notFound = new HttpError(404, 'ASSET_NOT_FOUND', `No such file under ${folder}`)
  return (ctx) => {
    const handler = handlers.get(ctx.params.asset)
    if (handler === undefined) throw notFound
    return handler(ctx)
  }
}
