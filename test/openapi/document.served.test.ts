// GET /openapi.json over a real socket: it validates against the OpenAPI 3.1 schema, covers every
// route the service has, its examples fit its schemas, and the service's real answers fit it too.
import { Validator } from '@seriousme/openapi-schema-validator'
import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Env } from '../../lib/config/config.js'
import type { RouteDef } from '../../lib/core/pipeline.js'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { exchange } from '../fixtures/raw-http.js'
import { testRoutes } from '../fixtures/routes.js'
import { CONFIGURATIONS, describedResponse, examplesOf, type Json, pointer, requiredHeaders, schemaChecker } from '../fixtures/openapi.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { fakeCoingecko } from '../fixtures/rate-upstreams.js'

const ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 6.7, sepal_width: 3.0, petal_length: 5.2, petal_width: 2.3 },
]
const MATRIX = [{ name: 'x', datatype: 'FP64', shape: [2, 4], data: ROWS.map((row) => Object.values(row)) }]
const JSON_BODY = { 'content-type': 'application/json' }

/** One real request per documented answer worth checking: [method, template, path, init?]. */
const CALLS: ReadonlyArray<readonly [string, string, string, RequestInit?]> = [
  ['GET', '/', '/'],
  ['GET', '/openapi.json', '/openapi.json'],
  ['GET', '/metrics', '/metrics'],
  ['GET', '/health', '/health'],
  ['GET', '/ready', '/ready'],
  ['GET', '/startup', '/startup'],
  ['GET', '/api/external-data', '/api/external-data?currency=eur'],
  ['GET', '/api/external-data', '/api/external-data?currency=x1'],
  ['GET', '/api/external-data', '/api/external-data?currency=XYZ'],
  ['GET', '/api/insights', '/api/insights?count=2&interval=0'],
  ['GET', '/api/insights', '/api/insights?count=21'],
  ['POST', '/api/v1/predict', '/api/v1/predict', { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ model: 'iris', instances: ROWS }) }],
  ['POST', '/api/v1/predict', '/api/v1/predict', { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ model: 'nope', instances: ROWS }) }],
  ['POST', '/api/v1/predict', '/api/v1/predict', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }],
  [
    'POST',
    '/api/v1/feedback',
    '/api/v1/feedback',
    { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ feedback: [{ token: 'x', truth: 'setosa' }] }) },
  ],
  ['POST', '/api/v1/feedback', '/api/v1/feedback', { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ feedback: [] }) }],
  ['GET', '/api/v1/models', '/api/v1/models'],
  ['GET', '/api/v1/models/{name}', '/api/v1/models/iris'],
  ['GET', '/api/v1/models/{name}', '/api/v1/models/cars'],
  ['GET', '/api/v1/models/{name}', '/api/v1/models/nope'],
  ['GET', '/api/v1/models/{name}', '/api/v1/models/%E0%A4%A'],
  ['POST', '/v2/models/{name}/infer', '/v2/models/iris/infer', { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ inputs: MATRIX }) }],
  [
    'POST',
    '/v2/models/{name}/infer',
    '/v2/models/iris/infer',
    { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ inputs: [{ ...MATRIX[0], shape: [1, 3] }] }) },
  ],
  [
    'POST',
    '/v2/models/{name}/infer',
    '/v2/models/iris/infer',
    { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ inputs: MATRIX, outputs: [{ name: 'probabilities' }] }) },
  ],
  [
    'POST',
    '/v2/models/{name}/infer',
    '/v2/models/iris/infer',
    { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ inputs: MATRIX, outputs: [{ name: 'colour' }] }) },
  ],
  [
    'POST',
    '/v2/models/{name}/versions/{version}/infer',
    '/v2/models/iris/versions/1/infer',
    { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ id: 'a', inputs: MATRIX }) },
  ],
  [
    'POST',
    '/v2/models/{name}/versions/{version}/infer',
    '/v2/models/iris/versions/3/infer',
    { method: 'POST', headers: JSON_BODY, body: JSON.stringify({ inputs: MATRIX }) },
  ],
  ['GET', '/v2/models/{name}', '/v2/models/cars'],
  ['GET', '/v2/models/{name}/versions/{version}', '/v2/models/iris/versions/1'],
  ['GET', '/v2/models/{name}/ready', '/v2/models/iris/ready'],
  ['GET', '/v2/models/{name}/versions/{version}/ready', '/v2/models/iris/versions/1/ready'],
  ['GET', '/v2/health/live', '/v2/health/live'],
  ['GET', '/v2/health/ready', '/v2/health/ready'],
  ['GET', '/v2', '/v2'],
  ['GET', '/docs', '/docs'],
  ['GET', '/docs/{asset}', '/docs/swagger-ui.css'],
  ['GET', '/docs/{asset}', '/docs/nope.js'],
  ['GET', '/demo', '/demo'],
  ['GET', '/demo/{asset}', '/demo/demo.js'],
]

