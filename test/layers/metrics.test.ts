import t from 'tap'
import { Registry } from 'prom-client'
import { metrics } from '../../lib/layers/metrics.js'
import type { Handler, RouteInfo } from '../../lib/core/pipeline.js'
import { HttpMetrics } from '../../lib/telemetry/metrics/http-metrics.js'
import { makeCtx } from '../fixtures/ctx.js'
import { sample } from '../fixtures/metrics-text.js'

const setup = () => {
  const http = new HttpMetrics('dev')
  const registry = new Registry()
  http.registerIn(registry)
  return { http, registry, layer: metrics(http) }
}
const get: RouteInfo = { method: 'GET', template: '/x', isExcludedFromMetrics: false, requestLogLevel: 'info', isOperational: false, auth: 'none' }

t.test('a route excluded from metrics is passed through untouched', async (t) => {
  const { layer } = setup()
  const endpoint: Handler = () => ({ kind: 'json', status: 200 })
  t.equal(layer(endpoint, { ...get, isExcludedFromMetrics: true }), endpoint)
})

t.test('requests are counted by status with one duration series per method and endpoint', async (t) => {
  const { layer, registry, http } = setup()
  let status = 200
  const handler = layer(() => ({ kind: 'json', status }), get)
  handler(makeCtx())
  handler(makeCtx())
  status = 404
  handler(makeCtx())
  const text = await registry.metrics()
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/x', status: '200', environment: 'dev' }), 2)
  t.equal(sample(text, 'http_requests_total', { method: 'GET', endpoint: '/x', status: '404', environment: 'dev' }), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count', { method: 'GET', endpoint: '/x', environment: 'dev' }), 3)
  t.equal(http.inFlight, 0)
})

t.test('the 404/405 pipelines label by the request method, mapping odd methods to OTHER', async (t) => {
  const { layer, registry } = setup()
  const handler = layer(() => ({ kind: 'json', status: 405 }), {
    method: '*',
    template: '/x',
    isExcludedFromMetrics: false,
    requestLogLevel: 'info',
    isOperational: false,
    auth: 'none',
  })
  handler(makeCtx('DELETE'))
  handler(makeCtx('PROPFIND'))
  handler(makeCtx('MKCOL'))
  const text = await registry.metrics()
  t.equal(sample(text, 'http_requests_total', { method: 'DELETE', endpoint: '/x', status: '405', environment: 'dev' }), 1)
  t.equal(sample(text, 'http_requests_total', { method: 'OTHER', endpoint: '/x', status: '405', environment: 'dev' }), 2)
})

t.test('in-flight rises during an async request and falls after it, even when an inner layer rejects', async (t) => {
  const { layer, http } = setup()
  let release: () => void = () => {}
  const handler = layer(() => new Promise((resolve) => (release = () => resolve({ kind: 'json', status: 200 }))), get)
  const pending = handler(makeCtx())
  t.equal(http.inFlight, 1)
  release()
  await pending
  t.equal(http.inFlight, 0)
  const broken = layer(() => Promise.reject(new Error('layer bug')), get)
  await t.rejects(Promise.resolve(broken(makeCtx())), { message: 'layer bug' })
  t.equal(http.inFlight, 0)
})
