// The live side of drift: per model, the last `capacity` input rows the predict path accepted, in
// one Float64Array used as a ring (row-major, `width` values a row, as lib/models/inference/features.ts
// encodes them for every runtime: a numerical input as its value, a categorical one as its level
// index), and with `recordAnswered` what the model answered as each row's last value (a class
// index, or a regressor's value). NaN marks a missing value; the drift check counts those apart
// from the bins.
//
// Memory. A window starts at INITIAL_ROWS rows and doubles, up to `capacity`, when a batch would not
// fit. Until it is full no row wraps, so a grown window holds the same rows in the same slots as one
// made full-size, and every score reads alike (test/drift/window.test.ts). 1000 rows of iris's five
// columns are 40 KB, allocated at load for every model before: most of what a model held.
//
// hot path: `record` runs inside every successful prediction. It copies values into memory already
// allocated, and allocates nothing per row; a call allocates only when the window grows, at most
// log2(capacity / INITIAL_ROWS) times in its life.
import { f64At } from './psi.js'

/** Rows a new window is made with. */
export const INITIAL_ROWS = 16

export class FeatureWindow {
  /** Values per row: the model's input count. */
  readonly width: number
  /** Most rows held; older rows are overwritten. */
  readonly capacity: number
  /** `width` values a row for the rows allocated so far; only the first `size` rows are meaningful, in no particular order. */
  values: Float64Array
  /** Rows held now, up to `capacity`. */
  size = 0
  /** Rows recorded since the window was made, the overwritten ones included. */
  total = 0
  /** The slot the next row goes to. */
  private next = 0

  constructor(width: number, capacity: number, initialRows = INITIAL_ROWS) {
    if (!Number.isSafeInteger(width) || width < 1) throw new RangeError(`width must be a positive integer, is ${width}`)
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, is ${capacity}`)
    this.width = width
    this.capacity = capacity
    this.values = new Float64Array(width * Math.min(capacity, initialRows))
  }

  /** Appends the first `rows` rows of `features` (row-major, `width` a row), dropping the oldest. */
  record(features: Float64Array, rows: number): void {
    this.append(features, rows, this.width, undefined)
  }

  /**
   * Appends the first `rows` rows of `features` (`width - 1` values a row) with, as each row's last
   * value, what the model answered for it (`answers[r]`; NaN, missing, when there are none).
   */
  recordAnswered(features: Float64Array, rows: number, answers: ArrayLike<number> | undefined): void {
    this.append(features, rows, this.width - 1, answers)
  }

  /** Copies `inputs` values a row, and the row's answer into the last slot when `inputs` < `width`. */
  private append(features: Float64Array, rows: number, inputs: number, answers: ArrayLike<number> | undefined): void {
    // Rare: only while not full (and so not wrapped) does a batch outgrow the rows allocated.
    if (this.size < this.capacity && this.values.length < this.width * (this.size + rows)) this.grow(this.size + rows)
    const { width, capacity, values } = this
    // Rows a batch would overwrite before the batch ends are skipped, not copied twice.
    const skipped = rows > capacity ? rows - capacity : 0
    let slot = (this.next + skipped) % capacity
    for (let r = skipped; r < rows; r++) {
      const from = r * inputs
      const to = slot * width
      for (let j = 0; j < inputs; j++) values[to + j] = f64At(features, from + j)
      if (inputs < width) values[to + inputs] = answers === undefined ? Number.NaN : (answers[r] as number)
      slot = slot + 1 === capacity ? 0 : slot + 1
    }
    this.next = slot
    this.total += rows
    this.size = Math.min(capacity, this.size + rows)
  }

  /** Doubles the rows allocated, or more to hold `needed`, up to `capacity`; the rows held stay in their slots. */
  private grow(needed: number): void {
    const rows = Math.min(this.capacity, Math.max(needed, (2 * this.values.length) / this.width))
    const values = new Float64Array(rows * this.width)
    values.set(this.values)
    this.values = values
  }
}
