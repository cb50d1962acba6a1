// The contract every other module builds on (lib/README.md §1): the replies an endpoint returns,
// the handlers and layers that pass them along, the routes that declare them, and the fold that
// joins them. Types and constants only, besides `compose` and `route`; it imports nothing that imports it.
//
// A layer is `(next: Handler, route: RouteInfo) => Handler`, called once per route and method at
// start-up, so it can precompute names, labels and log fragments and decide whether it applies at
// all; `compose` is a plain `reduceRight` over the layers, listed outermost first. The answer
// passes back out through the same layers, and each sees the final status.
//
// A `RouteDef`: `method`, `path` (`/api/v1/models/{name}`, each parameter a whole segment),
// `handler`, `doc` (its OpenAPI description), `body?: 'json'` (the server reads a JSON body whole
// before the pipeline runs, so an endpoint that needs nothing else answers in one turn, with no
// promise through the layers; a request the head checks refuse is answered unread by the guard, and
// one of another media type is not read either: its endpoint's `jsonNow()` answers 415), and its
// traits: `auth?: 'api' | 'metrics'`, `isExcludedFromMetrics`, `requestLogLevel`, `isOperational`.
// A trait holds for every method at the path, the 405 and OPTIONS answers included. A route
// declared with `route({ … })` types its endpoint by its template: an
// `Endpoint<PathParams<'/api/v1/models/{name}'>>` reads `ctx.params.name` as a string, one that
// reads a parameter its path lacks does not compile, and one endpoint may serve `/m/{name}` and
// `/m/{name}/v/{version}` by taking `{ name: string; version?: string }`. `route` is the identity
// at run time; the router sets exactly the template's parameters.
import type { Ctx, Params } from './http/context.js'
import type { Problem } from './http/problem-body.js'
import type { RouteDoc } from './route-doc.js'

export type Headers = Readonly<Record<string, string | number | string[]>>

/**
 * A JSON body: `body`, serialised by the server, or `json`, text the endpoint wrote itself where
 * that is much cheaper than building objects (the inference response, from typed arrays); with
 * neither, an empty answer (204, OPTIONS).
 */
export type JsonReply = { readonly kind: 'json'; readonly status: number; readonly headers?: Headers } & (
  | { readonly body?: unknown; readonly json?: undefined }
  | { readonly json: string; readonly body?: undefined }
)
/**
 * A text body, as a string or as bytes already encoded (UTF-8): /metrics writes its text outside the
 * JS heap. `sent` runs once the socket holds the whole body, not when the connection fails first.
 */
export type TextReply = {
  readonly kind: 'text'
  readonly status: number
  readonly headers?: Headers
  readonly text: string | Buffer
  readonly sent?: () => void
}
/** A stream is pulled as the client reads it and stopped (`return()`) when the client leaves. */
export type StreamReply = { readonly kind: 'stream'; readonly status: number; readonly headers?: Headers; readonly stream: AsyncIterable<string> }
/** An error answer. `error` holds what was thrown, so layers can count and record it. */
export type ProblemReply = {
  readonly kind: 'problem'
  readonly status: number
  readonly headers?: Headers
  readonly problem: Problem
  readonly error?: unknown
}
/** What an endpoint answers; `kind` says which, so the server and the layers switch on it. */
export type Reply = JsonReply | TextReply | StreamReply | ProblemReply

/** An endpoint: context in, reply out. No `res`, no globals; dependencies come through a factory. */
export type Handler = (ctx: Ctx) => Reply | Promise<Reply>

/** Which bearer token a route needs when tokens are configured (lib/layers/auth.ts). */
export type RouteAuth = 'api' | 'metrics'

