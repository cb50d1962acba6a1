// The OpenAPI builder as a pure function: what it adds to every operation, and what it refuses.
import t from 'tap'
import { buildDocument, OPENAPI_VERSION, type DocumentOptions } from '../../lib/openapi/document.js'
import { openApiRoute, OPENAPI_DOC, OPENAPI_PATH } from '../../lib/openapi/endpoint.js'
import { json, problem, problemExample, ref, type RouteDoc } from '../../lib/core/route-doc.js'
import type { RouteAuth, RouteDef } from '../../lib/core/pipeline.js'
import { makeCtx } from '../fixtures/ctx.js'

const INFO = { title: 'svc', version: '1.2.3' }
const none = () => ({ kind: 'json' as const, status: 204 })

const doc = (operationId: string, extra: Partial<RouteDoc> = {}): RouteDoc => ({
  operationId,
  summary: `The ${operationId} operation`,
  tags: ['service'],
  responses: { '200': json('It', { type: 'object' }) },
  ...extra,
})

const build = (routes: DocumentOptions['routes'], security?: DocumentOptions['security']) =>
  buildDocument(security === undefined ? { routes, info: INFO } : { routes, info: INFO, security }) as any

t.test('a route table becomes an OpenAPI 3.1 document with what every operation shares', async (t) => {
  const document = build([
    { method: 'GET', path: '/things', doc: doc('listThings', { description: 'All of them' }) },
    {
      method: 'GET',
      path: '/things/{id}',
      doc: doc('getThing', {
        tags: ['models', 'service'],
        parameters: [{ name: 'id', in: 'path', description: 'Which', required: true, schema: { type: 'string' } }],
        responses: { '200': json('It', ref('Thing')), '404': problem('None', { none: problemExample('No thing', 404, 'NOT_FOUND', 'No thing', '/things/x') }) },
        schemas: { Thing: { type: 'object' } },
      }),
    },
    {
      method: 'POST',
      path: '/things/{id}',
      doc: doc('replaceThing', {
        parameters: [{ name: 'id', in: 'path', description: 'Which', required: true, schema: { type: 'string' } }],
        responses: { '400': json('Bad', { type: 'object' }) },
      }),
    },
  ])
  t.equal(document.openapi, OPENAPI_VERSION)
  t.same(document.info, { title: 'svc', version: '1.2.3', license: { name: 'MIT', identifier: 'MIT' } })
  t.same(
    document.servers,
    [{ url: '.', description: 'This service, where this document was fetched from (path prefix included)' }],
    'relative: wherever it was fetched from, path prefix included',
  )
  t.same(
    document.tags.map((tag: any) => tag.name),
    ['service', 'models'],
    'tags in their fixed order, only those used',
  )
  t.same(Object.keys(document.paths), ['/things', '/things/{id}'])
  t.same(Object.keys(document.paths['/things/{id}']), ['get', 'post'])

  const list = document.paths['/things'].get
  t.match(list, { operationId: 'listThings', summary: 'The listThings operation', description: 'All of them', tags: ['service'] })
  t.notOk('parameters' in list)
  t.same(list.responses['200'].headers, { 'X-Request-ID': { $ref: '#/components/headers/X-Request-ID' } })
  t.same(list.responses['500'], { $ref: '#/components/responses/InternalError' }, 'every operation can fail')
  t.same(list.responses['4XX'], { $ref: '#/components/responses/RequestHeadRefused' }, 'every operation can refuse a request head')
  t.notOk('400' in list.responses, 'no path parameter, no 400 of its own')
  t.notOk('503' in list.responses, 'no shedding, no 503')
  t.same(list.security, [], 'open, and says so')

  const get = document.paths['/things/{id}'].get
  t.notOk('description' in get)
  t.same(get.responses['400'], { $ref: '#/components/responses/InvalidPathParameter' }, 'a path parameter may be malformed')
  t.same(get.responses['404'].content['application/problem+json'].schema, { $ref: '#/components/schemas/Problem' })
  t.same(document.components.schemas.Thing, { type: 'object' })
  t.ok(document.components.schemas.Problem, 'the problem schema is always there')
  t.same(Object.keys(document.components.headers), ['X-Request-ID'], 'only the headers something refers to')
  t.same(
    Object.keys(document.components.responses),
    ['InternalError', 'InvalidPathParameter', 'RequestHeadRefused'],
    'only the responses an operation refers to',
  )
  t.same(document.components.responses.InternalError.headers, { 'X-Request-ID': { $ref: '#/components/headers/X-Request-ID' } })
  t.notOk('securitySchemes' in document.components)
  t.same(document.paths['/things/{id}'].post.responses['400'].description, 'Bad', "a route's own 400 stays")
})

t.test('the document is frozen, and the route descriptions it came from are not', async (t) => {
  const own = doc('x')
  const document = build([{ method: 'GET', path: '/x', doc: own }], undefined)
  t.ok(Object.isFrozen(document))
  t.ok(Object.isFrozen(document.paths['/x'].get.responses['200'].content['application/json'].schema))
  t.notOk(Object.isFrozen(own))
})

