// The types every endpoint and layer implements, and the fold that joins them. Nothing else.
import type { Ctx } from './http/context.js'

export type Headers = Readonly<Record<string, string | number | string[]>>

/** RFC 9457 members an endpoint chooses; `instance` and `request_id` are added when written. */
export type Problem = Readonly<{ type: string; title: string; status: number; detail: string }> & Readonly<Record<string, unknown>>

export type JsonReply = { readonly status: number; readonly headers?: Headers; readonly body?: unknown }
export type TextReply = { readonly status: number; readonly headers?: Headers; readonly text: string }
/** A stream is pulled as the client reads it and stopped (`return()`) when the client leaves. */
export type StreamReply = { readonly status: number; readonly headers?: Headers; readonly stream: AsyncIterable<string> }
/** An error answer. `error` holds what was thrown, so layers can count and record it. */
export type ProblemReply = { readonly status: number; readonly headers?: Headers; readonly problem: Problem; readonly error?: unknown }
export type Reply = JsonReply | TextReply | StreamReply | ProblemReply

/** An endpoint: context in, reply out. No `res`, no globals; dependencies come through a factory. */
export type Handler = (ctx: Ctx) => Reply | Promise<Reply>

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
}>

/** Called once per route at start-up: per-route work goes here, not in the returned Handler. */
export type Layer = (next: Handler, route: RouteInfo) => Handler

/** Layers are listed outermost first: `[logging, metrics, tracing]` wraps `tracing(endpoint)`. */
export const compose = (endpoint: Handler, layers: readonly Layer[], route: RouteInfo): Handler =>
  layers.reduceRight<Handler>((next, layer) => layer(next, route), endpoint)