const setup = async (t: Test, env: Env = {}, routes: readonly RouteDef[] = []) => {
  const upstream = await fakeCoingecko(t)
  const running = await startApp(
    t,
    { SVC_RATE_PROVIDERS: 'coingecko', SVC_RATE_COINGECKO_URL: upstream.url, SVC_ENVIRONMENT: 'stage', SVC_SHUTDOWN_DELAY_MS: '0', ...env },
    routes,
  )
  const response = await fetch(`${running.base}/openapi.json`)
  const document = (await response.json()) as Json
  return { ...running, response, document }
}

/** The document of every configuration it can be built in, by name. */
const everyDocument = async (t: Test): Promise<Array<readonly [string, Json]>> => {
  const documents: Array<readonly [string, Json]> = []
  for (const [name, env] of CONFIGURATIONS) documents.push([name, (await setup(t, env)).document])
  return documents
}

t.test('GET /openapi.json validates against the OpenAPI 3.1 schema, in every configuration', async (t) => {
  const { document, response } = await setup(t)
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'application/json')
  t.match(document['info'], { title: 'svc', version: PACKAGE_VERSION })
  t.same(
    document['servers'],
    [{ url: '.', description: 'This service, where this document was fetched from (path prefix included)' }],
    'relative: wherever it was fetched from',
  )
  for (const [name, each] of await everyDocument(t)) {
    const validator = new Validator()
    const result = await validator.validate(each)
    t.same(result.errors, undefined, `${name}: no schema errors`)
    t.equal(result.valid, true, name)
    t.equal(validator.version, '3.1')
  }
})

t.test('every route the service has is described, and nothing else', async (t) => {
  const { document, base } = await setup(t)
  const root = (await (await fetch(base)).json()) as { endpoints: Array<{ method: string; path: string }> }
  const routes = root.endpoints.map(({ method, path }) => `${method} ${path}`).sort()
  const described = Object.entries(document['paths'] as Json)
    .flatMap(([path, operations]) => Object.keys(operations as Json).map((method) => `${method.toUpperCase()} ${path}`))
    .sort()
  t.same(described, routes)
  t.ok(routes.includes('GET /docs/{asset}') && routes.includes('GET /openapi.json'), 'the pages and the description itself included')
})

