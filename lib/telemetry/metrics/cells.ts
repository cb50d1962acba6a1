// Metric cells: one labelled series kept as plain numbers, resolved once by whoever owns it and
// then bumped in place. prom-client's `labels()` children hash and validate their label object on
// every call (about 0.3 µs a call, four calls a prediction); a cell does no label work per request
// at all. The cells are published through prom-client's registry as collectors, which prom-client
// renders as it renders its own metrics; the service's writer (exposition.ts) writes the same bytes
// from the label text each cell makes once, with its label set (label-text.ts).
import type { Metric, Registry } from 'prom-client'
import { labelPair, labelText } from './label-text.js'

export type Labels = Readonly<Record<string, string>>

/**
 * An OpenMetrics exemplar kept in place: the latest sampled request's trace id, its value and
 * when (seconds since the epoch). Written field by field, so a sampled request allocates nothing.
 */
export type ExemplarSlot = { traceId: string | undefined; value: number; timestamp: number }
/** `text` is `labels` as the exposition writes them (label-text.ts), made with the cell. */
export type CounterCell = { readonly labels: Labels; readonly text: string; value: number; readonly exemplar: ExemplarSlot }
export type GaugeCell = { readonly labels: Labels; readonly text: string; value: number }
export type HistogramCell = {
  readonly labels: Labels
  readonly text: string
  /** Upper bounds, ascending; the `+Inf` bucket is the last slot of `buckets`. */
  readonly bounds: readonly number[]
  count: number
  sum: number
  /** Per-bucket (not cumulative) counts, one more than `bounds`. */
  readonly buckets: Float64Array
  readonly exemplars: readonly ExemplarSlot[]
}

/**
 * A copy of `labels`, built from `{}`. Node 20's V8 gives a spread copy (`{ ...labels, bin }`) a
 * hidden class of its own once its values are strings of different kinds (a model name read from
 * a path, a version from JSON): about 220 bytes a label set that no other set shares, 27 of them a
 * model at publish and one per histogram bucket at each scrape. Copies made by `Object.assign`
 * share one per set of names.
 */
const copyLabels = (labels: Labels): Record<string, string> => Object.assign({}, labels)

/** `labels` and `name`="value" after them, as a new object. */
export const withLabel = (labels: Labels, name: string, value: string): Record<string, string> => {
  const copy = copyLabels(labels)
  copy[name] = value
  return copy
}

/** The frozen copy of `labels` a series keeps for its life. */
export const labelSet = (labels: Labels): Labels => Object.freeze(copyLabels(labels))

const emptySlot = (): ExemplarSlot => ({ traceId: undefined, value: 0, timestamp: 0 })

export const counterCell = (labels: Labels): CounterCell => ({ labels: labelSet(labels), text: labelText(labels), value: 0, exemplar: emptySlot() })
export const gaugeCell = (labels: Labels, value = 0): GaugeCell => ({ labels: labelSet(labels), text: labelText(labels), value })
/** A summary without quantiles: a running sum and count of observations that are never negative. */
export type SumCell = { readonly labels: Labels; readonly text: string; count: number; sum: number }
export const sumCell = (labels: Labels): SumCell => ({ labels: labelSet(labels), text: labelText(labels), count: 0, sum: 0 })
export const histogramCell = (labels: Labels, bounds: readonly number[]): HistogramCell => ({
  labels: labelSet(labels),
  text: labelText(labels),
  bounds,
  count: 0,
  sum: 0,
  buckets: new Float64Array(bounds.length + 1),
  exemplars: Array.from({ length: bounds.length + 1 }, emptySlot),
})

// `a[i]` for a bucket index (0 to bounds.length), which noUncheckedIndexedAccess cannot see: this
// module's only element assertions, one per array type so that each stays monomorphic when inlined.
const boundAt = (a: readonly number[], i: number): number => a[i] as number
const bucketAt = (a: Float64Array, i: number): number => a[i] as number
const slotAt = (a: readonly ExemplarSlot[], i: number): ExemplarSlot => a[i] as ExemplarSlot
const itemAt = (a: readonly string[], i: number): string => a[i] as string

const keep = (slot: ExemplarSlot, traceId: string, value: number): void => {
  slot.traceId = traceId
  slot.value = value
  slot.timestamp = Date.now() / 1000
}

/** Counts one; a sampled request (`traceId` set) becomes the cell's exemplar. */
export const count = (cell: CounterCell, traceId: string | undefined): void => {
  cell.value++
  if (traceId !== undefined) keep(cell.exemplar, traceId, 1)
}

/** Observes a value; a sampled request becomes the exemplar of the bucket it falls in. */
export const observe = (cell: HistogramCell, value: number, traceId: string | undefined): void => {
  const { bounds } = cell
  let i = 0
  while (i < bounds.length && value > boundAt(bounds, i)) i++
  cell.buckets[i] = bucketAt(cell.buckets, i) + 1
  cell.count++
  cell.sum += value
  if (traceId !== undefined) keep(slotAt(cell.exemplars, i), traceId, value)
}

type SeriesType = 'counter' | 'gauge' | 'histogram' | 'summary'
/** prom-client prints `exemplar` in OpenMetrics output only; the text format never shows it. */
type Exemplar = { labelSet: Labels; value: number; timestamp: number }
/**
 * `labelText`, where a series made it once with the label set, is `labels` as label-text.ts writes
 * them: the exposition writer then takes it as it is. prom-client reads `labels` alone.
 */
type Value = { labels: Labels; labelText?: string | undefined; value: number; metricName?: string; exemplar?: Exemplar }
type Collector = {
  name: string
  readonly help: string
  readonly type: SeriesType
  readonly aggregator: 'sum'
  get(): { name: string; help: string; type: SeriesType; aggregator: 'sum'; values: Iterable<Value> }
  reset(): void
}

