// The four HTTP series of lib/README.md §4, kept in cells (cells.ts) that the metrics layer resolves
// once per (route, status) and then bumps with `+=`, and published through prom-client's registry.
//
// What is counted: GET /metrics is not. A thrown `HttpError` is an answer, not an exception;
// anything else thrown answers 500 and counts in `http_exceptions_total`, labelled by its class
// name, past 50 names as `other`. `method` is `OTHER` outside the standard methods (`CONNECT` for a
// refused CONNECT); `endpoint` is the route template, `<unmatched>` for an unknown path and for
// requests refused before routing, which count in `http_requests_total` only (no duration, no
// span). A stream is in flight, and its duration runs, until the stream ends; a request to a route
// that takes a JSON body (`body: 'json'`: the prediction routes) is in flight from its body being
// read, while its duration still runs from its head. Every alert threshold (0.75 s, 1 s, 1.5 s) is
// a bucket bound, so `histogram_quantile` is exact there.
import type { Registry } from 'prom-client'
import { counterCell, counterSeries, gaugeSeries, histogramCell, histogramSeries, registerSeries, type CounterCell, type HistogramCell } from './cells.js'

export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2.5, 5, 10] as const

const STANDARD_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE'])
export const isStandardMethod = (method: string): boolean => STANDARD_METHODS.has(method)
/** Methods outside the standard set share one label value, so clients cannot mint series. */
export const methodLabel = (method: string): string => (STANDARD_METHODS.has(method) ? method : 'OTHER')

/** Distinct exception types kept before the rest are counted as `other`: a bound on cardinality. */
const MAX_EXCEPTION_TYPES = 50

export class HttpMetrics {
  readonly environment: string
  inFlight = 0
  readonly #requests = new Map<string, CounterCell>()
  readonly #durations = new Map<string, HistogramCell>()
  readonly #exceptions = new Map<string, CounterCell>()

  constructor(environment: string) {
    this.environment = environment
  }

  /** The `http_requests_total` cell; callers keep it, this lookup is not for the hot path. */
  requestCell(method: string, endpoint: string, status: number): CounterCell {
    const key = `${method} ${endpoint} ${status}`
    let cell = this.#requests.get(key)
    if (cell === undefined) {
      cell = counterCell({ method, endpoint, status: String(status), environment: this.environment })
      this.#requests.set(key, cell)
    }
    return cell
  }

  durationCell(method: string, endpoint: string): HistogramCell {
    const key = `${method} ${endpoint}`
    let cell = this.#durations.get(key)
    if (cell === undefined) {
      cell = histogramCell({ method, endpoint, environment: this.environment }, DURATION_BUCKETS)
      this.#durations.set(key, cell)
    }
    return cell
  }

  countException(error: unknown): void {
    const name = error instanceof Error ? error.constructor.name : typeof error
    let cell = this.#exceptions.get(name)
    if (cell === undefined) {
      const type = this.#exceptions.size < MAX_EXCEPTION_TYPES ? name : 'other'
      cell = this.#exceptions.get(type) ?? counterCell({ exception_type: type, environment: this.environment })
      this.#exceptions.set(type, cell)
    }
    cell.value++
  }

  /** Publishes the cells as the four series of lib/README.md §4. */
  registerIn(registry: Registry): void {
    const env = { environment: this.environment }
    registerSeries(registry, [
      counterSeries('http_requests_total', 'Total HTTP requests.', this.#requests),
      histogramSeries('http_request_duration_seconds', 'HTTP request duration in seconds.', this.#durations),
      gaugeSeries('http_requests_in_flight', 'HTTP requests currently being processed.', () => [{ labels: env, value: this.inFlight }]),
      counterSeries('http_exceptions_total', 'Exceptions raised while handling HTTP requests.', this.#exceptions),
    ])
  }
}