t.test('every example of every operation and component fits its schema, closed as Redocly reads it, in every configuration', async (t) => {
  for (const [name, document] of await everyDocument(t)) {
    const check = schemaChecker(document, { isClosed: true })
    const examples = examplesOf(document)
    const misfits = examples.flatMap(({ at, value, what }) => {
      const error = check(at, value)
      return error === undefined ? [] : [`${what}: ${error}`]
    })
    t.same(misfits, [], `${name}: ${examples.length} examples checked`)
    t.ok(examples.length > 90, `${name}: ${examples.length} examples found`)
  }
  const { document } = await setup(t)
  const examples = examplesOf(document)
  for (const kind of ['parameters', 'requestBody', 'responses', 'components/schemas', 'components/headers', 'components/responses'])
    t.ok(
      examples.some(({ what }) => what.startsWith(kind.replace('/', ' ')) || what.includes(` ${kind} `)),
      `examples under ${kind} are found`,
    )
  // The checker refuses what does not fit, references followed, and, closed, a member no schema names.
  const check = schemaChecker(document)
  const closed = schemaChecker(document, { isClosed: true })
  t.match(check(pointer('components', 'schemas', 'Rate'), { symbol: 'ETH' }), /must/)
  const detail = {
    name: 'iris',
    versions: ['1'],
    version_states: [{ version: '1', state: 'READY', reason: null }],
    default_version: '1',
    platform: 'svc',
    state: 'READY',
    reason: null,
    rollout: { canary: null, shadow: null },
    rollout_error: null,
  }
  t.equal(check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, drift: { status: 'disabled' } }), undefined)
  t.match(
    check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, drift: { status: 'bogus' } }),
    /drift\/status must be equal to one of the allowed values/,
  )
  t.match(check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, state: 'MAYBE' }), /state must be equal to one of the allowed values/)
  t.equal(check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, colour: 'red' }), undefined, 'open: any other member passes')
  t.match(closed(pointer('components', 'schemas', 'ModelDetail'), { ...detail, colour: 'red' }), /unevaluated properties/, 'closed: refused')
  t.equal(
    closed(pointer('components', 'schemas', 'ModelDetail'), { ...detail, version: '1', drift: { status: 'disabled' } }),
    undefined,
    'allOf members stay open',
  )
  t.match(closed(pointer('components', 'schemas', 'ModelDetail'), { ...detail, drift: { status: 'ok', odd: 1 } }), /unevaluated properties/, 'nested too')
  const problem = { type: 'urn:svc:problem:invalid-host', title: 'Bad Request', status: 400, detail: 'x', instance: '/', request_id: EXAMPLE_ID }
  const refused = pointer('components', 'responses', 'RequestHeadRefused', 'content', 'application/problem+json', 'schema')
  t.equal(closed(refused, problem), undefined)
  t.match(
    closed(refused, { ...problem, type: 'urn:svc:problem:model-not-found' }),
    /allowed values/,
    'the 4XX range holds the refusals of the request head only',
  )
  t.match(closed(refused, { ...problem, surprise: true }), /unevaluated properties/)
})

const EXAMPLE_ID = '5a0c2f4e-8d1b-4c3a-9e6f-7b2d1a0c9e8f'

type Answer = Readonly<{ status: number; header: (name: string) => string | undefined; text: string }>

/** Checks one real answer against the document: described, its required headers sent, its body fitting the schema of its media type. */
const answerChecker = (t: Test, document: Json) => {
  const check = schemaChecker(document, { isClosed: true })
  return (method: string, template: string, what: string, { status, header, text }: Answer): boolean => {
    const { tokens, response } = describedResponse(document, method, template, status)
    if (response === undefined) {
      t.fail(`${what} is not described`)
      return false
    }
    for (const name of requiredHeaders(document, response)) t.ok(header(name) !== undefined, `${what} sends ${name}`)
    const type = header('content-type') as string
    const media = response['content']?.[type] as Json | undefined
    if (media === undefined) {
      t.fail(`${what}: ${type} is not described`)
      return false
    }
    const at = pointer(...tokens, 'content', type, 'schema')
    if (type.startsWith('text/event-stream')) {
      const events = text.split('\n\n').filter(Boolean)
      t.equal(events.length, 2, `${what}: two events`)
      for (const event of events) {
        t.equal(check(at, { data: event.replace(/^data: /, '') }), undefined, `${what}: an event as the schema says`)
        t.equal(check(`${at}/properties/data/contentSchema`, JSON.parse(event.replace(/^data: /, ''))), undefined, `${what}: its data an InsightEvent`)
      }
    } else {
      t.equal(check(at, /json/.test(type) ? JSON.parse(text) : text), undefined, `${what}: the body fits its schema`)
    }
    return true
  }
}

const fetched = async (response: Response): Promise<Answer> => {
  const text = await response.text()
  return { status: response.status, header: (name) => response.headers.get(name) ?? undefined, text }
}

t.test("the service's real answers fit the document: status, headers, media type and body", async (t) => {
  // Feedback on, so the answers carry their tokens and the feedback route scores.
  const { document, base } = await setup(t, { SVC_FEEDBACK_SECRET: 'a-secret-of-the-openapi-test' })
  const fits = answerChecker(t, document)
  const exercised = new Set<string>()
  for (const [method, template, path, init] of CALLS) {
    const answer = await fetched(await fetch(base + path, init))
    if (fits(method, template, `${method} ${path} → ${answer.status}`, answer)) exercised.add(`${method} ${template}`)
  }
  const operations = Object.entries(document['paths'] as Json).flatMap(([path, ops]) => Object.keys(ops as Json).map((m) => `${m.toUpperCase()} ${path}`))
  t.same(
    operations.filter((op) => !exercised.has(op)),
    [],
    'every operation answered for real at least once',
  )
})