/**
 * One series for the registry: its cells, read at each scrape in the order they were created.
 *
 * A cell series hands its samples out one cell at a time (a generator), not as one array: the
 * exposition writer (exposition.ts) formats them between turns of the loop, and an array of every
 * sample of 500 models was built in one turn and alive through every collection of the render.
 * A cell's samples are read together (a histogram's buckets, sum and count in one step), so a
 * prediction between two turns never shows in some of a cell's buckets and not the others.
 * prom-client's own render reads any iterable; so does lib/insights/figures.ts.
 */
export type Series = Readonly<{ collector: Collector }>

const withExemplar = (value: Value, slot: ExemplarSlot): Value => {
  if (slot.traceId !== undefined) value.exemplar = { labelSet: { trace_id: slot.traceId }, value: slot.value, timestamp: slot.timestamp }
  return value
}

const collector = (name: string, help: string, type: SeriesType, values: () => Iterable<Value>, reset: () => void): Series => ({
  collector: {
    // `name` stays writable: the registry strips `_total` from counter names for OpenMetrics output.
    name,
    help,
    type,
    aggregator: 'sum',
    get() {
      return { name: this.name, help, type, aggregator: 'sum', values: values() }
    },
    reset,
  },
})

export const counterSeries = (name: string, help: string, cells: { values(): Iterable<CounterCell> }): Series =>
  collector(
    name,
    help,
    'counter',
    function* () {
      for (const c of cells.values()) yield withExemplar({ labels: c.labels, labelText: c.text, value: c.value }, c.exemplar)
    },
    () => {
      for (const c of cells.values()) {
        c.value = 0
        c.exemplar.traceId = undefined
      }
    },
  )

export const gaugeSeries = (name: string, help: string, values: () => Iterable<Value>): Series => collector(name, help, 'gauge', values, () => {})

/**
 * A counter whose numbers live elsewhere (typed arrays bumped by index): `values` reads them at
 * each scrape, `reset` zeroes them.
 */
export const counterValueSeries = (name: string, help: string, values: () => Iterable<Value>, reset: () => void): Series =>
  collector(name, help, 'counter', values, reset)

/** One sample as a series reports it. */
export type SeriesValue = Value

/**
 * Each bucket's `le` value, its pair, and the pair after a comma, the `+Inf` bucket's last: made
 * once per array of bounds. A bucket's text is its cell's and `after` (one string joined at each
 * scrape, which a cell keeping 15 texts would hold for its life).
 */
type BucketLabels = Readonly<{ values: readonly string[]; pairs: readonly string[]; after: readonly string[] }>
const bucketLabelsOf = new WeakMap<readonly number[], BucketLabels>()
const bucketLabels = (bounds: readonly number[]): BucketLabels => {
  let made = bucketLabelsOf.get(bounds)
  if (made === undefined) {
    const values = [...bounds.map(String), '+Inf']
    const pairs = values.map((value) => labelPair('le', value))
    bucketLabelsOf.set(bounds, (made = { values, pairs, after: pairs.map((pair) => `,${pair}`) }))
  }
  return made
}

/** A histogram cell's samples, read in one step. */
const histogramValues = (cell: HistogramCell, bucket: string, sum: string, count: string): Value[] => {
  const values: Value[] = []
  const { bounds } = cell
  const le = bucketLabels(bounds)
  let cumulative = 0
  for (let i = 0; i <= bounds.length; i++) {
    // The `+Inf` bucket is the count itself.
    cumulative = i === bounds.length ? cell.count : cumulative + bucketAt(cell.buckets, i)
    const labels = withLabel(cell.labels, 'le', itemAt(le.values, i))
    values.push(
      withExemplar(
        { metricName: bucket, labels, labelText: cell.text === '' ? itemAt(le.pairs, i) : cell.text + itemAt(le.after, i), value: cumulative },
        slotAt(cell.exemplars, i),
      ),
    )
  }
  const { labels, text } = cell
  values.push({ metricName: sum, labels, labelText: text, value: cell.sum }, { metricName: count, labels, labelText: text, value: cell.count })
  return values
}

export const histogramSeries = (name: string, help: string, cells: { values(): Iterable<HistogramCell> }): Series => {
  const bucket = `${name}_bucket`
  const sum = `${name}_sum`
  const count = `${name}_count`
  return collector(
    name,
    help,
    'histogram',
    function* () {
      for (const cell of cells.values()) yield* histogramValues(cell, bucket, sum, count)
    },
    () => {
      for (const c of cells.values()) {
        c.count = 0
        c.sum = 0
        c.buckets.fill(0)
        for (const slot of c.exemplars) slot.traceId = undefined
      }
    },
  )
}

/** Summaries without quantiles: `<name>_sum` and `<name>_count` per cell. */
export const summarySeries = (name: string, help: string, cells: { values(): Iterable<SumCell> }): Series => {
  const sumName = `${name}_sum`
  const countName = `${name}_count`
  return collector(
    name,
    help,
    'summary',
    function* () {
      // Both read in one step: a sum and its count from the same moment.
      for (const { labels, text, sum, count } of cells.values())
        yield* [
          { metricName: sumName, labels, labelText: text, value: sum },
          { metricName: countName, labels, labelText: text, value: count },
        ]
    },
    () => {
      for (const c of cells.values()) {
        c.count = 0
        c.sum = 0
      }
    },
  )
}

/** Publishes series in the registry; prom-client renders any object of the collector's shape. */
export const registerSeries = (registry: Registry, series: readonly Series[]): void => {
  // Its declared parameter type names only prom-client's own classes.
  for (const { collector: metric } of series) registry.registerMetric(metric as unknown as Metric)
}
