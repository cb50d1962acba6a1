// The four HTTP series of lib/README.md §4, kept in plain per-series cells that the metrics layer resolves
// once per (route, status) and then bumps with `+=`. prom-client's own `labels()` children hash and
// validate the label object on every call; these cells do no label work per request at all. The
// cells are published through prom-client's registry, which does the exposition and escaping.
import type { Metric, Registry } from 'prom-client'

export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2.5, 5, 10] as const

const STANDARD_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE'])
export const isStandardMethod = (method: string): boolean => STANDARD_METHODS.has(method)
/** Methods outside the standard set share one label value, so clients cannot mint series. */
export const methodLabel = (method: string): string => (STANDARD_METHODS.has(method) ? method : 'OTHER')

/** Distinct exception types kept before the rest are counted as `other`: a bound on cardinality. */
const MAX_EXCEPTION_TYPES = 50

type Labels = Readonly<Record<string, string>>
/**
 * An OpenMetrics exemplar kept in place: the latest sampled request's trace id, its value and
 * when (seconds since the epoch). Written field by field, so a sampled request allocates nothing.
 */
export type ExemplarSlot = { traceId: string | undefined; value: number; timestamp: number }
export type CounterCell = { readonly labels: Labels; value: number; readonly exemplar: ExemplarSlot }
export type HistogramCell = { readonly labels: Labels; count: number; sum: number; readonly buckets: Float64Array; readonly exemplars: readonly ExemplarSlot[] }

const emptySlot = (): ExemplarSlot => ({ traceId: undefined, value: 0, timestamp: 0 })

const keep = (slot: ExemplarSlot, traceId: string, value: number): void => {
  slot.traceId = traceId
  slot.value = value
  slot.timestamp = Date.now() / 1000
}

/** Counts a request; a sampled one (`traceId` set) becomes the cell's exemplar. */
export const count = (cell: CounterCell, traceId: string | undefined): void => {
  cell.value++
  if (traceId !== undefined) keep(cell.exemplar, traceId, 1)
}

/** Observes a duration; a sampled request becomes the exemplar of the bucket it falls in. */
export const observe = (cell: HistogramCell, seconds: number, traceId: string | undefined): void => {
  let i = 0
  while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++
  ;(cell.buckets[i] as number)++
  cell.count++
  cell.sum += seconds
  if (traceId !== undefined) keep(cell.exemplars[i] as ExemplarSlot, traceId, seconds)
}

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
      cell = { labels: Object.freeze({ method, endpoint, status: String(status), environment: this.environment }), value: 0, exemplar: emptySlot() }
      this.#requests.set(key, cell)
    }
    return cell
  }

  durationCell(method: string, endpoint: string): HistogramCell {
    const key = `${method} ${endpoint}`
    let cell = this.#durations.get(key)
    if (cell === undefined) {
      const labels = Object.freeze({ method, endpoint, environment: this.environment })
      const exemplars = Array.from({ length: DURATION_BUCKETS.length + 1 }, emptySlot)
      cell = { labels, count: 0, sum: 0, buckets: new Float64Array(DURATION_BUCKETS.length + 1), exemplars }
      this.#durations.set(key, cell)
    }
    return cell
  }

  countException(error: unknown): void {
    const name = error instanceof Error ? error.constructor.name : typeof error
    let cell = this.#exceptions.get(name)
    if (cell === undefined) {
      const type = this.#exceptions.size < MAX_EXCEPTION_TYPES ? name : 'other'
      cell = this.#exceptions.get(type) ?? { labels: Object.freeze({ exception_type: type, environment: this.environment }), value: 0, exemplar: emptySlot() }
      this.#exceptions.set(type, cell)
    }
    cell.value++
  }

  /** Publishes the cells as the four series of lib/README.md §4. */
  registerIn(registry: Registry): void {
    const env = { environment: this.environment }
    const metrics: readonly Collector[] = [
      counter('http_requests_total', 'Total HTTP requests.', this.#requests),
      histogram('http_request_duration_seconds', 'HTTP request duration in seconds.', this.#durations),
      collector('http_requests_in_flight', 'HTTP requests currently being processed.', 'gauge', () => [{ labels: env, value: this.inFlight }]),
      counter('http_exceptions_total', 'Exceptions raised while handling HTTP requests.', this.#exceptions),
    ]
    // prom-client renders any object with this shape; its declared parameter type names only its own classes.
    for (const metric of metrics) registry.registerMetric(metric as unknown as Metric)
  }
}

type SeriesType = 'counter' | 'gauge' | 'histogram'
/** prom-client prints `exemplar` in OpenMetrics output only; the text format never shows it. */
type Exemplar = { labelSet: Labels; value: number; timestamp: number }
type Value = { labels: Labels; value: number; metricName?: string; exemplar?: Exemplar }

const exemplarOf = (slot: ExemplarSlot): Exemplar | undefined =>
  slot.traceId === undefined ? undefined : { labelSet: { trace_id: slot.traceId }, value: slot.value, timestamp: slot.timestamp }

const withExemplar = (value: Value, slot: ExemplarSlot): Value => {
  const exemplar = exemplarOf(slot)
  if (exemplar !== undefined) value.exemplar = exemplar
  return value
}
type Collector = {
  name: string
  readonly help: string
  readonly type: SeriesType
  readonly aggregator: 'sum'
  get(): { name: string; help: string; type: SeriesType; aggregator: 'sum'; values: Value[] }
  reset(): void
}

const collector = (name: string, help: string, type: SeriesType, values: () => Value[], reset: () => void = () => {}): Collector => ({
  // `name` stays writable: the registry strips `_total` from counter names for OpenMetrics output.
  name,
  help,
  type,
  aggregator: 'sum',
  get() {
    return { name: this.name, help, type, aggregator: 'sum', values: values() }
  },
  reset,
})

const counter = (name: string, help: string, cells: Map<string, CounterCell>): Collector =>
  collector(
    name,
    help,
    'counter',
    () => Array.from(cells.values(), (c) => withExemplar({ labels: c.labels, value: c.value }, c.exemplar)),
    () =>
      cells.forEach((c) => {
        c.value = 0
        c.exemplar.traceId = undefined
      }),
  )

const histogram = (name: string, help: string, cells: Map<string, HistogramCell>): Collector =>
  collector(
    name,
    help,
    'histogram',
    () => {
      const values: Value[] = []
      for (const cell of cells.values()) {
        let cumulative = 0
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += cell.buckets[i] as number
          values.push(
            withExemplar({ metricName: `${name}_bucket`, labels: { ...cell.labels, le: String(le) }, value: cumulative }, cell.exemplars[i] as ExemplarSlot),
          )
        })
        values.push(
          withExemplar(
            { metricName: `${name}_bucket`, labels: { ...cell.labels, le: '+Inf' }, value: cell.count },
            cell.exemplars[DURATION_BUCKETS.length] as ExemplarSlot,
          ),
          { metricName: `${name}_sum`, labels: cell.labels, value: cell.sum },
          { metricName: `${name}_count`, labels: cell.labels, value: cell.count },
        )
      }
      return values
    },
    () =>
      cells.forEach((c) => {
        c.count = 0
        c.sum = 0
        c.buckets.fill(0)
        for (const slot of c.exemplars) slot.traceId = undefined
      }),
  )