t.test('what the server refuses in a request head, on any route, fits the 4XX range or the code the route declares', async (t) => {
  const { document, base } = await setup(t)
  const fits = answerChecker(t, document)
  const port = Number(new URL(base).port)
  const raw = async (method: string, template: string, bytes: string, status: number): Promise<void> => {
    const line = bytes.slice(0, bytes.indexOf('\r\n'))
    const [response] = (await exchange(port, bytes)).responses
    if (response === undefined) return void t.fail(`${line}: no answer`)
    t.equal(response.status, status, line)
    fits(method, template, `${line} → ${response.status}`, {
      status: response.status,
      header: (name) => response.headers[name.toLowerCase()],
      text: response.body.toString('utf8'),
    })
  }
  await raw('GET', '/health', 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n', 400)
  await raw('GET', '/api/v1/models', 'GET /api/v1/models HTTP/1.1\r\nHost: x\r\nExpect: later\r\nConnection: close\r\n\r\n', 417)
  await raw('GET', '/ready', 'GET /ready HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nConnection: close\r\n\r\n', 413)
  await raw('GET', '/docs/{asset}', 'GET /docs/docs.js HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n', 400)
  await raw('POST', '/api/v1/predict', 'POST /api/v1/predict HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nConnection: close\r\n\r\n', 413)
  const long = await fetched(await fetch(`${base}/openapi.json?pad=${'a'.repeat(9000)}`))
  t.equal(long.status, 414)
  fits('GET', '/openapi.json', 'GET /openapi.json?pad=… → 414', long)
})

t.test('with tokens and load shedding, the refusals they add fit the document', async (t) => {
  const token = 'client-token-7f3a9c1e5b'
  const scraper = 'scraper-token-2d8e4f6a0c'
  const { app, base, document } = await setup(t, { SVC_API_TOKENS: token, SVC_METRICS_TOKEN: scraper, SVC_MAX_IN_FLIGHT: '1' }, testRoutes(3000))
  const fits = answerChecker(t, document)
  const bearer = { authorization: `Bearer ${token}` }
  const call = async (method: string, template: string, path: string, init: RequestInit, status: number): Promise<void> => {
    const answer = await fetched(await fetch(base + path, init))
    t.equal(answer.status, status, `${method} ${path}`)
    fits(method, template, `${method} ${path} → ${answer.status}`, answer)
  }
  await call('GET', '/api/v1/models', '/api/v1/models', {}, 401)
  await call('GET', '/v2/models/{name}', '/v2/models/iris', { headers: { authorization: 'Bearer not-a-token-0123456789' } }, 401)
  await call('GET', '/metrics', '/metrics', { headers: bearer }, 401)
  // A slow request holds the only slot: every other request but the operational ones is shed.
  const held = fetch(`${base}/test/slow`)
  const inFlight = async (): Promise<number> => sample((await app.metrics.render(undefined)).text, 'http_requests_in_flight', { environment: 'stage' }) ?? 0
  while ((await inFlight()) < 1) await sleep(5)
  await call('GET', '/api/v1/models', '/api/v1/models', { headers: bearer }, 503)
  await call('GET', '/v2/models/{name}/ready', '/v2/models/cars/ready', { headers: bearer }, 503)
  await call('GET', '/api/insights', '/api/insights?count=1', {}, 503)
  await call('GET', '/docs', '/docs', {}, 503)
  t.equal((await held).status, 200, 'the slow request was the one admitted')
})

t.test('GET /openapi.json is one pre-serialised body with a validator: 304 while unchanged', async (t) => {
  const { base, response } = await setup(t)
  const etag = response.headers.get('etag') as string
  t.match(etag, /^"[\w-]{43}"$/)
  t.equal(response.headers.get('cache-control'), 'no-cache')
  t.equal(response.headers.get('x-content-type-options'), 'nosniff')
  const again = await fetch(`${base}/openapi.json`, { headers: { 'if-none-match': etag } })
  t.equal(again.status, 304)
  t.equal(await again.text(), '')
  t.equal(again.headers.get('etag'), etag)
  t.ok(again.headers.get('x-request-id'))
  const head = await fetch(`${base}/openapi.json`, { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(head.headers.get('content-length'), response.headers.get('content-length'))
})
