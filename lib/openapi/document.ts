// Builds the OpenAPI 3.1 document of GET /openapi.json from the route table, once at start-up.
// Each route brings its own description (RouteDef.doc); this adds what they all share and refuses,
// listing every problem at once, a table that has a route without a description, a path parameter
// left undescribed, an operationId used twice, or a reference to nothing.
import { deepFreeze } from '../core/freeze.js'
import { PROBLEM_CONTENT_TYPE } from '../core/http/problem-body.js'
import type { RouteAuth, RouteDef } from '../core/pipeline.js'
import { COMPONENT_HEADERS, COMPONENT_RESPONSES, COMPONENT_SCHEMAS, OVERLOADED_SUFFIX, overloadedExample, SHED_RETRY_AFTER } from './components.js'
import { Type } from 'typebox'
import { anyObject, HEADERS, TAGS, type BodyOf, type ParameterDoc, type ResponseDoc, type RouteDoc, type Schema, type Tag } from '../core/route-doc.js'

export const OPENAPI_VERSION = '3.1.0'

export type ApiInfo = Readonly<{ title: string; version: string; description?: string }>

/**
 * Bearer tokens, when the service is configured with them: `api` guards /api/v1/* and /v2/*,
 * `metrics` guards /metrics with a token of its own (a scraper's is not a client's).
 */
export type ApiSecurity = Readonly<{ api?: boolean; metrics?: boolean }>

export type DocumentOptions = Readonly<{
  routes: readonly Pick<RouteDef, 'method' | 'path' | 'doc' | 'auth' | 'isOperational'>[]
  info: ApiInfo
  security?: ApiSecurity
  /**
   * Load shedding is on (SVC_MAX_IN_FLIGHT or SVC_MAX_EVENT_LOOP_DELAY_MS): every route but the
   * operational ones may answer 503 OVERLOADED (lib/layers/shedding.ts).
   */
  isShedding?: boolean
}>

/** The document's own schema, as GET /openapi.json describes its answer (endpoint.ts). */
export const OPENAPI_SCHEMA = Type.Object({
  openapi: Type.Literal(OPENAPI_VERSION),
  info: Type.Object({
    title: Type.String({ description: 'APP_NAME' }),
    version: Type.String({ description: "The service's version" }),
    description: Type.Optional(Type.String()),
    license: Type.Optional(anyObject()),
  }),
  servers: Type.Optional(Type.Array(anyObject())),
  tags: Type.Optional(Type.Array(anyObject())),
  paths: anyObject({ description: 'Every route of this listener, by path template' }),
  components: Type.Optional(anyObject()),
})

/** The document as plain, deeply frozen JSON data. */
export type OpenApiDocument = BodyOf<typeof OPENAPI_SCHEMA>

/** A reference to a shared part of the document (components.responses, components.headers). */
type Ref = Readonly<{ $ref: string }>

/** An OpenAPI Operation Object, as the document writes one. */
type Operation = Readonly<{
  operationId: string
  summary: string
  description?: string
  tags: readonly Tag[]
  parameters?: readonly ParameterDoc[]
  requestBody?: RouteDoc['requestBody']
  responses: Readonly<Record<string, ResponseDoc | Ref>>
  security: readonly Readonly<Record<string, readonly string[]>>[]
}>

const SECURITY_SCHEMES = {
  apiToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A client token, sent as `Authorization: Bearer <token>`, for /api/v1/* and /v2/*',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The scraper token, sent as `Authorization: Bearer <token>`, for /metrics',
  },
} as const

/** The scheme guarding a route: the token its definition declares, when that token is configured. */
const schemeFor = (auth: RouteAuth | undefined, security: ApiSecurity): keyof typeof SECURITY_SCHEMES | undefined => {
  if (auth === 'api' && security.api === true) return 'apiToken'
  if (auth === 'metrics' && security.metrics === true) return 'metricsToken'
  return undefined
}

const responseRef = (name: string): Ref => ({ $ref: `#/components/responses/${name}` })
const PARAM = /\{([^}]+)\}/g

