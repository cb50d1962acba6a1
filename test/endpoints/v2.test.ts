// The /v2 routes over one serving: inference, model metadata and readiness share the one
// createModelServing builds for them, which each finds its model through.
import { Registry } from 'prom-client'
import t from 'tap'
import type { Ctx } from '../../lib/core/http/context.js'
import type { RouteDef } from '../../lib/core/pipeline.js'
import type * as V2 from '../../lib/endpoints/v2.js'
import * as serving from '../../lib/serving/serving.js'
import { createModelMetrics } from '../../lib/serving/metrics.js'
import { makeCtx } from '../fixtures/ctx.js'
import { harness, shippedFiles } from '../fixtures/model-registry.js'

t.test('the /v2 routes build one serving, and metadata and readiness find their model through it', async (t) => {
  const built: serving.ModelServing[] = []
  const found: serving.ModelServing[] = []
  const { v2Routes } = await t.mockImport<typeof V2>('../../lib/endpoints/v2.js', {
    '../../lib/serving/serving.js': {
      ...serving,
      createModelServing: (...args: Parameters<typeof serving.createModelServing>): serving.ModelServing => {
        const made = serving.createModelServing(...args)
        const spied: serving.ModelServing = {
          ...made,
          find: (name, version) => {
            found.push(spied)
            return made.find(name, version)
          },
        }
        built.push(spied)
        return spied
      },
    },
  })
  const h = harness(shippedFiles())
  await h.registry.load()
  const routes = v2Routes({ models: h.registry, metrics: createModelMetrics(new Registry()), maxBatch: 8, drift: undefined })
  t.equal(built.length, 1, 'one serving for every route')
  const handler = (path: string): RouteDef['handler'] => (routes.find((route) => route.path === path) as RouteDef).handler
  const withParams = (params: Record<string, string>): Ctx => Object.assign(makeCtx('GET', '/v2/models/iris'), { params })
  t.match(await handler('/v2/models/{name}')(withParams({ name: 'iris' })), { status: 200, body: { name: 'iris', versions: ['1'] } })
  t.match(await handler('/v2/models/{name}/versions/{version}/ready')(withParams({ name: 'iris', version: '1' })), { status: 200, body: { ready: true } })
  t.equal(found.length, 2)
  t.ok(
    found.every((used) => used === built[0]),
    'both through the one serving',
  )
})
