// The /metrics text, written from the registry's series a slice of the event loop at a time.
//
// prom-client's `Registry.metrics()` formats every family in one synchronous run: its awaits only
// queue microtasks, so at 500 models (~40 000 samples) every request waiting on the instance
// waited the whole render. This writer yields a turn of the loop whenever a slice has run its
// length (lib/core/schedule/slices.ts). It keeps no text between scrapes: a cache of each series'
// label text (tried) saved no measurable time, and its 40 000 new strings, alive through the young
// collections of the first scrapes, made those the longest stalls.
//
// The text is byte for byte what prom-client 15.1.3's Registry renders for the same registry, in
// both formats (test/telemetry/metrics/exposition.test.ts compares the two on a large store):
// families in registration order; `# HELP`/`# TYPE` with `\` and newlines escaped; a sample's own
// labels, then the registry's default labels it does not set, then a histogram's shared labels;
// values as prom-client writes them (`Nan`, `+Inf`, `-Inf`); in OpenMetrics, counters named
// without `_total` in HELP/TYPE and with it on samples, exemplars, and `# EOF`.
import { nextSlice, sliceElapsed } from '../../core/schedule/slices.js'

type LabelValue = string | number | undefined
type LabelSet = Readonly<Record<string, LabelValue>>
type Exemplar = Readonly<{ labelSet: LabelSet; value: number; timestamp: number }>
type Sample = Readonly<{
  metricName?: string
  labels?: LabelSet
  sharedLabels?: LabelSet
  value: number
  /** prom-client leaves `null` where a series has had no exemplar yet. */
  exemplar?: Exemplar | null
}>
type Family = Readonly<{ name: string; help: string; type: string; values?: Iterable<Sample> }>
/** What a registered metric offers the writer: prom-client's metrics and lib's cell collectors alike. */
type Source = Readonly<{ get(): Family | Promise<Family>; getForPromString?: () => Family | Promise<Family> }>

/**
 * Lines joined into one flat part at a time, and formatted between two looks at the clock: 128
 * took up to 0.3 ms under load, a slice's overrun.
 */
export const LINES_PER_PART = 64

const escapeText = (text: string): string => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
/** What a label value escapes; one scan finds none in nearly every value, where three replaces each scanned it. */
const NEEDS_ESCAPE = /[\\\n"]/
const escapeLabel = (value: LabelValue): LabelValue => (typeof value === 'string' && NEEDS_ESCAPE.test(value) ? escapeText(value).replace(/"/g, '\\"') : value)

/** prom-client's number text. */
const valueText = (value: number): string => {
  if (Number.isNaN(value)) return 'Nan'
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf'
  return `${value}`
}

/** Every metric prom-client keeps answers `get()`; the registry's own type for them does not say so. */
const isSource = (metric: object): metric is Source => 'get' in metric && typeof metric.get === 'function'

/** UTF-8 written into a buffer that doubles as it fills; `bytes()` is what was written. */
class ByteSink {
  length = 0

  constructor(private buffer: Buffer) {}

  write(text: string): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for the worst case, so nothing is cut.
    const needed = this.length + 3 * text.length
    if (needed > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, 2 * this.buffer.length))
      this.buffer.copy(grown, 0, 0, this.length)
      this.buffer = grown
    }
    this.length += this.buffer.write(text, this.length)
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length)
  }
}

const has = (set: LabelSet | undefined, name: string): boolean => set !== undefined && Object.hasOwn(set, name)

export type ExpositionWriter = Readonly<{
  /** The exposition of `metrics` in OpenMetrics or the text format, written across turns of the loop. */
  render(metrics: readonly object[], openMetrics: boolean): Promise<Buffer>
  /**
   * Hands back a body `render` returned, once the socket holds all of it (never before: the next
   * render writes into it). A body handed back twice, or never, is harmless.
   */
  release(body: Buffer): void
}>

/** `name="value",…` of a label set as it is: shared labels and an exemplar's. */
const plainLabelText = (labels: LabelSet): string => {
  let text = ''
  for (const name of Object.keys(labels)) text += `${text === '' ? '' : ','}${name}="${escapeLabel(labels[name])}"`
  return text
}

const exemplarText = (exemplar: Exemplar): string => ` # {${plainLabelText(exemplar.labelSet)}} ${valueText(exemplar.value)} ${exemplar.timestamp}`