/**
 * Where the service is: `.`, a URL relative to the document's own (OpenAPI 3.1 §4.8.5), so it is
 * wherever /openapi.json was fetched from, path prefix included: behind a proxy that serves the
 * service under /svc/, Swagger UI's "Try it out" calls /svc/v2, where `/` (the default when
 * `servers` is absent) would call /v2 (test/browser/docs.test.ts). Redocly wants `servers` present
 * and refuses a trailing slash (`./`).
 */
export const SERVERS = [{ url: '.', description: 'This service, where this document was fetched from (path prefix included)' }] as const

/** Every response says X-Request-ID, first, whatever else it declares. */
const withRequestId = (response: ResponseDoc): ResponseDoc => ({ ...response, headers: { 'X-Request-ID': HEADERS.requestId, ...response.headers } })

/** A path as a client asks for it: each `{name}` filled with its parameter's example. */
const examplePath = (path: string, doc: RouteDoc): string =>
  path.replace(PARAM, (whole, name: string) => {
    const example = doc.parameters?.find((p) => p.in === 'path' && p.name === name)?.example
    return typeof example === 'string' ? example : whole
  })

/**
 * The 503 of a route that shedding may answer: the shared one, or the route's own problem with the
 * OVERLOADED example and Retry-After added (a 503 that is no problem fails `check`).
 */
const shedResponse = (own: ResponseDoc | undefined, instance: string): ResponseDoc | Ref => {
  if (own === undefined) return responseRef('Overloaded')
  const media = own.content?.[PROBLEM_CONTENT_TYPE]
  if (media === undefined) return own
  return withRequestId({
    description: own.description + OVERLOADED_SUFFIX,
    headers: { 'Retry-After': SHED_RETRY_AFTER, ...own.headers },
    content: {
      ...own.content,
      [PROBLEM_CONTENT_TYPE]: { ...media, examples: { ...media.examples, overloaded: overloadedExample(instance, 'max_in_flight') } },
    },
  })
}

const operation = (path: string, doc: RouteDoc, scheme: string | undefined, isShed: boolean): Operation => {
  const responses: Record<string, ResponseDoc | Ref> = {}
  for (const [status, response] of Object.entries(doc.responses)) responses[status] = withRequestId(response)
  // What any operation can answer besides its own: a path parameter that is not valid
  // percent-encoding (the router's 400), a missing or wrong token (401), a refused request head
  // (4XX), a shed request (503), a failure (500).
  if (path.includes('{') && responses['400'] === undefined) responses['400'] = responseRef('InvalidPathParameter')
  if (scheme !== undefined) responses['401'] = responseRef('Unauthorized')
  responses['4XX'] = responseRef('RequestHeadRefused')
  if (isShed) responses['503'] = shedResponse(doc.responses['503'], examplePath(path, doc))
  responses['500'] ??= responseRef('InternalError')
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    tags: doc.tags,
    ...(doc.parameters === undefined ? {} : { parameters: doc.parameters }),
    ...(doc.requestBody === undefined ? {} : { requestBody: doc.requestBody }),
    responses,
    // Open routes say so (`[]`: no token needed), rather than leaving a reader to guess.
    security: scheme === undefined ? [] : [{ [scheme]: [] }],
  }
}

/** What is wrong with a route's description, beyond what its type already rules out. */
const check = (method: string, path: string, doc: RouteDoc, isShed: boolean): string[] => {
  const problems: string[] = []
  const unavailable = doc.responses['503']
  if (isShed && unavailable !== undefined && unavailable.content?.[PROBLEM_CONTENT_TYPE] === undefined)
    problems.push(`${method} ${path}: its 503 is no problem+json, so load shedding's OVERLOADED cannot be described with it`)
  const inTemplate = [...path.matchAll(PARAM)].map((m) => m[1] as string)
  const declared = (doc.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name)
  for (const name of inTemplate) if (!declared.includes(name)) problems.push(`${method} ${path}: path parameter ${name} is not described`)
  for (const name of declared) if (!inTemplate.includes(name)) problems.push(`${method} ${path}: described path parameter ${name} is not in the path`)
  if (Object.keys(doc.responses).length === 0) problems.push(`${method} ${path}: no response is described`)
  return problems
}

