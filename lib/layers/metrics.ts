// Metrics layer (lib/README.md §4): in-flight, duration, totals and exceptions. Cells are resolved once per
// (route, status) — and per method on the 404/405 pipelines — so a request only does `+=`.
import { performance } from 'node:perf_hooks'
import type { Ctx } from '../core/http/context.js'
import { count, observe, type CounterCell, type HistogramCell } from '../telemetry/metrics/cells.js'
import { methodLabel, type HttpMetrics } from '../telemetry/metrics/http-metrics.js'
import type { Layer, Reply } from '../core/pipeline.js'
import { onStreamEnd } from './stream-end.js'

/** The cells of one (method, endpoint): the duration histogram and a counter per status. */
class MethodCells {
  readonly duration: HistogramCell
  readonly #byStatus = new Map<number, CounterCell>()
  readonly #metrics: HttpMetrics
  readonly #method: string
  readonly #endpoint: string

  constructor(metrics: HttpMetrics, method: string, endpoint: string) {
    this.#metrics = metrics
    this.#method = method
    this.#endpoint = endpoint
    this.duration = metrics.durationCell(method, endpoint)
  }

  requests(status: number): CounterCell {
    let cell = this.#byStatus.get(status)
    if (cell === undefined) this.#byStatus.set(status, (cell = this.#metrics.requestCell(this.#method, this.#endpoint, status)))
    return cell
  }
}

export const metrics =
  (m: HttpMetrics): Layer =>
  (next, route) => {
    if (route.isExcludedFromMetrics) return next
    // Series appear with their first request, so a HEAD or OPTIONS nobody sends exports nothing.
    let fixed: MethodCells | undefined
    const byMethod = new Map<string, MethodCells>()
    const cellsFor: (method: string) => MethodCells =
      route.method === '*'
        ? (method) => {
            const label = methodLabel(method)
            let cells = byMethod.get(label)
            if (cells === undefined) byMethod.set(label, (cells = new MethodCells(m, label, route.template)))
            return cells
          }
        : () => (fixed ??= new MethodCells(m, route.method, route.template))

    const record = (ctx: Ctx, status: number, error: unknown): void => {
      const cells = cellsFor(ctx.method)
      observe(cells.duration, (performance.now() - ctx.startTime) / 1000, ctx.traceId)
      count(cells.requests(status), ctx.traceId)
      if (error !== undefined) m.countException(error)
      m.inFlight--
    }
    const finish = (ctx: Ctx, reply: Reply): Reply => {
      // A stream is in flight, and its duration runs, until the stream ends.
      if (reply.kind === 'stream') return onStreamEnd(reply, (error) => record(ctx, reply.status, error))
      record(ctx, reply.status, reply.kind === 'problem' ? reply.error : undefined)
      return reply
    }
    const fail = (error: unknown): never => {
      m.inFlight--
      throw error
    }

    return (ctx) => {
      m.inFlight++
      const reply = next(ctx)
      return reply instanceof Promise ? reply.then((r) => finish(ctx, r), fail) : finish(ctx, reply)
    }
  }