/** What a layer may precompute from, once per route. `method` is `*` for the 404/405 pipelines. */
export type RouteInfo = Readonly<{
  method: string
  template: string
  /** GET /metrics is left out of the HTTP series so a scrape never measures itself. */
  isExcludedFromMetrics: boolean
  /** Level of request_started / request_completed: probes log at debug, so they never flood info. */
  requestLogLevel: 'debug' | 'info'
  /**
   * What operators and their machines use (the probes, /metrics): never shed under load, and
   * served on the admin listener when there is one.
   */
  isOperational: boolean
  /** The token the path needs when tokens are configured; `none` for open paths and the 404 pipeline. */
  auth: RouteAuth | 'none'
}>

/** Called once per route at start-up: per-route work goes here, not in the returned Handler. */
export type Layer = (next: Handler, route: RouteInfo) => Handler

/** Layers are listed outermost first: `[logging, metrics, tracing]` wraps `tracing(endpoint)`. */
export const compose = (endpoint: Handler, layers: readonly Layer[], route: RouteInfo): Handler =>
  layers.reduceRight<Handler>((next, layer) => layer(next, route), endpoint)

/** The methods a route may declare, in the order an `Allow` header lists them. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
export type Method = (typeof METHODS)[number]

/** The template of the pipeline that answers paths no route matches (404): one label, one span name. */
export const UNMATCHED = '<unmatched>'

/** A route as endpoints declare it; lib/core/router.ts validates it and builds its pipelines. */
export type RouteDef = Readonly<{
  method: Method
  /** `/api/v1/models/{name}`: literal segments and whole-segment parameters. */
  path: string
  handler: Handler
  /**
   * `json`: the endpoint reads a JSON body. The server reads the whole body before the pipeline
   * runs (a body of another media type is left unread, for the endpoint's 415), so `ctx.jsonNow()`
   * answers at once and an endpoint that needs nothing else answers in the same turn, without a
   * promise through the layers. The request is logged as started, and counted in flight, once its
   * body is in; its duration still runs from the head.
   */
  body?: 'json'
  isExcludedFromMetrics?: boolean
  requestLogLevel?: 'debug' | 'info'
  /** A probe or /metrics: never shed, and moved to the admin listener when there is one. */
  isOperational?: boolean
  /**
   * The bearer token this route needs when tokens are configured: `api` (SVC_API_TOKENS) or
   * `metrics` (SVC_METRICS_TOKEN); open without. It holds for every method at the path.
   */
  auth?: RouteAuth
  /**
   * Its OpenAPI description, declared beside the endpoint. Optional here so test-only routes need
   * none; the /openapi.json builder refuses any route it is given without one. A GET documents its
   * HEAD too.
   */
  doc?: RouteDoc
}>

/** The parameter names of a path template: `'/v2/models/{name}/versions/{version}'` → `'name' | 'version'`. */
export type ParamNames<T extends string> = T extends `${string}{${infer Name}}${infer Rest}` ? Name | ParamNames<Rest> : never

/** The `ctx.params` the router sets on a path of template `T`: each of its parameters, decoded. */
export type PathParams<T extends string> = Readonly<Record<ParamNames<T>, string>>

/**
 * An endpoint that reads path parameters `P` as `ctx.params.name`. One endpoint may serve several
 * templates: `{ name: string; version?: string }` fits `/m/{name}` and `/m/{name}/v/{version}`.
 */
export type Endpoint<P extends Params> = (ctx: Ctx & { readonly params: P }) => Reply | Promise<Reply>

/** A route whose endpoint's parameters are checked against those of its path. */
export type RouteSpec<T extends string> = Omit<RouteDef, 'path' | 'handler'> & Readonly<{ path: T; handler: Endpoint<PathParams<T>> }>

/**
 * A route, its endpoint typed by its path: an endpoint reading a parameter the template lacks does
 * not compile. The widening to RouteDef is sound because the router sets exactly the template's
 * parameters before the endpoint runs (lib/core/router.ts); at run time this is the identity.
 */
export const route = <const T extends string>(def: RouteSpec<T>): RouteDef => def as RouteDef
