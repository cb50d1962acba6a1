// What the request head decides before the pipeline runs: the refusals Node's parser leaves to the
// server (RFC 9112), the limits, and 100 Continue. One table says which answer a request gets when
// several things are wrong with it, and when the connection ends after that answer; the code below
// (and the modules it names) follows it row by row.
//
// Precedence: the first row that applies answers.
//
//   row  decided by                when                                                answer
//   0    Node, lib/server/         the head cannot be parsed (not HTTP/1.x, bad bytes,  400 BAD_REQUEST, 400 INVALID_FRAMING,
//        refusals.ts               Content-Length malformed or in conflict), is over   431 HEADERS_TOO_LARGE, 408 REQUEST_TIMEOUT,
//                                  maxHeaderBytes (a target too is counted there), or  400 INVALID_TARGET (CONNECT),
//                                  is too slow; CONNECT; a connection over the cap     503 TOO_MANY_CONNECTIONS
//        — every other request is routed and its pipeline runs; the layers lib/app.ts wires outside
//          the guard answer first: —
//   1    lib/layers/auth.ts        a token is needed and missing or wrong              401 UNAUTHORIZED
//   2    lib/layers/shedding.ts    overload                                            503 OVERLOADED
//        — then the guard (lib/core/http/problem.ts) answers the first of rows 3–9 that applies: —
//   3    inspect                   Expect other than 100-continue                      417 EXPECTATION_FAILED
//   4    inspect                   Transfer-Encoding other than `chunked` alone, or    400 INVALID_FRAMING
//                                  any Transfer-Encoding in HTTP/1.0
//   5    inspect                   no Host in HTTP/1.1, or more than one               400 INVALID_HOST
//   6    inspect                   Content-Length over SVC_MAX_BODY_BYTES              413 PAYLOAD_TOO_LARGE
//   7    inspect                   a target over maxUrlBytes                           414 URI_TOO_LONG
//   8    inspect                   a target that is neither a path, an http(s) URL,    400 INVALID_TARGET
//                                  nor `*` for OPTIONS
//   9    the router                a path parameter that is not valid percent-encoding 400 INVALID_PATH_PARAMETER
//        — and only then the route itself (a route that takes a JSON body, RouteDef `body`, has it
//          read by the server before its pipeline runs, unless rows 3–9 refused it or it is of
//          another media type): —
//   10   the router, the endpoint  no route (404), a method not declared (405), or the endpoint's answer:
//                                  413 PAYLOAD_TOO_LARGE for a body over the limit as it is read, 400
//                                  INCOMPLETE_BODY for one cut short, 415 and 400 for what ctx.json() refuses
//
// `inspect` runs after the router has matched, so rows 3–8 replace the router's row 9.
//
// Keep-alive: after the answer the connection is closed when
//   - row 0 refused the request: its answer says `Connection: close` (refusals.ts);
//   - rows 3–6 applied, whichever row answered: the body behind that head is never read, and the
//     bytes that follow cannot be trusted to start the next request (`ctx.isBodyAbandoned`);
//   - the endpoint stopped reading a body, over the limit or cut short (`ctx.isBodyAbandoned`);
//   - a chunked body is still arriving: its size has no bound, and reading it to find the next
//     request would tie the connection up;
//   - the process is no longer ready: draining, or stopped (lib/README.md §8; with an admin
//     listener, the one that finishes its drain first sets `stopped` while the other still drains);
//   - the client asked for it, or spoke HTTP/1.0 without keep-alive: Node's own rule.
// A Content-Length body left unread is at most SVC_MAX_BODY_BYTES, so Node reads and drops it and
// the connection stays open. A stream whose reader stalls is cut (lib/server/stream.ts).
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Ctx } from '../core/http/context.js'
import { HttpError, payloadTooLarge } from '../core/http/errors.js'

/** How Node handed the request over: as is, after `Expect: 100-continue`, or with another Expect. */
export type Expect = 'none' | 'continue' | 'unsupported'

// Rows 3, 4, 5 and 8 are constant, so each error is built once.
// `raw[i]` for an index below its length, which noUncheckedIndexedAccess cannot see; the raw list
// holds names and values in pairs, so a name's value is there too.
const headerAt = (raw: readonly string[], i: number): string => raw[i] as string

