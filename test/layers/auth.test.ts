import t from 'tap'
import { bearerAuth, bearerToken } from '../../lib/layers/auth.js'
import type { Handler, ProblemReply, Reply, RouteInfo } from '../../lib/core/pipeline.js'
import { makeCtx } from '../fixtures/ctx.js'

/** A route as the router describes it; `auth` is the token its definition declares. */
const route = (template: string, auth: RouteInfo['auth'] = 'none'): RouteInfo => ({
  method: 'GET',
  template,
  isExcludedFromMetrics: false,
  requestLogLevel: 'info',
  isOperational: false,
  auth,
})
const ok: Handler = () => ({ kind: 'json', status: 200 })
const API = ['client-one-0123456789', 'client-two-0123456789']
const METRICS = 'scraper-0123456789abcdef'

t.test('reads the token of a Bearer authorization, scheme in any case', async (t) => {
  t.equal(bearerToken('Bearer abc'), 'abc')
  t.equal(bearerToken('bearer   abc  '), 'abc')
  t.equal(bearerToken('BEARER abc'), 'abc')
  for (const none of [undefined, '', 'Bearer', 'Bearer ', 'Bearer    ', 'Basic dXNlcjpwYXNz', 'Bearerabc'])
    t.equal(bearerToken(none), undefined, JSON.stringify(none))
})

t.test('no token configured: no layer', async (t) => {
  t.equal(bearerAuth({ apiTokens: [], metricsToken: undefined }), undefined)
})

t.test('guarded routes need an accepted token; others are untouched', async (t) => {
  const layer = bearerAuth({ apiTokens: API, metricsToken: METRICS })
  if (layer === undefined) throw new Error('tokens are configured')
  t.equal(layer(ok, route('/api/insights')), ok, 'open routes are not wrapped')
  t.equal(layer(ok, route('/health')), ok)
  t.equal(layer(ok, route('/v2')), ok, 'a route is guarded by its declaration, not its path')
  const predict = layer(ok, route('/api/v1/predict', 'api'))
  const missing = predict(makeCtx('GET', '/api/v1/predict')) as ProblemReply
  t.equal(missing.status, 401)
  t.same(missing.headers, { 'www-authenticate': 'Bearer realm="svc"' })
  t.match(missing.problem, { type: 'urn:svc:problem:unauthorized', detail: /needs a bearer token/ })
  const wrong = predict(makeCtx('GET', '/api/v1/predict', { authorization: 'Bearer client-three-0123456789' })) as ProblemReply
  t.same(wrong.headers, { 'www-authenticate': 'Bearer realm="svc", error="invalid_token"' })
  t.notMatch(JSON.stringify(wrong), /client-three/, 'the presented token is not echoed')
  for (const token of API) t.equal((predict(makeCtx('GET', '/', { authorization: `Bearer ${token}` })) as Reply).status, 200, 'each API token is accepted')
  t.equal((predict(makeCtx('GET', '/', { authorization: `Bearer ${METRICS}` })) as ProblemReply).status, 401, "the scraper's token is not a client's")
  const metrics = layer(ok, route('/metrics', 'metrics'))
  t.equal((metrics(makeCtx('GET', '/metrics', { authorization: `Bearer ${METRICS}` })) as Reply).status, 200)
  t.equal((metrics(makeCtx('GET', '/metrics', { authorization: `Bearer ${API[0]}` })) as Reply).status, 401, "a client's token is not the scraper's")
})

t.test('with only a metrics token the API stays open, and the other way round', async (t) => {
  const metricsOnly = bearerAuth({ apiTokens: [], metricsToken: METRICS }) as NonNullable<ReturnType<typeof bearerAuth>>
  t.equal(metricsOnly(ok, route('/api/v1/predict', 'api')), ok)
  const apiOnly = bearerAuth({ apiTokens: API, metricsToken: undefined }) as NonNullable<ReturnType<typeof bearerAuth>>
  t.equal(apiOnly(ok, route('/metrics', 'metrics')), ok)
})