t.test('the info description is kept when given', async (t) => {
  const document = buildDocument({ routes: [], info: { ...INFO, description: 'About' } }) as any
  t.equal(document.info.description, 'About')
  t.same(document.paths, {})
})

t.test('tokens: a route is guarded by the token it declares, when that token is configured, each with a 401', async (t) => {
  const declared: ReadonlyArray<readonly [string, RouteAuth | undefined]> = [
    ['/api/v1/models', 'api'],
    ['/v2', 'api'],
    ['/v2/health/live', 'api'],
    ['/metrics', 'metrics'],
    ['/health', undefined],
    ['/api/insights', undefined],
    ['/v2x', undefined],
  ]
  const routes = declared.map(([path, auth], i) => ({ method: 'GET' as const, path, doc: doc(`op${i}`), ...(auth === undefined ? {} : { auth }) }))
  const guarded = (document: any) => Object.entries(document.paths).map(([path, ops]: [string, any]) => [path, ops.get.security, '401' in ops.get.responses])

  const both = build(routes, { api: true, metrics: true })
  t.same(guarded(both), [
    ['/api/v1/models', [{ apiToken: [] }], true],
    ['/v2', [{ apiToken: [] }], true],
    ['/v2/health/live', [{ apiToken: [] }], true],
    ['/metrics', [{ metricsToken: [] }], true],
    ['/health', [], false],
    ['/api/insights', [], false],
    ['/v2x', [], false],
  ])
  t.same(Object.keys(both.components.securitySchemes), ['apiToken', 'metricsToken'])
  t.match(both.components.securitySchemes.apiToken, { type: 'http', scheme: 'bearer' })
  t.same(both.components.responses.Unauthorized.headers, {
    'X-Request-ID': { $ref: '#/components/headers/X-Request-ID' },
    'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' },
  })
  t.ok('WWW-Authenticate' in both.components.headers, 'a header only a shared response refers to is there too')

  const metricsOnly = build(routes, { metrics: true })
  t.same(Object.keys(metricsOnly.components.securitySchemes), ['metricsToken'])
  t.same(
    guarded(metricsOnly)
      .filter(([, security]) => (security as unknown[]).length > 0)
      .map(([path]) => path),
    ['/metrics'],
  )
  const open = build(routes, {})
  t.notOk('securitySchemes' in open.components, 'no tokens configured, no scheme')
  t.notOk('Unauthorized' in open.components.responses, 'nor a 401 that nothing answers')
  t.notOk('WWW-Authenticate' in open.components.headers)
})

