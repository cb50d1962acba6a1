// The labels `svc loadgen --feedback` sends back: each row's truth, read from the rows' label column
// beside the inputs (rows.ts), and the noise --label-noise puts in them so the realized-quality
// alerts can be watched firing.
//
// The label column is the model's first output by default (iris `species`, cars
// `miles_per_gallon`: the column svc's own rows end with), or the one --label names. A
// classifier's truth is one of its classes (CSV text, an NDJSON string); a regressor's a finite
// number. A row without a label is refused: the file says what was true, or it is not labelled.
//
// Noise, drawn per label when its row is sent, in sending order, from its own seeded source (so the
// rows sent are the same with or without it), and applied once the answer says which version
// answered: a share P of that version's labels is made wrong (--label-noise gives P per version, so
// a canary's labels can be worse than the default's). A label is wrong when its first draw is under
// P, so the labels wrong at 0.1 are among those wrong at 0.3 for the same seed. A classifier's
// becomes one of its other classes, each as likely; a regressor's truth is moved by
// REGRESSION_NOISE of itself, up or down as likely (mpg 20 is sent as 10 or 30), which at P = 0.3
// takes the cars model's RMSE from 3.9 to about 7.5.
import type { TableSource } from '../profile/table.js'
import { CELLS } from '../profile/table.js'
import { LineError, quote } from '../profile/errors.js'

/** What was true for a row: a class, or a regressor's value. */
export type Truth = string | number

export type LabelColumn = Readonly<{
  name: string
  /** A classifier's classes; undefined for a regressor. */
  classes: readonly string[] | undefined
  /** How a message says where the name came from. */
  namedBy: string
}>

/** How far --label-noise moves a regressor's truth: this share of it, up or down. */
export const REGRESSION_NOISE = 0.5

/** How a cell of the label column is read; throws LineError. */
export const truthReader = (label: LabelColumn, source: TableSource): ((cell: unknown, line: number) => Truth) => {
  const cells = CELLS[source.format]
  const { name, classes } = label
  const missing = (line: number): LineError => new LineError(line, `${name}: no label (--feedback sends every row's; leave out the rows without one)`)
  if (classes === undefined) {
    return (cell, line) => {
      if (cells.isMissing(cell)) throw missing(line)
      const value = cells.number(cell)
      if (value === undefined) throw new LineError(line, `${name}: ${quote(cell)} is not a finite number (the label of a regressor)`)
      return value
    }
  }
  const known = new Set(classes)
  return (cell, line) => {
    if (cells.isMissing(cell)) throw missing(line)
    const level = cells.level(cell)
    if (level === undefined || !known.has(level)) throw new LineError(line, `${name}: ${quote(cell)} is not one of the model's classes (${classes.join(', ')})`)
    return level
  }
}

/** What one label's noise drew when its row was sent, before any version answered: `wrong` (under P: made wrong) and `how`, each in [0, 1). */
export type NoiseDraw = Readonly<{ wrong: number; how: number }>

/** Two draws from `random` for each label, whatever its share turns out to be, so later labels draw the same. */
export const drawNoise = (random: () => number): NoiseDraw => ({ wrong: random(), how: random() })

/** The truth as sent for a version whose share of wrong labels is `share`: itself unless `draw.wrong` is under it. */
export const noisyTruth = (label: LabelColumn, truth: Truth, draw: NoiseDraw, share: number): Truth => {
  if (!(draw.wrong < share)) return truth
  const { classes } = label
  if (classes === undefined) return (truth as number) * (1 + (draw.how < 0.5 ? -REGRESSION_NOISE : REGRESSION_NOISE))
  // One of the other classes, each as likely: skip over the true one.
  const k = Math.floor(draw.how * (classes.length - 1))
  return classes[k >= classes.indexOf(truth as string) ? k + 1 : k] as string
}
