// What a route says about itself, declared once beside its endpoint: the parts of an OpenAPI 3.1
// Operation Object that only the route knows. lib/openapi/document.ts adds what every route shares
// (X-Request-ID on each response, the 4XX range and 500 answers, security, and the 401 and 503 of
// tokens and shedding where configured) when it builds /openapi.json.
//
// A response body's shape is declared once, as a TypeBox schema (typebox 1.x): the schema goes into
// the document as it is, and `BodyOf<typeof SCHEMA>` is the type its builder returns, so the two
// cannot drift apart. TypeBox keeps its own marks (`~kind`, `~optional`, `~unsafe`) in
// non-enumerable properties, so JSON.stringify, Object.entries and the document builder see the
// plain JSON Schema only (test/openapi/endpoint.test.ts). Schemas are built once, at import.
//
// The model routes' schemas are in lib/endpoints/model-schemas.ts. A closed set a body holds (a
// health status, a check's status, a drift status, a platform) is one `as const` list in the module
// that owns it, read by the schema and the types.
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox'
import type { ProblemExtra } from './http/errors.js'
import { PROBLEM_CONTENT_TYPE, problem as problemBody } from './http/problem-body.js'

/** A JSON Schema 2020-12 object (the dialect of OpenAPI 3.1): a TypeBox type, or a plain literal. */
export type Schema = TSchema & object

/** What is handed out is read-only throughout, as lib/STYLE.md asks. */
export type Frozen<T> = T extends readonly (infer E)[] ? readonly Frozen<E>[] : T extends object ? { readonly [K in keyof T]: Frozen<T[K]> } : T

/** The type of a body that `schema` describes: what the endpoint building it returns. */
export type BodyOf<S extends TSchema> = Frozen<Static<S>>

/** Groups of operations, in the order the document lists them. */
export const TAGS = Object.freeze({
  service: 'What this service is, and its API description',
  probes: 'Liveness, readiness and start-up probes',
  metrics: 'Prometheus exposition of the service and its models',
  rates: 'The latest BTC exchange rate, from third-party APIs behind a cache',
  insights: "A Server-Sent Events stream of the service's own telemetry",
  models: 'Model serving over /api/v1: predictions, the models and their schemas',
  inference: 'The Open Inference Protocol (KServe v2 REST) over the same models',
  pages: 'Pages for people: interactive API docs and the live demo',
})
export type Tag = keyof typeof TAGS

export type Example = Readonly<{ summary: string; value: unknown }>

export type MediaDoc = Readonly<{
  schema: Schema
  example?: unknown
  examples?: Readonly<Record<string, Example>>
}>

export type ParameterDoc = Readonly<{
  name: string
  in: 'path' | 'query' | 'header'
  description: string
  required?: boolean
  schema: Schema
  example?: unknown
}>

/** A header as a response declares it: `HEADERS.cacheStatus`, or one of its own; `required` when every such response sends it. */
export type HeaderDoc = Readonly<{ $ref: string }> | Readonly<{ description: string; required?: boolean; schema: Schema }>

export type ResponseDoc = Readonly<{
  description: string
  headers?: Readonly<Record<string, HeaderDoc>>
  /** By media type; absent for an empty body (304, 204). */
  content?: Readonly<Record<string, MediaDoc>>
}>

export type RouteDoc = Readonly<{
  /** Stable and unique across the service: clients generated from the document name methods after it. */
  operationId: string
  summary: string
  description?: string
  tags: readonly Tag[]
  /** Every `{name}` of the path template is declared here with `in: 'path'`, and nothing else is. */
  parameters?: readonly ParameterDoc[]
  requestBody?: Readonly<{ description?: string; required: boolean; content: Readonly<Record<string, MediaDoc>> }>
  /** By status code. X-Request-ID, the `4XX` range and the 500 answer are added to every operation. */
  responses: Readonly<Record<string, ResponseDoc>>
  /** Named schemas this route introduces, referenced as `ref('Name')`; one name, one schema. */
  schemas?: Readonly<Record<string, Schema>>
}>

const SCHEMA_PREFIX = '#/components/schemas/'

