// The /metrics text, written from the registry's series a slice of the event loop at a time.
//
// prom-client's `Registry.metrics()` formats every family in one synchronous run: its awaits only
// queue microtasks, so at 500 models (~40 000 samples) every request waiting on the instance
// waited the whole render. This writer yields a turn of the loop whenever a slice has run its
// length (lib/core/schedule/slices.ts).
//
// A sample of lib's cells brings its label text, made once with its label set (label-text.ts): the
// writer adds its head, that text and the defaults as three pieces, joined per part, and makes no
// string of its own. Against label text built per sample at each scrape, a scrape of 500 models
// fell from 44 to 13 MB of garbage and from 37 to 21 ms (Node 20, median of 40, idle). A cache
// filled at scrape time was tried first: its 40 000 new strings, alive through the young
// collections of the first scrapes, made those the longest stalls; this text is made at publish.
//
// The text is byte for byte what prom-client 15.1.3's Registry renders for the same registry, in
// both formats (test/telemetry/metrics/exposition.test.ts compares the two on a large store):
// families in registration order; `# HELP`/`# TYPE` with `\` and newlines escaped; a sample's own
// labels, then the registry's default labels it does not set, then a histogram's shared labels;
// values as prom-client writes them (`Nan`, `+Inf`, `-Inf`); in OpenMetrics, counters named
// without `_total` in HELP/TYPE and with it on samples, exemplars, and `# EOF`.
import { nextSlice, sliceElapsed } from '../../core/schedule/slices.js'
import { escapeText, labelPair, labelText, type LabelSet } from './label-text.js'

type Exemplar = Readonly<{ labelSet: LabelSet; value: number; timestamp: number }>
type Sample = Readonly<{
  metricName?: string
  labels?: LabelSet
  /** `labels` as labelText() writes them, where the series made that once (lib's cells): taken as it is. */
  labelText?: string | undefined
  sharedLabels?: LabelSet
  value: number
  /** prom-client leaves `null` where a series has had no exemplar yet. */
  exemplar?: Exemplar | null
}>
type Family = Readonly<{ name: string; help: string; type: string; values?: Iterable<Sample> }>
/** What a registered metric offers the writer: prom-client's metrics and lib's cell collectors alike. */
type Source = Readonly<{ get(): Family | Promise<Family>; getForPromString?: () => Family | Promise<Family> }>

/**
 * Samples joined into one flat part at a time, and formatted between two looks at the clock: 128
 * took up to 0.3 ms under load, a slice's overrun.
 */
export const LINES_PER_PART = 64

/** prom-client's number text. */
const valueText = (value: number): string => {
  if (Number.isNaN(value)) return 'Nan'
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf'
  return `${value}`
}

/** Every metric prom-client keeps answers `get()`; the registry's own type for them does not say so. */
const isSource = (metric: object): metric is Source => 'get' in metric && typeof metric.get === 'function'

/**
 * The pieces of a part of the text, written by index into one array kept for the render: `push`
 * after `length = 0` let V8 drop the array's store and grow it again from 17 slots, about 190
 * bytes of garbage a sample (6.5 MB a scrape at 500 models).
 */
class Parts {
  private readonly items: string[] = []
  private count = 0

  add(piece: string): void {
    this.items[this.count++] = piece
  }

  isEmpty(): boolean {
    return this.count === 0
  }

  /** The pieces added since the last `take`, as one string. */
  take(): string {
    this.items.length = this.count
    this.count = 0
    return this.items.join('')
  }
}

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

/** The start of a sample's line: its name (with `_total` where OpenMetrics adds it), without and with `{`. */
type Head = Readonly<{ bare: string; open: string }>

/**
 * Adds a sample's line up to its value, as pieces (joined with the part, so a sample makes no
 * string of its own): its head, then its own labels less `shared`, then the registry's defaults it
 * does not set, then `shared`, as prom-client orders them; then `} ` or ` `.
 */
type LinePieces = (parts: Parts, head: Head, sample: Sample) => void

