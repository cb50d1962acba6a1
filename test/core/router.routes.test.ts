// Path parameters typed by their route's template (`route`, lib/core/pipeline.ts): checked by the
// compiler (`npm run typecheck` fails on any line below marked @ts-expect-error that compiles), and
// at run time the identity, with the router setting exactly the template's parameters.
import t from 'tap'
import type { Ctx } from '../../lib/core/http/context.js'
import { route, type Endpoint, type ParamNames, type PathParams } from '../../lib/core/pipeline.js'
import { createRouter } from '../../lib/core/router.js'
import { makeCtx } from '../fixtures/ctx.js'

const echo: Endpoint<PathParams<'/m/{name}/v/{version}'>> = (ctx) => ({ kind: 'json', status: 200, body: [ctx.params.name, ctx.params.version] })
/** One endpoint for two templates: `version` only where the path names one. */
const either: Endpoint<Readonly<{ name: string; version?: string }>> = (ctx) => ({ kind: 'json', status: 200, body: ctx.params.version ?? 'default' })
const plain = (ctx: Ctx) => ({ kind: 'json' as const, status: 200, body: ctx.path })

t.test('a template names its parameters, and only those', async (t) => {
  const names: ParamNames<'/v2/models/{name}/versions/{version}/infer'>[] = ['name', 'version']
  // @ts-expect-error: `infer` is a literal segment, not a parameter
  const wrong: ParamNames<'/v2/models/{name}/infer'> = 'infer'
  const none: ParamNames<'/health'>[] = []
  t.same([names, wrong, none], [['name', 'version'], 'infer', []])
})

t.test('route declares a route as it is: the typing costs nothing at run time', async (t) => {
  const def = { method: 'GET', path: '/m/{name}/v/{version}', handler: echo } as const
  t.equal(route(def), def)
})

t.test("an endpoint reads its route's parameters, decoded by the router", async (t) => {
  const router = createRouter(
    [
      route({ method: 'GET', path: '/m/{name}/v/{version}', handler: echo }),
      route({ method: 'GET', path: '/m/{name}', handler: either }),
      route({ method: 'GET', path: '/m/{name}/latest/{version}', handler: either }),
      route({ method: 'GET', path: '/plain', handler: plain }),
    ],
    [],
  )
  const call = async (path: string): Promise<unknown> => {
    const ctx = makeCtx('GET', path)
    const reply = await (router.find(ctx).handlers.get('GET') as (ctx: Ctx) => unknown)(ctx)
    return (reply as { body: unknown }).body
  }
  t.same(await call('/m/ir%20is/v/2'), ['ir is', '2'])
  t.equal(await call('/m/iris'), 'default')
  t.equal(await call('/m/iris/latest/3'), '3')
  t.equal(await call('/plain'), '/plain')
})

t.test('an endpoint that reads a parameter its template lacks is refused by the compiler', async (t) => {
  const defs = [
    // @ts-expect-error: the template has no {version}, which `echo` reads as a string
    route({ method: 'GET', path: '/m/{name}', handler: echo }),
    // @ts-expect-error: {model} is not {name}
    route({ method: 'GET', path: '/m/{model}', handler: either }),
  ]
  t.equal(defs.length, 2)
})
