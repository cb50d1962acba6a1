// Tokens, the admin listener, request-id trust and what must never leak, over real sockets.
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { testRoutes } from '../fixtures/routes.js'

const CLIENT = 'client-token-7f3a9c1e5b'
const SCRAPER = 'scraper-token-2d8e4f6a0c'
const TOKENS = { SVC_API_TOKENS: `${CLIENT},second-client-0123456789`, SVC_METRICS_TOKEN: SCRAPER }
const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

t.test('tokens guard /api/v1/*, /v2/* and /metrics; the rest stays open', async (t) => {
  const { base } = await startApp(t, TOKENS)
  const refused = await fetch(`${base}/api/v1/models`)
  t.equal(refused.status, 401)
  t.equal(refused.headers.get('www-authenticate'), 'Bearer realm="svc"')
  t.equal(refused.headers.get('content-type'), 'application/problem+json')
  t.match(await refused.json(), { type: 'urn:svc:problem:unauthorized', status: 401, instance: '/api/v1/models' })
  const wrong = await fetch(`${base}/v2/models/iris`, { headers: auth('not-the-token-0123456789') })
  t.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="svc", error="invalid_token"')
  t.equal((await fetch(`${base}/api/v1/models`, { headers: auth(CLIENT) })).status, 200)
  t.equal(
    (await fetch(`${base}/v2/models/iris/infer`, { method: 'POST', headers: { ...auth(CLIENT), 'content-type': 'application/json' }, body: '{"inputs":[]}' }))
      .status,
    400,
    'past the token, the body is checked',
  )
  t.equal((await fetch(`${base}/metrics`)).status, 401)
  t.equal((await fetch(`${base}/metrics`, { headers: auth(CLIENT) })).status, 401, "a client's token does not open /metrics")
  t.equal((await fetch(`${base}/metrics`, { headers: auth(SCRAPER) })).status, 200)
  for (const open of ['/', '/health', '/ready', '/api/insights?count=1&interval=0', '/openapi.json']) t.equal((await fetch(`${base}${open}`)).status, 200, open)
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as any
  t.same(Object.keys(document.components.securitySchemes).sort(), ['apiToken', 'metricsToken'], 'the description says which token goes where')
  // The auth layer and the description read the same declaration on each route: every route of the
  // service, by the rule of lib/README.md §7, in the description the layer was built beside.
  const isApi = (path: string): boolean => path.startsWith('/api/v1/') || path === '/v2' || path.startsWith('/v2/')
  for (const [path, operations] of Object.entries(document.paths) as [string, Record<string, any>][]) {
    const expected = path === '/metrics' ? 'metricsToken' : isApi(path) ? 'apiToken' : 'open'
    for (const [method, operation] of Object.entries(operations)) {
      t.equal(operation.security.length === 0 ? 'open' : Object.keys(operation.security[0])[0], expected, `${method} ${path}: ${expected}`)
    }
  }
})

