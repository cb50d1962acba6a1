// The route table: method + path → a pipeline built once at start-up (lib/README.md §1).
// Static paths are one Map lookup; `{param}` templates are matched segment by segment.
//
// The table is validated at registration: known methods, a leading `/`, no duplicate, whole-segment
// parameters named once, one token per path. HEAD is answered with the GET pipeline, OPTIONS with
// 204 and `Allow`, an unknown method with 405 and `Allow`, an unknown path with 404. A parameter is
// decoded only when it holds `%`; bad encoding is a 400 only for a path that fits the template.
import type { Ctx, Params } from './http/context.js'
import { HttpError } from './http/errors.js'
import { problem } from './http/problem-body.js'
import { guard } from './http/problem.js'
import { compose, METHODS, UNMATCHED, type Handler, type Layer, type ProblemReply, type Reply, type RouteDef, type RouteInfo } from './pipeline.js'

/** Everything answered at one path: a pipeline per method, and the 405 pipeline for the rest. */
export type PathEntry = Readonly<{
  template: string
  allow: string
  handlers: ReadonlyMap<string, Handler>
  otherMethod: Handler
  /** The methods whose route takes a JSON body (RouteDef `body`): the server reads it before their pipeline runs. */
  bodyMethods: ReadonlySet<string>
}>

export type Router = Readonly<{
  /**
   * Finds the entry for `ctx.path`, setting `ctx.params`, or `ctx.rejection` for a parameter's bad
   * encoding (the last row of the precedence table in lib/server/inspect.ts: any other wins over it).
   */
  find(ctx: Ctx): PathEntry
  /** Route templates, for links and documentation. */
  templates: readonly string[]
}>

const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/

type Segment = { readonly literal: string } | { readonly param: string }
type DynamicRoute = { readonly segments: readonly Segment[]; readonly entry: PathEntry }

export const createRouter = (defs: readonly RouteDef[], layers: readonly Layer[]): Router => {
  const byPath = new Map<string, RouteDef[]>()
  for (const def of defs) {
    validate(def, byPath.get(def.path))
    byPath.set(def.path, [...(byPath.get(def.path) ?? []), def])
  }

  const staticEntries = new Map<string, PathEntry>()
  const dynamic: DynamicRoute[] = []
  for (const [template, routes] of byPath) {
    const entry = buildEntry(template, routes, layers)
    if (template.includes('{')) dynamic.push({ segments: parseTemplate(template), entry })
    else staticEntries.set(template, entry)
  }

  const notFoundReply: ProblemReply = Object.freeze({ kind: 'problem', status: 404, problem: problem(404, 'NOT_FOUND', 'No route matches this path') })
  const unmatched: PathEntry = {
    template: UNMATCHED,
    allow: '',
    handlers: new Map(),
    otherMethod: pipeline(() => notFoundReply, '*', UNMATCHED, UNMATCHED_TRAITS, layers),
    bodyMethods: new Set(),
  }

  return {
    templates: [...byPath.keys()],
    find(ctx) {
      // hot path: one Map lookup for static routes
      const hit = staticEntries.get(ctx.path)
      if (hit !== undefined) return hit
      for (const route of dynamic) {
        const params = matchSegments(route.segments, ctx.path, ctx)
        if (params !== undefined) {
          ctx.params = params
          return route.entry
        }
      }
      return unmatched
    },
  }
}

type PathTraits = Pick<RouteInfo, 'isExcludedFromMetrics' | 'requestLogLevel' | 'isOperational' | 'auth'>
const UNMATCHED_TRAITS: PathTraits = { isExcludedFromMetrics: false, requestLogLevel: 'info', isOperational: false, auth: 'none' }

const pipeline = (endpoint: Handler, method: string, template: string, traits: PathTraits, layers: readonly Layer[]): Handler => {
  const info: RouteInfo = Object.freeze({ method, template, ...traits })
  return compose(guard(endpoint), layers, info)
}