/** Every `$ref` of the document points at something in it. */
const danglingRefs = (document: unknown): string[] => {
  const dangling: string[] = []
  const resolve = (pointer: string): unknown =>
    pointer
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => {
        const name = key.replaceAll('~1', '/').replaceAll('~0', '~')
        return node !== null && typeof node === 'object' ? Object.entries(node).find(([member]) => member === name)?.[1] : undefined
      }, document)
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (node === null || typeof node !== 'object') return
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && resolve(value) === undefined) dangling.push(value)
      else walk(value)
    }
  }
  walk(document)
  return [...new Set(dangling)]
}

/** The names of the shared `kind` (responses, headers) that `node` refers to: only those go in the document. */
const referenced = (kind: 'responses' | 'headers', node: unknown): Set<string> =>
  new Set([...JSON.stringify(node).matchAll(new RegExp(`"\\$ref":"#/components/${kind}/([^"]+)"`, 'g'))].map((m) => m[1] as string))

const pick = <T>(all: Readonly<Record<string, T>>, names: ReadonlySet<string>): Record<string, T> =>
  Object.fromEntries(Object.entries(all).filter(([name]) => names.has(name)))

/** The document, or a TypeError naming every route and reference that keeps it from being complete. */
export const buildDocument = ({ routes, info, security = {}, isShedding = false }: DocumentOptions): OpenApiDocument => {
  const problems: string[] = []
  const paths: Record<string, Record<string, Operation>> = {}
  const schemas: Record<string, Schema> = { ...COMPONENT_SCHEMAS }
  const operationIds = new Set<string>()
  const tags = new Set<Tag>()
  const schemes = new Set<keyof typeof SECURITY_SCHEMES>()

  for (const { method, path, doc, auth, isOperational } of routes) {
    if (doc === undefined) {
      problems.push(`${method} ${path} has no description (RouteDef.doc)`)
      continue
    }
    // As the shedding layer decides it: every route but the operational ones.
    const isShed = isShedding && isOperational !== true
    problems.push(...check(method, path, doc, isShed))
    if (operationIds.has(doc.operationId)) problems.push(`${method} ${path}: operationId ${doc.operationId} is used twice`)
    operationIds.add(doc.operationId)
    for (const tag of doc.tags) tags.add(tag)
    for (const [name, schema] of Object.entries(doc.schemas ?? {})) {
      const known = schemas[name]
      if (known !== undefined && JSON.stringify(known) !== JSON.stringify(schema))
        problems.push(`${method} ${path}: schema ${name} differs from another of that name`)
      schemas[name] = schema
    }
    const scheme = schemeFor(auth, security)
    if (scheme !== undefined) schemes.add(scheme)
    ;(paths[path] ??= {})[method.toLowerCase()] = operation(path, doc, scheme, isShed)
  }

  const responses = Object.fromEntries(Object.entries(pick(COMPONENT_RESPONSES, referenced('responses', paths))).map(([name, r]) => [name, withRequestId(r)]))
  const headers = pick(COMPONENT_HEADERS, referenced('headers', [paths, responses]))
  const securitySchemes = Object.fromEntries([...schemes].sort().map((name) => [name, SECURITY_SCHEMES[name]]))
  const document: OpenApiDocument = {
    openapi: OPENAPI_VERSION,
    info: {
      title: info.title,
      version: info.version,
      ...(info.description === undefined ? {} : { description: info.description }),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: SERVERS,
    tags: (Object.keys(TAGS) as Tag[]).filter((tag) => tags.has(tag)).map((name) => ({ name, description: TAGS[name] })),
    paths,
    components: {
      schemas,
      headers,
      responses,
      ...(schemes.size === 0 ? {} : { securitySchemes }),
    },
  }
  problems.push(...danglingRefs(document).map((target) => `$ref ${target} points at nothing`))
  if (problems.length > 0) throw new TypeError(`the API description is incomplete:\n${problems.map((p) => `  ${p}`).join('\n')}`)
  // A copy, so freezing it never freezes the route descriptions it was built from.
  return deepFreeze(JSON.parse(JSON.stringify(document)) as OpenApiDocument)
}
