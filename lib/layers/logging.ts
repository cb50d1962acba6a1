// Logging layer (DESIGN §5): enters the request's AsyncLocalStorage store, so every log call made
// while handling it carries its request_id, and writes request_started / request_completed.
import { performance } from 'node:perf_hooks'
import type { Ctx } from '../http/context.js'
import { errorFields, type Logger } from '../telemetry/logger.js'
import { requestStore } from '../telemetry/request-store.js'
import type { Handler, Layer, Reply } from '../pipeline.js'

export const logging = (logger: Logger): Layer => (next, route) => {
  const enter: Handler = (ctx) => requestStore.run(ctx, next, ctx)
  // Decided once: with request lines below the level, only the store is entered.
  if (!logger.isEnabled('info')) return enter

  const template = route.template
  const complete = (ctx: Ctx, reply: Reply): Reply => {
    const fields = {
      method: ctx.method,
      path: ctx.path,
      route: template,
      status: reply.status,
      duration_ms: Math.round((performance.now() - ctx.startTime) * 1000) / 1000,
    }
    if (reply.status >= 500) {
      logger.error('request_completed', 'error' in reply && reply.error !== undefined ? { ...fields, error: errorFields(reply.error) } : fields, ctx)
    } else logger.info('request_completed', fields, ctx)
    return reply
  }

  return (ctx) => {
    logger.info('request_started', { method: ctx.method, path: ctx.path }, ctx)
    const reply = enter(ctx)
    return reply instanceof Promise ? reply.then((r) => complete(ctx, r)) : complete(ctx, reply)
  }
}
