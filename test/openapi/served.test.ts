// GET /openapi.json over a real socket: it validates against the OpenAPI 3.1 schema, covers every
// route the service has, its examples fit its schemas, and the service's real answers fit it too.
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import t, { type Test } from 'tap'
import { startApp } from '../fixtures/app.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { fakeCoingecko } from '../fixtures/rate-upstreams.js'

type Json = Record<string, any>

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

const ID = 'https://svc.invalid/openapi.json'

/** A JSON pointer into the document, as a URI fragment. */
const pointer = (...tokens: readonly string[]): string =>
  `#${tokens.map((token) => `/${encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1'))}`).join('')}`

/**
 * Checks a value against a schema of the document, found by its place in it, so the schema's own
 * references resolve as any OpenAPI tool resolves them. JSON Schema 2020-12, the dialect of 3.1.
 */
const schemaChecker = (document: Json) => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  formats.default(ajv)
  ajv.addSchema(document, ID)
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  return (at: string, value: unknown): string | undefined => {
    let validate = compiled.get(at)
    if (validate === undefined) compiled.set(at, (validate = ajv.compile({ $ref: ID + at })))
    return validate(value) ? undefined : ajv.errorsText(validate.errors)
  }
}

/** The response described for a status, followed through a $ref to components.responses. */
const described = (document: Json, method: string, template: string, status: number): { tokens: string[]; response: Json | undefined } => {
  const tokens = ['paths', template, method.toLowerCase(), 'responses', String(status)]
  const response = document['paths'][template]?.[method.toLowerCase()]?.responses?.[String(status)] as Json | undefined
  if (typeof response?.['$ref'] !== 'string') return { tokens, response }
  const name = (response['$ref'] as string).split('/').pop() as string
  return { tokens: ['components', 'responses', name], response: document['components']['responses'][name] }
}

const setup = async (t: Test) => {
  const upstream = await fakeCoingecko(t)
  const running = await startApp(t, { SVC_RATE_PROVIDERS: 'coingecko', SVC_RATE_COINGECKO_URL: upstream.url, SVC_ENVIRONMENT: 'stage' })
  const response = await fetch(`${running.base}/openapi.json`)
  const document = (await response.json()) as Json
  return { ...running, response, document }
}

t.test('GET /openapi.json validates against the OpenAPI 3.1 schema', async (t) => {
  const { document, response } = await setup(t)
  t.equal(response.status, 200)
  t.equal(response.headers.get('content-type'), 'application/json')
  const validator = new Validator()
  const result = await validator.validate(document)
  t.same(result.errors, undefined, 'no schema errors')
  t.equal(result.valid, true)
  t.equal(validator.version, '3.1')
  t.match(document['info'], { title: 'svc', version: PACKAGE_VERSION })
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

t.test('every example of the document fits its schema', async (t) => {
  const { document } = await setup(t)
  const check = schemaChecker(document)
  const misfits: string[] = []
  let checked = 0
  const fit = (at: string, value: unknown, what: string): void => {
    checked++
    const error = check(at, value)
    if (error !== undefined) misfits.push(`${what}: ${error}`)
  }
  const media = (tokens: string[], content: Json | undefined): void => {
    for (const [type, entry] of Object.entries(content ?? {})) {
      const at = pointer(...tokens, 'content', type, 'schema')
      if ('example' in entry) fit(at, entry.example, `${tokens.join(' ')} ${type} example`)
      for (const [name, example] of Object.entries((entry.examples ?? {}) as Json)) fit(at, example.value, `${tokens.join(' ')} ${type} example ${name}`)
    }
  }
  for (const [path, operations] of Object.entries(document['paths'] as Json)) {
    for (const [method, operation] of Object.entries(operations as Json)) {
      const tokens = ['paths', path, method]
      ;(operation.parameters ?? []).forEach((parameter: Json, i: number) => {
        if ('example' in parameter)
          fit(pointer(...tokens, 'parameters', String(i), 'schema'), parameter['example'], `${method} ${path} parameter ${parameter['name']}`)
      })
      media([...tokens, 'requestBody'], operation.requestBody?.content)
      for (const [status, response] of Object.entries(operation.responses as Json)) media([...tokens, 'responses', status], response.content)
    }
  }
  const components = document['components']
  for (const [name, response] of Object.entries(components.responses as Json)) media(['components', 'responses', name], response.content)
  for (const [name, schema] of Object.entries(components.schemas as Json)) {
    for (const example of schema.examples ?? []) fit(pointer('components', 'schemas', name), example, `schema ${name}`)
  }
  for (const [name, header] of Object.entries(components.headers as Json)) {
    for (const example of header.schema.examples ?? []) fit(pointer('components', 'headers', name, 'schema'), example, `header ${name}`)
  }
  t.same(misfits, [])
  t.ok(checked > 60, `${checked} examples checked`)
  // The checker itself refuses what does not fit, references followed.
  t.match(check(pointer('components', 'schemas', 'Rate'), { symbol: 'ETH' }), /must/)
  const detail = { name: 'iris', versions: ['1'], default_version: '1', platform: 'svc', state: 'READY', reason: null }
  t.equal(check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, drift: { status: 'disabled' } }), undefined)
  t.match(
    check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, drift: { status: 'bogus' } }),
    /drift\/status must be equal to one of the allowed values/,
  )
  t.match(check(pointer('components', 'schemas', 'ModelDetail'), { ...detail, state: 'MAYBE' }), /state must be equal to one of the allowed values/)
})

t.test("the service's real answers fit the document: status, headers, media type and body", async (t) => {
  const { document, base } = await setup(t)
  const check = schemaChecker(document)
  const exercised = new Set<string>()
  for (const [method, template, path, init] of CALLS) {
    const res = await fetch(base + path, init)
    const text = await res.text()
    const what = `${method} ${path} → ${res.status}`
    const { tokens, response } = described(document, method, template, res.status)
    if (response === undefined) {
      t.fail(`${what} is not described`)
      continue
    }
    exercised.add(`${method} ${template}`)
    for (const name of Object.keys(response['headers'] ?? {})) t.ok(res.headers.has(name), `${what} sends ${name}`)
    const type = res.headers.get('content-type') as string
    const media = response['content']?.[type] as Json | undefined
    if (media === undefined) {
      t.fail(`${what}: ${type} is not described`)
      continue
    }
    const at = pointer(...tokens, 'content', type, 'schema')
    if (type.startsWith('text/event-stream')) {
      const events = text
        .split('\n\n')
        .filter(Boolean)
        .map((event) => JSON.parse(event.replace(/^data: /, '')) as unknown)
      t.equal(events.length, 2, `${what}: two events`)
      for (const event of events) t.equal(check(pointer('components', 'schemas', 'InsightEvent'), event), undefined, `${what}: an InsightEvent`)
    } else {
      const isJson = /json/.test(type)
      t.equal(check(at, isJson ? JSON.parse(text) : text), undefined, `${what}: the body fits its schema`)
    }
  }
  const operations = Object.entries(document['paths'] as Json).flatMap(([path, ops]) => Object.keys(ops as Json).map((m) => `${m.toUpperCase()} ${path}`))
  t.same(
    operations.filter((op) => !exercised.has(op)),
    [],
    'every operation answered for real at least once',
  )
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