t.test('SVC_ADMIN_PORT moves /metrics and the probes to a second listener', async (t) => {
  const { base, adminBase } = await startApp(t, { SVC_ADMIN_PORT: '0' })
  if (adminBase === undefined) throw new Error('an admin listener was asked for')
  for (const path of ['/metrics', '/health', '/ready', '/startup']) {
    t.equal((await fetch(`${adminBase}${path}`)).status, 200, `${path} on the admin listener`)
    t.equal((await fetch(`${base}${path}`)).status, 404, `${path} not on the public one`)
  }
  t.equal((await fetch(`${adminBase}/api/v1/models`)).status, 404, 'the API stays public')
  const index = (await (await fetch(`${base}/`)).json()) as { endpoints: Array<{ path: string }> }
  t.notOk(
    index.endpoints.some((e) => e.path === '/metrics' || e.path === '/health'),
    'the public index lists only what it serves',
  )
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as any
  t.notOk('/metrics' in document.paths, 'so does the public API description')
  t.ok('/api/v1/predict' in document.paths)
  const metrics = await (await fetch(`${adminBase}/metrics`)).text()
  t.match(metrics, /http_requests_total\{method="GET",endpoint="\/health",status="200"/, 'both listeners count into one registry')
})

t.test('SVC_TRUST_REQUEST_ID keeps a well-formed inbound X-Request-ID; by default a fresh one is made', async (t) => {
  const trusted = await startApp(t, { SVC_TRUST_REQUEST_ID: 'true' })
  const id = async (base: string, value: string): Promise<string | null> =>
    (await fetch(`${base}/`, { headers: { 'x-request-id': value } })).headers.get('x-request-id')
  t.equal(await id(trusted.base, 'a1b2c3d4-e5f6-4789-8abc-def012345678'), 'a1b2c3d4-e5f6-4789-8abc-def012345678')
  t.equal(await id(trusted.base, 'lb.trace_42-x'), 'lb.trace_42-x')
  for (const bad of ['has space', 'x'.repeat(65), 'semi;colon', '"quoted"'])
    t.match(await id(trusted.base, bad), /^[0-9a-f-]{36}$/, `${bad.slice(0, 12)}… gets a fresh id`)
  t.ok(
    trusted.lines().some((line) => line['request_id'] === 'lb.trace_42-x'),
    'the kept id is the one logged',
  )
  const plain = await startApp(t)
  t.match(await id(plain.base, 'lb.trace_42-x'), /^[0-9a-f-]{36}$/, 'not trusted unless asked')
})

t.test('Authorization, Cookie and token values never reach logs, spans or error bodies', async (t) => {
  const COOKIE = 'session=cookie-secret-9b7d5f3e1a'
  const { app, base, lines, consoleSpans } = await startApp(
    t,
    { ...TOKENS, ENABLE_CONSOLE_TRACES: 'true', LOG_LEVEL: 'debug', OTEL_BSP_SCHEDULE_DELAY: '10' },
    testRoutes(5),
  )
  const bodies: string[] = []
  const send = async (path: string, headers: Record<string, string>, init: RequestInit = {}): Promise<number> => {
    const response = await fetch(`${base}${path}`, { ...init, headers: { ...headers, cookie: COOKIE } })
    bodies.push(JSON.stringify([...response.headers]), await response.text())
    return response.status
  }
  await send('/api/v1/models', auth(CLIENT))
  await send('/api/v1/models', auth('wrong-token-abcdef012345'))
  await send('/api/v1/models/nope', auth(CLIENT))
  await send('/metrics', auth(CLIENT))
  // The scraper's token, accepted where it belongs and refused where it does not.
  t.equal(await send('/metrics', auth(SCRAPER)), 200, "the scraper's token is read and opens /metrics")
  t.equal(await send('/api/v1/models', auth(SCRAPER)), 401, 'and is refused on the API')
  await send('/test/throw', auth(CLIENT))
  await send(
    '/api/v1/predict',
    { ...auth(CLIENT), 'content-type': 'application/json' },
    { method: 'POST', body: '{"model":"iris","instances":[{"sepal_length":"x"}]}' },
  )
  // Shutting tracing down exports every span still queued: what is searched below is all there is.
  await app.tracing.shutdown(5000)
  const logs = JSON.stringify(lines())
  const spans = JSON.stringify(consoleSpans())
  t.ok(lines().length > 10 && consoleSpans().length >= 8, 'there is something to search')
  for (const secret of [CLIENT, SCRAPER, 'wrong-token-abcdef012345', 'cookie-secret-9b7d5f3e1a']) {
    t.notOk(logs.includes(secret), `no ${secret.slice(0, 12)}… in the logs`)
    t.notOk(spans.includes(secret), `no ${secret.slice(0, 12)}… in the spans`)
    t.notOk(
      bodies.some((body) => body.includes(secret)),
      `no ${secret.slice(0, 12)}… in any response`,
    )
  }
  t.notOk(/bearer|cookie/i.test(logs) || /bearer|cookie/i.test(spans), 'not even the header names')
})

t.test('every answer says nosniff and how to cache it, and nothing says what powers it', async (t) => {
  const { base } = await startApp(t)
  for (const path of ['/', '/nope', '/metrics', '/api/v1/models/nope', '/docs', '/openapi.json']) {
    const response = await fetch(`${base}${path}`)
    t.equal(response.headers.get('x-content-type-options'), 'nosniff', path)
    t.ok(response.headers.get('cache-control'), `${path}: ${response.headers.get('cache-control')}`)
    t.equal(response.headers.get('x-powered-by'), null)
  }
})
