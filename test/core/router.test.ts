import { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import t from 'tap'
import { Ctx, type Params } from '../../lib/core/http/context.js'
import { HttpError } from '../../lib/core/http/errors.js'
import { UNMATCHED, type Handler, type Layer, type Method, type ProblemReply, type Reply, type RouteDef, type RouteInfo } from '../../lib/core/pipeline.js'
import { createRouter, type PathEntry, type Router } from '../../lib/core/router.js'

const ctxFor = (method: string, url: string): Ctx =>
  new Ctx({ url, method, headers: {} } as unknown as IncomingMessage, new EventEmitter() as unknown as ServerResponse, 1024)

/** An endpoint that names itself, so a case can tell which one answered. */
const endpoint = (name: string, status = 200): Handler => {
  const reply: Reply = Object.freeze({ kind: 'json', status, body: { endpoint: name } })
  return () => reply
}

const route = (method: Method, path: string, status?: number): RouteDef => ({ method, path, handler: endpoint(`${method} ${path}`, status) })

const answer = async (router: Router, ctx: Ctx): Promise<Reply> => {
  const entry = router.find(ctx)
  return (entry.handlers.get(ctx.method) ?? entry.otherMethod)(ctx)
}

const handlerFor = (entry: PathEntry, method: string): Handler => {
  const handler = entry.handlers.get(method)
  if (handler === undefined) throw new Error(`no ${method} handler at ${entry.template}`)
  return handler
}

const asProblem = (reply: Reply): ProblemReply => {
  if (reply.kind !== 'problem') throw new Error(`expected a problem reply, got ${JSON.stringify(reply)}`)
  return reply
}

// The route table and its cases hold no reference to this router's internals, so another router
// implementation can be run against the same table.
const ROUTES: readonly RouteDef[] = [
  route('GET', '/'),
  route('GET', '/health'),
  route('POST', '/items'),
  route('GET', '/items'),
  route('GET', '/users/me'),
  route('GET', '/users/{id}'),
  route('DELETE', '/users/{id}'),
  route('GET', '/users/{id}/posts/{postId}'),
  route('GET', '/explicit-head'),
  route('HEAD', '/explicit-head'),
  route('GET', '/explicit-options'),
  route('OPTIONS', '/explicit-options'),
]

type RouterCase = Readonly<{
  name: string
  method: string
  path: string
  expect: Readonly<{
    template: string
    status: number
    /** Which endpoint answered, as `METHOD template`. */
    endpoint?: string
    params?: Params
    allow?: string
    /** Status of the HttpError left in `ctx.rejection`. */
    rejection?: number
  }>
}>

const CASES: readonly RouterCase[] = [
  { name: 'a static path is found', method: 'GET', path: '/health', expect: { template: '/health', status: 200, endpoint: 'GET /health', params: {} } },
  { name: 'the root path is found', method: 'GET', path: '/', expect: { template: '/', status: 200, endpoint: 'GET /' } },
  {
    name: 'the query string is not part of the path',
    method: 'GET',
    path: '/health?verbose=1',
    expect: { template: '/health', status: 200, endpoint: 'GET /health' },
  },
  {
    name: 'a static path wins over a template that also fits',
    method: 'GET',
    path: '/users/me',
    expect: { template: '/users/me', status: 200, endpoint: 'GET /users/me', params: {} },
  },
  {
    name: 'a template parameter is captured',
    method: 'GET',
    path: '/users/42',
    expect: { template: '/users/{id}', status: 200, endpoint: 'GET /users/{id}', params: { id: '42' } },
  },
  {
    name: 'several template parameters are captured',
    method: 'GET',
    path: '/users/42/posts/7',
    expect: { template: '/users/{id}/posts/{postId}', status: 200, endpoint: 'GET /users/{id}/posts/{postId}', params: { id: '42', postId: '7' } },
  },
  {
    name: 'a parameter is percent-decoded',
    method: 'GET',
    path: '/users/John%20Doe',
    expect: { template: '/users/{id}', status: 200, params: { id: 'John Doe' } },
  },
  {
    name: 'a malformed percent-encoding is rejected with 400 and kept raw',
    method: 'GET',
    path: '/users/%E0%A4%A',
    expect: { template: '/users/{id}', status: 400, params: { id: '%E0%A4%A' }, rejection: 400 },
  },
  {
    name: 'a malformed parameter on a path that fits no template stays a 404',
    method: 'GET',
    path: '/users/%E0%A4%A/posts',
    expect: { template: UNMATCHED, status: 404 },
  },
  { name: 'an empty last segment matches no parameter', method: 'GET', path: '/users/', expect: { template: UNMATCHED, status: 404 } },
  { name: 'an empty middle segment matches no parameter', method: 'GET', path: '/users//posts/7', expect: { template: UNMATCHED, status: 404 } },
  { name: 'an extra segment matches nothing', method: 'GET', path: '/users/42/extra', expect: { template: UNMATCHED, status: 404 } },
  { name: 'a missing segment matches nothing', method: 'GET', path: '/users/42/posts', expect: { template: UNMATCHED, status: 404 } },
  {
    name: 'a trailing slash after the last parameter matches nothing',
    method: 'GET',
    path: '/users/42/posts/7/',
    expect: { template: UNMATCHED, status: 404 },
  },
  { name: 'a trailing slash on a static path matches nothing', method: 'GET', path: '/health/', expect: { template: UNMATCHED, status: 404 } },
  { name: 'a literal segment must match exactly', method: 'GET', path: '/users/42/comments/7', expect: { template: UNMATCHED, status: 404 } },
  { name: 'an unknown path answers 404', method: 'GET', path: '/nope', expect: { template: UNMATCHED, status: 404 } },
  { name: 'an unknown path answers 404 for any method', method: 'DELETE', path: '/nope', expect: { template: UNMATCHED, status: 404 } },
  { name: 'an empty request target matches nothing', method: 'GET', path: '', expect: { template: UNMATCHED, status: 404 } },
  { name: 'the asterisk request target matches nothing', method: 'OPTIONS', path: '*', expect: { template: UNMATCHED, status: 404 } },
  {
    name: 'a known static path answers 405 with Allow for another method',
    method: 'DELETE',
    path: '/items',
    expect: { template: '/items', status: 405, allow: 'GET, HEAD, POST, OPTIONS' },
  },
  {
    name: 'a known template answers 405 with Allow for another method',
    method: 'PUT',
    path: '/users/42',
    expect: { template: '/users/{id}', status: 405, allow: 'GET, HEAD, DELETE, OPTIONS' },
  },
  {
    name: 'an unsupported method on a known path answers 405',
    method: 'PROPFIND',
    path: '/health',
    expect: { template: '/health', status: 405, allow: 'GET, HEAD, OPTIONS' },
  },
  {
    name: 'a second method on a template is found',
    method: 'DELETE',
    path: '/users/42',
    expect: { template: '/users/{id}', status: 200, endpoint: 'DELETE /users/{id}', params: { id: '42' } },
  },
  {
    name: 'HEAD is answered by the GET endpoint',
    method: 'HEAD',
    path: '/users/42',
    expect: { template: '/users/{id}', status: 200, endpoint: 'GET /users/{id}', params: { id: '42' } },
  },
  { name: 'OPTIONS answers 204 with Allow', method: 'OPTIONS', path: '/items', expect: { template: '/items', status: 204, allow: 'GET, HEAD, POST, OPTIONS' } },
  {
    name: 'OPTIONS on a template answers 204 with Allow',
    method: 'OPTIONS',
    path: '/users/42',
    expect: { template: '/users/{id}', status: 204, allow: 'GET, HEAD, DELETE, OPTIONS' },
  },
  {
    name: 'an explicitly declared HEAD is kept',
    method: 'HEAD',
    path: '/explicit-head',
    expect: { template: '/explicit-head', status: 200, endpoint: 'HEAD /explicit-head' },
  },
  {
    name: 'an explicitly declared OPTIONS is kept',
    method: 'OPTIONS',
    path: '/explicit-options',
    expect: { template: '/explicit-options', status: 200, endpoint: 'OPTIONS /explicit-options' },
  },
]

t.test('router cases', async (t) => {
  const router = createRouter(ROUTES, [])
  for (const { name, method, path, expect } of CASES) {
    t.test(name, async (t) => {
      const ctx = ctxFor(method, path)
      t.equal(router.find(ctx).template, expect.template, 'template')
      const reply = await answer(router, ctx)
      t.equal(reply.status, expect.status, 'status')
      if (expect.endpoint !== undefined) t.same(reply.kind === 'json' ? reply.body : undefined, { endpoint: expect.endpoint }, 'endpoint')
      if (expect.params !== undefined) t.same(ctx.params, expect.params, 'params')
      if (expect.allow !== undefined) t.same(reply.headers, { allow: expect.allow }, 'allow header')
      if (expect.rejection === undefined) t.equal(ctx.rejection, undefined, 'no rejection')
      else {
        t.type(ctx.rejection, HttpError, 'rejection')
        t.equal(ctx.rejection?.status, expect.rejection, 'rejection status')
      }
    })
  }
})

t.test('an unknown path answers a 404 problem', async (t) => {
  const reply = asProblem(await answer(createRouter(ROUTES, []), ctxFor('GET', '/nope')))
  t.match(reply.problem, { type: 'urn:svc:problem:not-found', status: 404 })
  t.notOk('error' in reply)
})

t.test('a wrong method answers a 405 problem naming the allowed methods', async (t) => {
  const reply = asProblem(await answer(createRouter(ROUTES, []), ctxFor('PUT', '/items')))
  t.match(reply.problem, { type: 'urn:svc:problem:method-not-allowed', status: 405, detail: 'This path accepts GET, HEAD, POST, OPTIONS' })
  t.same(reply.headers, { allow: 'GET, HEAD, POST, OPTIONS' })
})

t.test('a malformed parameter answers a 400 problem before the endpoint runs', async (t) => {
  let calls = 0
  const router = createRouter(
    [
      {
        method: 'GET',
        path: '/files/{name}',
        handler: () => {
          calls++
          return { kind: 'json', status: 200 }
        },
      },
    ],
    [],
  )
  const reply = asProblem(await answer(router, ctxFor('GET', '/files/%E0%A4%A')))
  t.match(reply.problem, { type: 'urn:svc:problem:invalid-path-parameter', status: 400, detail: 'Path parameter name is not valid percent-encoding' })
  t.equal(calls, 0)
})

t.test('a path entry exposes its Allow string', async (t) => {
  const router = createRouter(ROUTES, [])
  t.equal(router.find(ctxFor('GET', '/items')).allow, 'GET, HEAD, POST, OPTIONS')
  t.equal(router.find(ctxFor('GET', '/users/1')).allow, 'GET, HEAD, DELETE, OPTIONS')
  t.equal(router.find(ctxFor('GET', '/explicit-head')).allow, 'GET, HEAD, OPTIONS')
  t.equal(router.find(ctxFor('GET', '/nope')).allow, '')
})

t.test('Allow lists methods in a fixed order whatever the declaration order', async (t) => {
  const router = createRouter([route('DELETE', '/r'), route('PATCH', '/r'), route('PUT', '/r'), route('POST', '/r'), route('GET', '/r')], [])
  t.equal(router.find(ctxFor('GET', '/r')).allow, 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS')
})

t.test('a path without GET gets no automatic HEAD', async (t) => {
  const entry = createRouter([route('POST', '/submit')], []).find(ctxFor('HEAD', '/submit'))
  t.equal(entry.handlers.has('HEAD'), false)
  t.equal(entry.allow, 'POST, OPTIONS')
  t.equal((await entry.otherMethod(ctxFor('HEAD', '/submit'))).status, 405)
})

t.test('HEAD is served by the GET endpoint when only GET is declared', async (t) => {
  const reply: Reply = { kind: 'json', status: 200, body: 'hello' }
  const entry = createRouter([{ method: 'GET', path: '/greeting', handler: () => reply }], []).find(ctxFor('HEAD', '/greeting'))
  t.equal(await handlerFor(entry, 'HEAD')(ctxFor('HEAD', '/greeting')), reply)
  t.same([...entry.handlers.keys()].sort(), ['GET', 'HEAD', 'OPTIONS'])
})

t.test('the automatic OPTIONS answers 204 with Allow and no body', async (t) => {
  const entry = createRouter([route('GET', '/a'), route('PUT', '/a')], []).find(ctxFor('OPTIONS', '/a'))
  t.same(await handlerFor(entry, 'OPTIONS')(ctxFor('OPTIONS', '/a')), { kind: 'json', status: 204, headers: { allow: 'GET, HEAD, PUT, OPTIONS' } })
})

t.test('an explicitly declared HEAD and OPTIONS replace the automatic ones', async (t) => {
  const router = createRouter([route('GET', '/x'), route('HEAD', '/x', 299), route('OPTIONS', '/x', 298)], [])
  const entry = router.find(ctxFor('GET', '/x'))
  t.equal(entry.allow, 'GET, HEAD, OPTIONS')
  t.equal((await answer(router, ctxFor('HEAD', '/x'))).status, 299)
  t.equal((await answer(router, ctxFor('OPTIONS', '/x'))).status, 298)
})

t.test('layers are applied once per route at build time, with the route info', async (t) => {
  const seen: RouteInfo[] = []
  let outerCalls = 0
  const outer: Layer = (next, info) => {
    outerCalls++
    seen.push(info)
    return next
  }
  let innerCalls = 0
  const inner: Layer = (next) => {
    innerCalls++
    return next
  }
  const router = createRouter(
    [route('GET', '/a'), route('POST', '/a'), route('DELETE', '/b/{id}'), { ...route('GET', '/metrics'), isExcludedFromMetrics: true }],
    [outer, inner],
  )
  const infos = seen.map((i) => `${i.method} ${i.template} ${i.isExcludedFromMetrics}`).sort()
  t.same(infos, [
    '* /a false',
    '* /b/{id} false',
    '* /metrics true',
    `* ${UNMATCHED} false`,
    'DELETE /b/{id} false',
    'GET /a false',
    'GET /metrics true',
    'HEAD /a false',
    'HEAD /metrics true',
    'OPTIONS /a false',
    'OPTIONS /b/{id} false',
    'OPTIONS /metrics true',
    'POST /a false',
  ])
  t.equal(innerCalls, outerCalls)
  t.ok(
    seen.every((i) => Object.isFrozen(i)),
    'route info is frozen',
  )

  for (const path of ['/a', '/b/1', '/metrics', '/nope']) await answer(router, ctxFor('GET', path))
  await answer(router, ctxFor('PUT', '/a'))
  t.equal(outerCalls, 13, 'no layer is applied per request')
})

t.test('the token a path needs holds for every pipeline at it, and none elsewhere', async (t) => {
  const seen: RouteInfo[] = []
  const recording: Layer = (next, info) => {
    seen.push(info)
    return next
  }
  createRouter(
    [
      { ...route('GET', '/metrics'), auth: 'metrics' },
      { ...route('POST', '/api/things/{id}'), auth: 'api' },
      { ...route('GET', '/api/things/{id}'), auth: 'api' },
      route('DELETE', '/api/things/{id}'),
      route('GET', '/open'),
    ],
    [recording],
  )
  t.same(seen.map((i) => `${i.method} ${i.template} ${i.auth}`).sort(), [
    '* /api/things/{id} api',
    '* /metrics metrics',
    '* /open none',
    `* ${UNMATCHED} none`,
    'DELETE /api/things/{id} api',
    'GET /api/things/{id} api',
    'GET /metrics metrics',
    'GET /open none',
    'HEAD /api/things/{id} api',
    'HEAD /metrics metrics',
    'HEAD /open none',
    'OPTIONS /api/things/{id} api',
    'OPTIONS /metrics metrics',
    'OPTIONS /open none',
    'POST /api/things/{id} api',
  ])
})

t.test('layers wrap the endpoint outermost first', async (t) => {
  const order: string[] = []
  const named =
    (name: string): Layer =>
    (next) =>
    async (ctx) => {
      order.push(`${name} in`)
      const reply = await next(ctx)
      order.push(`${name} out`)
      return reply
    }
  const router = createRouter(
    [
      {
        method: 'GET',
        path: '/',
        handler: () => {
          order.push('endpoint')
          return { kind: 'json', status: 200 }
        },
      },
    ],
    [named('outer'), named('inner')],
  )
  await answer(router, ctxFor('GET', '/'))
  t.same(order, ['outer in', 'inner in', 'endpoint', 'inner out', 'outer out'])
})

t.test('an endpoint that throws an Error yields a 500 problem carrying the error', async (t) => {
  const boom = new Error('database password is hunter2')
  const router = createRouter(
    [
      {
        method: 'GET',
        path: '/',
        handler: () => {
          throw boom
        },
      },
    ],
    [],
  )
  const reply = asProblem(await answer(router, ctxFor('GET', '/')))
  t.equal(reply.status, 500)
  t.equal(reply.error, boom)
  t.match(reply.problem, { status: 500, type: 'urn:svc:problem:internal-error' })
  t.notMatch(JSON.stringify(reply.problem), /hunter2/, 'the problem body does not leak the message')
})

t.test('an endpoint whose promise rejects yields a 500 problem carrying the error', async (t) => {
  const boom = new Error('late failure')
  const router = createRouter(
    [
      {
        method: 'GET',
        path: '/',
        handler: async () => {
          throw boom
        },
      },
    ],
    [],
  )
  const reply = asProblem(await answer(router, ctxFor('GET', '/')))
  t.equal(reply.status, 500)
  t.equal(reply.error, boom)
})

t.test('a layer sees a problem reply, never an exception, when the endpoint throws', async (t) => {
  const statuses: number[] = []
  const observing: Layer = (next) => async (ctx) => {
    const reply = await next(ctx)
    statuses.push(reply.status)
    return reply
  }
  const router = createRouter(
    [
      {
        method: 'GET',
        path: '/',
        handler: () => {
          throw new TypeError('bad')
        },
      },
    ],
    [observing],
  )
  await answer(router, ctxFor('GET', '/'))
  t.same(statuses, [500])
})

t.test('a thrown HttpError yields its status, code and headers without an error member', async (t) => {
  const router = createRouter(
    [
      {
        method: 'GET',
        path: '/',
        handler: () => {
          throw new HttpError(503, 'NOT_READY', 'Warming up', { headers: { 'retry-after': '5' }, extra: { phase: 'load' } })
        },
      },
    ],
    [],
  )
  const reply = asProblem(await answer(router, ctxFor('GET', '/')))
  t.equal(reply.status, 503)
  t.same(reply.headers, { 'retry-after': '5' })
  t.same(reply.problem, { type: 'urn:svc:problem:not-ready', title: 'Service Unavailable', status: 503, detail: 'Warming up', phase: 'load' })
  t.notOk('error' in reply)
})

t.test('a rejected HttpError yields its status without an error member', async (t) => {
  const router = createRouter([{ method: 'GET', path: '/', handler: () => Promise.reject(new HttpError(404, 'MODEL_NOT_FOUND', 'Model x not found')) }], [])
  const reply = asProblem(await answer(router, ctxFor('GET', '/')))
  t.equal(reply.status, 404)
  t.notOk('error' in reply)
})

t.test('a synchronous endpoint reply is returned without a promise', async (t) => {
  const reply: Reply = { kind: 'text', status: 200, text: 'ok' }
  const router = createRouter([{ method: 'GET', path: '/', handler: () => reply }], [])
  const ctx = ctxFor('GET', '/')
  t.equal(handlerFor(router.find(ctx), 'GET')(ctx), reply)
})

t.test('a rejection set before the pipeline runs short-circuits the endpoint', async (t) => {
  let calls = 0
  const router = createRouter(
    [
      {
        method: 'POST',
        path: '/upload',
        handler: () => {
          calls++
          return { kind: 'json', status: 201 }
        },
      },
    ],
    [],
  )
  const ctx = ctxFor('POST', '/upload')
  ctx.rejection = new HttpError(413, 'PAYLOAD_TOO_LARGE', 'Too big')
  const reply = asProblem(await answer(router, ctx))
  t.equal(reply.status, 413)
  t.match(reply.problem, { type: 'urn:svc:problem:payload-too-large' })
  t.equal(calls, 0)
})

const INVALID: readonly Readonly<{ name: string; defs: readonly RouteDef[]; message: RegExp }>[] = [
  { name: 'a method and path declared twice', defs: [route('GET', '/a'), route('GET', '/a')], message: /GET \/a is declared twice/ },
  { name: 'a template declared twice for one method', defs: [route('GET', '/a/{x}'), route('GET', '/a/{x}')], message: /declared twice/ },
  { name: 'a path without a leading slash', defs: [route('GET', 'a')], message: /starts with "\/"/ },
  { name: 'an empty path', defs: [route('GET', '')], message: /starts with "\/"/ },
  { name: 'an unsupported method', defs: [route('PROPFIND' as Method, '/a')], message: /unsupported method PROPFIND/ },
  { name: 'a lower-case method', defs: [route('get' as Method, '/a')], message: /unsupported method get/ },
  { name: 'two parameters in one segment', defs: [route('GET', '/a/{a}{b}')], message: /fills a whole segment/ },
  { name: 'a parameter after text in one segment', defs: [route('GET', '/a/x{a}')], message: /fills a whole segment/ },
  { name: 'a parameter before text in one segment', defs: [route('GET', '/a/{a}.json')], message: /fills a whole segment/ },
  { name: 'an unclosed parameter', defs: [route('GET', '/a/{a')], message: /fills a whole segment/ },
  { name: 'a parameter name that is not an identifier', defs: [route('GET', '/a/{1a}')], message: /fills a whole segment/ },
  { name: 'a parameter name used twice', defs: [route('GET', '/a/{id}/b/{id}')], message: /parameter id appears twice/ },
  {
    name: 'two tokens at one path',
    defs: [{ ...route('GET', '/a'), auth: 'api' }, route('PUT', '/a'), { ...route('POST', '/a'), auth: 'metrics' }],
    message: /route \/a: POST needs the metrics token, GET the api one/,
  },
]

for (const { name, defs, message } of INVALID) {
  t.test(`registration rejects ${name} with a TypeError`, async (t) => {
    t.throws(() => createRouter(defs, []), { name: 'TypeError', message })
  })
}

t.test('the same path may be declared for different methods', async (t) => {
  t.doesNotThrow(() => createRouter([route('GET', '/a/{x}'), route('PUT', '/a/{x}')], []))
})

t.test('templates lists each declared path once, in declaration order', async (t) => {
  t.same(createRouter(ROUTES, []).templates, [
    '/',
    '/health',
    '/items',
    '/users/me',
    '/users/{id}',
    '/users/{id}/posts/{postId}',
    '/explicit-head',
    '/explicit-options',
  ])
})

t.test('a router without routes answers 404 for everything', async (t) => {
  const router = createRouter([], [])
  t.same(router.templates, [])
  t.equal((await answer(router, ctxFor('GET', '/'))).status, 404)
})

t.test('the first declared template wins when two fit', async (t) => {
  const router = createRouter([route('GET', '/a/{x}'), route('GET', '/{y}/b')], [])
  const ctx = ctxFor('GET', '/a/b')
  t.equal(router.find(ctx).template, '/a/{x}')
  t.same(ctx.params, { x: 'b' })
})

t.test('params of a template that failed later do not leak into the match', async (t) => {
  const router = createRouter([route('GET', '/{x}/one'), route('GET', '/{y}/two')], [])
  const ctx = ctxFor('GET', '/v/two')
  t.equal(router.find(ctx).template, '/{y}/two')
  t.same(ctx.params, { y: 'v' })
})

t.test('the methods whose route takes a JSON body are listed per path, for the server to read it first', async (t) => {
  const handler = (): Reply => ({ kind: 'json', status: 204 })
  const router = createRouter(
    [
      { method: 'POST', path: '/in', body: 'json', handler },
      { method: 'PUT', path: '/in', handler },
      { method: 'GET', path: '/in', handler },
      { method: 'POST', path: '/in/{id}', body: 'json', handler },
    ],
    [],
  )
  t.same([...router.find(ctxFor('POST', '/in')).bodyMethods], ['POST'], 'only the route that says so; HEAD, OPTIONS and 405 never')
  t.same([...router.find(ctxFor('POST', '/in/7')).bodyMethods], ['POST'], 'on a path with parameters too')
  t.equal(router.find(ctxFor('POST', '/nowhere')).bodyMethods.size, 0, 'the 404 pipeline reads nothing')
})