const createLinePieces = (defaults: LabelSet): LinePieces => {
  const defaultLabels = Object.keys(defaults).map((name) => ({ name, pair: labelPair(name, defaults[name]) }))
  // A sample of a cell sets none of the defaults: its text, then every default, in one piece.
  const allDefaults = `${defaultLabels.map(({ pair }) => `,${pair}`).join('')}} `

  /** A sample's own labels less `shared`, made at each scrape: for series that keep no text. */
  const ownText = (labels: LabelSet, shared: LabelSet | undefined): string => {
    let text = ''
    for (const name in labels) if (!has(shared, name)) text += `${text === '' ? '' : ','}${labelPair(name, labels[name])}`
    return text
  }

  /** True when `labels` sets none of the defaults. */
  const setsNoDefault = (labels: LabelSet): boolean => {
    for (const { name } of defaultLabels) if (labels[name] !== undefined) return false
    return true
  }

  return (parts, head, sample) => {
    const labels = sample.labels ?? {}
    const shared = sample.sharedLabels
    const kept = shared === undefined ? sample.labelText : undefined
    // A cell's sample: three pieces, its text made once and the rest constant.
    if (kept !== undefined && kept !== '' && setsNoDefault(labels)) {
      parts.add(head.open)
      parts.add(kept)
      parts.add(allDefaults)
      return
    }
    const own = kept ?? ownText(labels, shared)
    let open = own !== ''
    if (open) {
      parts.add(head.open)
      parts.add(own)
    }
    for (const { name, pair } of defaultLabels) {
      if (has(labels, name) || has(shared, name)) continue
      if (open) parts.add(',')
      else parts.add(head.open)
      parts.add(pair)
      open = true
    }
    if (shared !== undefined) {
      const text = labelText(shared)
      if (text !== '') {
        if (open) parts.add(',')
        else parts.add(head.open)
        parts.add(text)
        open = true
      }
    }
    parts.add(open ? '} ' : head.bare)
  }
}

/** An exemplar's text, after its sample's value, as pieces. */
const exemplarPieces = (parts: Parts, exemplar: Exemplar): void => {
  parts.add(' # {')
  parts.add(labelText(exemplar.labelSet))
  parts.add('} ')
  parts.add(valueText(exemplar.value))
  parts.add(' ')
  parts.add(`${exemplar.timestamp}`)
}

/** A writer for a registry whose default labels are `defaults` (set once, at start-up). */
export const createExpositionWriter = (defaults: LabelSet): ExpositionWriter => {
  const linePieces = createLinePieces(defaults)
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
    // Lines are gathered in pieces, joined as a part fills and encoded at once into a buffer
    // outside the JS heap. Kept as strings, the text written so far (megabytes at hundreds of
    // models) was live at every young-generation collection of the render, and each copied it:
    // 20 to 30 ms a collection, each a stall of the loop.
    const body = new ByteSink(take())
    // The pieces of up to LINES_PER_PART samples, joined into one string as they fill.
    const parts = new Parts()
    let samples = 0
    const familySeparator = openMetrics ? '\n' : '\n\n'
    let sliceStart = performance.now()
    for (const metric of metrics) {
      if (!isSource(metric)) throw new TypeError('a registered metric has no get()')
      const family = await (metric.getForPromString ?? metric.get).call(metric)
      const counter = openMetrics && family.type === 'counter'
      const name = escapeText(counter ? family.name.replace(/_total$/, '') : family.name)
      const suffix = counter ? '_total' : ''
      const separator = body.length === 0 && parts.isEmpty() ? '' : familySeparator
      parts.add(`${separator}# HELP ${name} ${escapeText(family.help)}\n# TYPE ${name} ${family.type}`)
      // A family's samples bear its name or, a histogram's, one of three.
      const heads = new Map<string, Head>()
      for (const sample of family.values ?? []) {
        const sampleName = sample.metricName ?? name
        let head = heads.get(sampleName)
        if (head === undefined) heads.set(sampleName, (head = { bare: `\n${sampleName}${suffix} `, open: `\n${sampleName}${suffix}{` }))
        linePieces(parts, head, sample)
        parts.add(valueText(sample.value))
        if (openMetrics && sample.exemplar) exemplarPieces(parts, sample.exemplar)
        // At least, not exactly: a family's HELP and TYPE line is pushed uncounted, and may fill the part.
        if (++samples >= LINES_PER_PART) {
          body.write(parts.take())
          samples = 0
          if (sliceElapsed(sliceStart)) sliceStart = await nextSlice()
        }
      }
      // A family's get() may read the process (/proc, heap spaces) before its first sample.
      if (sliceElapsed(sliceStart)) sliceStart = await nextSlice()
    }
    body.write(`${parts.take()}${openMetrics ? '\n# EOF\n' : '\n'}`)
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