const buildEntry = (template: string, routes: readonly RouteDef[], layers: readonly Layer[]): PathEntry => {
  const declared = new Map<string, RouteDef>(routes.map((r) => [r.method, r]))
  const get = declared.get('GET')
  if (get !== undefined && !declared.has('HEAD')) declared.set('HEAD', { ...get, method: 'HEAD' })
  const methods = [...declared.keys(), 'OPTIONS'].filter((m, i, all) => all.indexOf(m) === i)
  const allow = METHODS.filter((m) => methods.includes(m)).join(', ')
  // What a path is (a scrape, a probe, guarded by a token) holds for every method at it, the 405
  // and OPTIONS answers included.
  const traits: PathTraits = {
    isExcludedFromMetrics: routes.some((r) => r.isExcludedFromMetrics === true),
    requestLogLevel: routes.some((r) => r.requestLogLevel === 'debug') ? 'debug' : 'info',
    isOperational: routes.some((r) => r.isOperational === true),
    auth: routes.find((r) => r.auth !== undefined)?.auth ?? 'none',
  }

  const handlers = new Map<string, Handler>()
  for (const [method, def] of declared) handlers.set(method, pipeline(def.handler, method, template, traits, layers))
  if (!declared.has('OPTIONS')) {
    const options: Reply = Object.freeze({ kind: 'json', status: 204, headers: Object.freeze({ allow }) })
    handlers.set(
      'OPTIONS',
      pipeline(() => options, 'OPTIONS', template, traits, layers),
    )
  }
  const notAllowed = new HttpError(405, 'METHOD_NOT_ALLOWED', `This path accepts ${allow}`, { headers: { allow } })
  const otherMethod = pipeline(
    () => {
      throw notAllowed
    },
    '*',
    template,
    traits,
    layers,
  )
  const bodyMethods = new Set(routes.filter((r) => r.body === 'json').map((r) => r.method))
  return { template, allow, handlers, otherMethod, bodyMethods }
}

// Validation happens here, at registration, never in the lookup.
const validate = (def: RouteDef, existing: readonly RouteDef[] | undefined): void => {
  if (!METHODS.includes(def.method)) throw new TypeError(`route ${def.path}: unsupported method ${def.method}`)
  if (!def.path.startsWith('/')) throw new TypeError(`route ${def.path}: a path starts with "/"`)
  if (existing?.some((r) => r.method === def.method) === true) throw new TypeError(`route ${def.method} ${def.path} is declared twice`)
  // One path, one token: the 405 and OPTIONS answers at it could not say which they need.
  const clash = def.auth === undefined ? undefined : existing?.find((r) => r.auth !== undefined && r.auth !== def.auth)
  if (clash !== undefined) throw new TypeError(`route ${def.path}: ${def.method} needs the ${def.auth} token, ${clash.method} the ${clash.auth} one`)
  if (def.path.includes('{')) parseTemplate(def.path)
}

const parseTemplate = (template: string): Segment[] => {
  const seen = new Set<string>()
  return template
    .slice(1)
    .split('/')
    .map((part) => {
      const param = PARAM.exec(part)?.[1]
      if (param === undefined) {
        if (/[{}]/.test(part)) throw new TypeError(`route ${template}: a parameter fills a whole segment, as in {name}`)
        return { literal: part }
      }
      if (seen.has(param)) throw new TypeError(`route ${template}: parameter ${param} appears twice`)
      seen.add(param)
      return { param }
    })
}

/** Params when `path` fits the template, else undefined. Values are decoded only when they hold `%`. */
const matchSegments = (segments: readonly Segment[], path: string, ctx: Ctx): Params | undefined => {
  let params: Record<string, string> | undefined
  let malformed: string | undefined
  let start = 1
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment
    if (start > path.length) return undefined
    const slash = path.indexOf('/', start)
    const isLast = i === segments.length - 1
    if (isLast !== (slash === -1)) return undefined
    const end = slash === -1 ? path.length : slash
    const raw = path.slice(start, end)
    if ('literal' in segment) {
      if (raw !== segment.literal) return undefined
    } else {
      if (raw === '') return undefined
      let value = raw
      if (raw.includes('%')) {
        try {
          value = decodeURIComponent(raw)
        } catch {
          malformed ??= segment.param
        }
      }
      ;(params ??= {})[segment.param] = value
    }
    start = end + 1
  }
  // Only a path that fits the template is refused for its encoding; any other stays a 404.
  if (malformed !== undefined) ctx.rejection = new HttpError(400, 'INVALID_PATH_PARAMETER', `Path parameter ${malformed} is not valid percent-encoding`)
  return params
}