/** The label text of a sample, between its braces, for a registry whose default labels are `defaults`. */
const createLabelText = (defaults: LabelSet): ((sample: Sample) => string) => {
  const defaultNames = Object.keys(defaults)

  /** A sample's own labels, then the defaults it does not set, less `shared`. */
  const ownLabelText = (labels: LabelSet, shared: LabelSet | undefined): string => {
    let text = ''
    for (const name of Object.keys(labels)) {
      if (!has(shared, name)) text += `${text === '' ? '' : ','}${name}="${escapeLabel(labels[name])}"`
    }
    for (const name of defaultNames) {
      if (!has(labels, name) && !has(shared, name)) text += `${text === '' ? '' : ','}${name}="${escapeLabel(defaults[name])}"`
    }
    return text
  }

  return (sample) => {
    const labels = sample.labels ?? {}
    const { sharedLabels } = sample
    if (sharedLabels === undefined) return ownLabelText(labels, undefined)
    const own = ownLabelText(labels, sharedLabels)
    const shared = plainLabelText(sharedLabels)
    return own === '' ? shared : shared === '' ? own : `${own},${shared}`
  }
}

/** A writer for a registry whose default labels are `defaults` (set once, at start-up). */
export const createExpositionWriter = (defaults: LabelSet): ExpositionWriter => {
  const labelText = createLabelText(defaults)
  // The body's buffer is kept for the next scrape. Grown from 64 KiB by doubling at every scrape,
  // the buffers of one 4 MiB body came to 8 MiB outside the heap, and that much new external
  // memory a scrape started a full collection every time (up to 10 ms in one pause, at 500 models).
  // A buffer goes out with a body and comes back through `release` once sent; a body still being
  // sent is never written into: a scrape meanwhile takes a new buffer, of the last body's size.
  let spare: Buffer | undefined
  let lastLength = 64 * 1024
  // Weak: a body whose connection failed before it was sent is never handed back, and must not be kept.
  const lent = new WeakSet<Buffer>()
  const take = (): Buffer => {
    const buffer = spare ?? Buffer.allocUnsafeSlow(lastLength + (lastLength >> 3))
    spare = undefined
    return buffer
  }

  const render = async (metrics: readonly object[], openMetrics: boolean): Promise<Buffer> => {
    // Lines are gathered in short arrays, joined as they fill and encoded at once into a buffer
    // outside the JS heap. Kept as strings, the text written so far (megabytes at hundreds of
    // models) was live at every young-generation collection of the render, and each copied it:
    // 20 to 30 ms a collection, each a stall of the loop.
    const body = new ByteSink(take())
    const lines: string[] = []
    const familySeparator = openMetrics ? '\n' : '\n\n'
    let sliceStart = performance.now()
    for (const metric of metrics) {
      if (!isSource(metric)) throw new TypeError('a registered metric has no get()')
      const family = await (metric.getForPromString ?? metric.get).call(metric)
      const counter = openMetrics && family.type === 'counter'
      const name = escapeText(counter ? family.name.replace(/_total$/, '') : family.name)
      const separator = body.length === 0 && lines.length === 0 ? '' : familySeparator
      lines.push(`${separator}# HELP ${name} ${escapeText(family.help)}\n# TYPE ${name} ${family.type}`)
      for (const sample of family.values ?? []) {
        const labels = labelText(sample)
        let line = `\n${sample.metricName ?? name}${counter ? '_total' : ''}${labels === '' ? '' : `{${labels}}`} ${valueText(sample.value)}`
        if (openMetrics && sample.exemplar) line += exemplarText(sample.exemplar)
        // At least, not exactly: a family's HELP and TYPE line is pushed unchecked, and may fill the part.
        if (lines.push(line) >= LINES_PER_PART) {
          body.write(lines.join(''))
          lines.length = 0
          if (sliceElapsed(sliceStart)) sliceStart = await nextSlice()
        }
      }
      // A family's get() may read the process (/proc, heap spaces) before its first sample.
      if (sliceElapsed(sliceStart)) sliceStart = await nextSlice()
    }
    body.write(`${lines.join('')}${openMetrics ? '\n# EOF\n' : '\n'}`)
    const bytes = body.bytes()
    lastLength = bytes.length
    lent.add(bytes)
    return bytes
  }

  const release = (body: Buffer): void => {
    // Only a body out comes back, once (kept by the body, not its buffer, which later bodies share):
    // a second hand-back of a body whose buffer a later render took would write two into one.
    if (!lent.delete(body)) return
    // allocUnsafeSlow: a buffer of its own memory, the whole of its ArrayBuffer.
    const whole = Buffer.from(body.buffer)
    if (spare === undefined || spare.length < whole.length) spare = whole
  }
  return { render, release }
}