/** A reference to a named schema of components.schemas. */
export const ref = (name: string): Schema => ({ $ref: SCHEMA_PREFIX + name })

/** A schema of components.schemas, its name, and a reference to it typed as the schema is. */
export type Named<S extends TSchema> = Readonly<{ name: string; schema: S; ref: TUnsafe<Static<S>> }>

/** Names `schema`: routes list it in `RouteDoc.schemas` (`schemasOf`) and use `ref` where it appears. */
export const named = <S extends TSchema>(name: string, schema: S): Named<S> => ({ name, schema, ref: Type.Unsafe<Static<S>>(ref(name)) })

/** `RouteDoc.schemas` from named schemas. */
export const schemasOf = (list: readonly Named<TSchema>[]): Readonly<Record<string, Schema>> => Object.fromEntries(list.map((n) => [n.name, n.schema]))

/** One of `values`, as `{ type: 'string', enum }`, typed as their union. */
export const stringEnum = <const V extends readonly string[]>(values: V, options: Readonly<{ description?: string }> = {}): TUnsafe<V[number]> =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options })

/**
 * One of `values` in the document, typed as any string: for a member whose producer, outside the
 * schema's module, types it as a string (a runtime's platform, a rate's source, a figure's unit).
 */
export const openEnum = (values: readonly string[], options: Readonly<{ description?: string }> = {}): TUnsafe<string> =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], ...options })

/** `schema`, or null: its `type` becomes `[type, 'null']`, as OpenAPI 3.1 writes a nullable value. */
export const nullable = <S extends TSchema & Readonly<{ type: string }>>(schema: S): TUnsafe<Static<S> | null> =>
  Type.Unsafe<Static<S> | null>({ ...schema, type: [schema.type, 'null'] })

/** Any JSON object, `{ type: 'object' }` with `options`: a member the schema does not break down. */
export const anyObject = (options: Readonly<{ description?: string }> = {}): TUnsafe<object> => Type.Unsafe<object>({ type: 'object', ...options })

/** The standard headers, declared once in components.headers. */
export const HEADERS = Object.freeze({
  requestId: { $ref: '#/components/headers/X-Request-ID' },
  cacheStatus: { $ref: '#/components/headers/Cache-Status' },
  retryAfter: { $ref: '#/components/headers/Retry-After' },
  etag: { $ref: '#/components/headers/ETag' },
  cacheControl: { $ref: '#/components/headers/Cache-Control' },
  csp: { $ref: '#/components/headers/Content-Security-Policy' },
  wwwAuthenticate: { $ref: '#/components/headers/WWW-Authenticate' },
})

const JSON_TYPE = 'application/json'

/** The request id of every example: any UUID would do. */
export const EXAMPLE_REQUEST_ID = '5a0c2f4e-8d1b-4c3a-9e6f-7b2d1a0c9e8f'

/** A JSON response. */
export const json = (description: string, schema: Schema, extra: Omit<MediaDoc, 'schema'> & { headers?: ResponseDoc['headers'] } = {}): ResponseDoc => {
  const { headers, ...media } = extra
  return { description, ...(headers === undefined ? {} : { headers }), content: { [JSON_TYPE]: { schema, ...media } } }
}

/** An RFC 9457 problem response, with one named example per way it happens. */
export const problem = (description: string, examples: Readonly<Record<string, Example>>, headers?: ResponseDoc['headers']): ResponseDoc => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem'), examples } },
})

/**
 * A problem body as the service sends it (lib/core/http/problem.ts), for examples: `instance` is the
 * path asked for and `request_id` that request's X-Request-ID.
 */
export const problemExample = (summary: string, status: number, code: string, detail: string, instance: string, extra: ProblemExtra = {}): Example => ({
  summary,
  value: { ...problemBody(status, code, detail, extra), instance, request_id: EXAMPLE_REQUEST_ID },
})

/** A path parameter: every `{name}` of a template is one. */
export const pathParameter = (name: string, description: string, example: string): ParameterDoc => ({
  name,
  in: 'path',
  description,
  required: true,
  schema: { type: 'string', minLength: 1 },
  example,
})