const EXPECTATION_FAILED = new HttpError(417, 'EXPECTATION_FAILED', 'The only expectation supported is 100-continue')
const INVALID_FRAMING = new HttpError(400, 'INVALID_FRAMING', 'Transfer-Encoding must be chunked alone, and HTTP/1.0 requests cannot use it')
const INVALID_HOST = new HttpError(400, 'INVALID_HOST', 'An HTTP/1.1 request carries exactly one Host header')
const INVALID_TARGET = new HttpError(400, 'INVALID_TARGET', 'The request target must be a path or an http(s) URL')

/** Rows 3–8 for one routed request, then 100 Continue if the client waits for it and nothing refused the request. */
export type Inspect = (ctx: Ctx, req: IncomingMessage, res: ServerResponse, expect: Expect) => void

export const createInspector = (maxBodyBytes: number, maxUrlBytes: number): Inspect => {
  const tooLarge = payloadTooLarge(maxBodyBytes)
  const uriTooLong = new HttpError(414, 'URI_TOO_LONG', `The request target exceeds ${maxUrlBytes} bytes`)

  /**
   * Rows 4–8, in one pass over the raw header list: `req.headers` is built lazily by Node, and most
   * requests never need it. The target is the raw one, authority included (Ctx keeps its path).
   */
  const inspectHead = (ctx: Ctx, req: IncomingMessage): void => {
    const raw = req.rawHeaders
    let hosts = 0
    let length = 0
    let coding: string | undefined
    for (let i = 0; i < raw.length; i += 2) {
      const name = headerAt(raw, i)
      // Name lengths first: lower-casing only the few names that could match (measured faster than
      // a char-code comparison loop on Node 20: 134 vs 165–207 ns for a 7-header request).
      if (name.length === 4) {
        if (name.toLowerCase() === 'host') hosts++
      } else if (name.length === 14) {
        if (name.toLowerCase() === 'content-length') length = Number(raw[i + 1])
      } else if (name.length === 12) {
        // Kept for ctx.hasJsonType, so a request with a body never makes Node build `req.headers`;
        // the first of several, as Node keeps it there.
        if (ctx.contentType === undefined && name.toLowerCase() === 'content-type') ctx.contentType = headerAt(raw, i + 1)
      } else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') coding = headerAt(raw, i + 1)
    }
    if (coding !== undefined) {
      // Node's parser has already refused a duplicate, or one combined with Content-Length (row 0).
      if (req.httpVersionMinor === 0 || coding.length !== 7 || coding.toLowerCase() !== 'chunked') return abandon(ctx, INVALID_FRAMING)
      ctx.hasChunkedBody = true
    }
    if (hosts > 1 || (hosts === 0 && req.httpVersionMinor === 1)) return abandon(ctx, INVALID_HOST)
    if (length > maxBodyBytes) return abandon(ctx, tooLarge)
    const url = req.url as string
    if (url.length > maxUrlBytes) ctx.rejection = uriTooLong
    else if (url.charCodeAt(0) !== 0x2f && !isTargetAccepted(url, ctx.method)) ctx.rejection = INVALID_TARGET
  }

  // hot path: change with care
  return (ctx, req, res, expect) => {
    if (expect === 'unsupported') return abandon(ctx, EXPECTATION_FAILED)
    inspectHead(ctx, req)
    // A request already refused is answered without asking for its body: the client never sends it.
    if (expect === 'continue' && ctx.rejection === undefined) res.writeContinue()
  }
}

/** The keep-alive rules that are the server's to apply; Node applies the client's. */
export const closesConnection = (ctx: Ctx, isStopping: boolean): boolean => isStopping || ctx.isBodyAbandoned || (ctx.hasChunkedBody && !ctx.req.complete)

/** Rows 3–6: the answer is decided, and the body behind the head is not read. */
const abandon = (ctx: Ctx, rejection: HttpError): void => {
  ctx.rejection = rejection
  ctx.isBodyAbandoned = true
}

const HTTP_URL = /^https?:\/\//i
/** A target that is not a path: an http(s) URL (absolute-form, made a path by Ctx), or `*` for OPTIONS (asterisk-form). */
const isTargetAccepted = (url: string, method: string): boolean => HTTP_URL.test(url) || (url === '*' && method === 'OPTIONS')