t.test('load shedding: every route but the operational ones may answer 503 OVERLOADED, with Retry-After', async (t) => {
  const unavailable = problem(
    'Not now',
    { busy: problemExample('Busy', 503, 'BUSY', 'Busy', '/things/x') },
    { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
  )
  const id = { name: 'id', in: 'path' as const, description: 'Which', required: true, schema: { type: 'string' } }
  const routes: DocumentOptions['routes'] = [
    { method: 'GET', path: '/plain', doc: doc('plain') },
    { method: 'GET', path: '/probe', isOperational: true, doc: doc('probe') },
    { method: 'GET', path: '/things/{id}', doc: doc('thing', { parameters: [{ ...id, example: 'x1' }], responses: { '503': problem('Not ready', {}) } }) },
    { method: 'GET', path: '/other/{id}', doc: doc('other', { parameters: [id], responses: { '503': unavailable } }) },
  ]
  const document = buildDocument({ routes, info: INFO, isShedding: true }) as any
  t.same(document.paths['/plain'].get.responses['503'], { $ref: '#/components/responses/Overloaded' })
  t.notOk('503' in document.paths['/probe'].get.responses, 'an operational route is never shed')
  t.match(document.components.responses.Overloaded, {
    headers: { 'X-Request-ID': {}, 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
    content: { 'application/problem+json': { examples: { inFlight: { value: { type: 'urn:svc:problem:overloaded', reason: 'max_in_flight' } } } } },
  })
  const own = document.paths['/things/{id}'].get.responses['503']
  t.equal(own.description, 'Not ready; or, under load shedding, OVERLOADED (with Retry-After)', "a route's own 503 says both")
  t.same(Object.keys(own.headers), ['X-Request-ID', 'Retry-After'])
  t.notOk(own.headers['Retry-After'].required, 'sent with OVERLOADED only')
  t.match(
    own.content['application/problem+json'].examples.overloaded.value,
    { type: 'urn:svc:problem:overloaded', instance: '/things/x1' },
    'at a path a client would ask for',
  )
  const other = document.paths['/other/{id}'].get.responses['503']
  t.same(Object.keys(other.content['application/problem+json'].examples), ['busy', 'overloaded'])
  t.same(other.headers['Retry-After'], { $ref: '#/components/headers/Retry-After' }, 'a Retry-After the route always sends stays')
  t.equal(other.content['application/problem+json'].examples.overloaded.value.instance, '/other/{id}', 'no example for the parameter: the template')
  t.notOk('503' in build(routes).paths['/plain'].get.responses, 'no shedding configured, no 503')
  t.notOk('Overloaded' in build(routes).components.responses)

  const text = { description: 'Down', content: { 'text/plain': { schema: { type: 'string' } } } }
  const bare = [
    { method: 'GET' as const, path: '/text', doc: doc('text', { responses: { '503': text } }) },
    { method: 'GET' as const, path: '/empty', doc: doc('empty', { responses: { '503': { description: 'Down' } } }) },
    { method: 'GET' as const, path: '/probe', isOperational: true, doc: doc('probe', { responses: { '503': text } }) },
  ]
  t.doesNotThrow(() => buildDocument({ routes: bare, info: INFO }), 'without shedding, any 503 will do')
  t.throws(
    () => buildDocument({ routes: bare, info: INFO, isShedding: true }),
    {
      message: [
        'the API description is incomplete:',
        "  GET /text: its 503 is no problem+json, so load shedding's OVERLOADED cannot be described with it",
        "  GET /empty: its 503 is no problem+json, so load shedding's OVERLOADED cannot be described with it",
      ].join('\n'),
    },
    'a 503 shedding would share must be a problem',
  )
})

t.test('a route without a description fails the build, named with every other problem at once', async (t) => {
  const routes: DocumentOptions['routes'] = [
    { method: 'GET', path: '/documented', doc: doc('same') },
    { method: 'GET', path: '/bare' },
    { method: 'POST', path: '/bare' },
    { method: 'GET', path: '/items/{id}', doc: doc('same', { parameters: [{ name: 'other', in: 'path', description: 'x', required: true, schema: {} }] }) },
    { method: 'GET', path: '/empty', doc: doc('empty', { responses: {} }) },
    { method: 'GET', path: '/dangling', doc: doc('dangling', { responses: { '200': json('It', ref('Nowhere')) } }) },
    { method: 'GET', path: '/odd', doc: doc('odd', { responses: { '200': json('It', { $ref: '#/openapi/deeper' }) } }) },
    { method: 'GET', path: '/one', doc: doc('one', { schemas: { Twice: { type: 'string' } } }) },
    { method: 'GET', path: '/two', doc: doc('two', { schemas: { Twice: { type: 'number' } } }) },
    { method: 'GET', path: '/three', doc: doc('three', { schemas: { Twice: { type: 'string' } } }) },
  ]
  const error = t.throws(() => build(routes)) as Error
  t.type(error, TypeError)
  t.equal(
    error.message,
    [
      'the API description is incomplete:',
      '  GET /bare has no description (RouteDef.doc)',
      '  POST /bare has no description (RouteDef.doc)',
      '  GET /items/{id}: path parameter id is not described',
      '  GET /items/{id}: described path parameter other is not in the path',
      '  GET /items/{id}: operationId same is used twice',
      '  GET /empty: no response is described',
      '  GET /two: schema Twice differs from another of that name',
      '  GET /three: schema Twice differs from another of that name',
      '  $ref #/components/schemas/Nowhere points at nothing',
      '  $ref #/openapi/deeper points at nothing',
    ].join('\n'),
  )
})

t.test('a reference into a path with an escaped slash resolves', async (t) => {
  const routes: DocumentOptions['routes'] = [
    { method: 'GET', path: '/a/b', doc: doc('ab') },
    {
      method: 'GET',
      path: '/c',
      doc: doc('c', { responses: { '200': json('It', { $ref: '#/paths/~1a~1b/get/responses/200/content/application~1json/schema' }) } }),
    },
  ]
  t.ok(build(routes).paths['/c'])
})

t.test('GET /openapi.json describes the routes given and itself, as one pre-serialised body', async (t) => {
  const described: RouteDef = { method: 'GET', path: '/x', handler: none, doc: doc('x') }
  const route = openApiRoute({ routes: [described], info: INFO })
  t.match(route, { method: 'GET', path: OPENAPI_PATH, doc: OPENAPI_DOC })
  const reply = (await route.handler(makeCtx('GET', OPENAPI_PATH))) as any
  t.equal(reply.status, 200)
  t.equal(reply.headers['content-type'], 'application/json')
  const document = JSON.parse(reply.text)
  t.same(Object.keys(document.paths), ['/x', OPENAPI_PATH])
  t.equal(document.paths[OPENAPI_PATH].get.operationId, 'getOpenApi')
  t.equal(await route.handler(makeCtx('GET', OPENAPI_PATH)), reply, 'the same reply every time')
  const undocumented: RouteDef = { method: 'GET', path: '/y', handler: none }
  t.throws(() => openApiRoute({ routes: [undocumented], info: INFO }), /GET \/y has no description/)
})
