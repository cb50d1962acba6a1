// How well a model answers labelled rows: the profile's `quality` (lib/models/profile.ts), which
// `svc profile --target COLUMN` writes and svc_model_reference_quality exports, so realized quality
// from labels has a reference. Scored as `npm run train` scores the shipped models:
//   classifier  accuracy   the share of rows whose answer is the true class
//               log_loss   the mean of −ln p(true class), p clipped below at 1e-15: a predictor
//                          always answers probabilities (lib/models/runtime.ts), so it is always there
//   regressor   rmse       √(Σ (answer − truth)² / rows)
//               mae        Σ |answer − truth| / rows
//               r2         1 − Σ (answer − truth)² / Σ (truth − mean truth)², left out when every
//                          truth is the same (the denominator is 0 and r2 means nothing)
// A truth is a class of the model (a JSON number in NDJSON is taken as its decimal text, for a
// graph whose classes are integers) or a finite number; anything else is refused with its line.
import type { ModelVersion, Prediction } from '../../models/runtime.js'
import { LineError, quote } from './errors.js'
import type { CellReading } from './table.js'

/** The truth column: a cell read as a class index (classifier) or a value (regressor); throws LineError. */
export type TargetColumn = Readonly<{ name: string; read(cell: unknown, line: number): number }>

export type QualityScore = Readonly<{
  /** Scores one batch: `prediction` of `truths.length` rows, each truth as `TargetColumn.read` gives it. */
  add(prediction: Prediction, truths: readonly number[]): void
  /** The metrics over every row added. */
  quality(): Readonly<Record<string, number>>
}>

/** Below this a probability counts as this: −ln 0 is infinite, and JSON has no Infinity. */
const PROBABILITY_FLOOR = 1e-15

export const targetColumn = (model: ModelVersion, name: string, cells: CellReading): TargetColumn => {
  if (model.task === 'regression') {
    return {
      name,
      read: (cell, line) => {
        const value = cells.number(cell)
        if (value === undefined) throw new LineError(line, `${name}: ${quote(cell)} is not a finite number`)
        return value
      },
    }
  }
  const index = new Map(model.classes.map((label, k) => [label, k]))
  return {
    name,
    read: (cell, line) => {
      const label = typeof cell === 'number' ? String(cell) : cells.level(cell)
      const k = label === undefined ? undefined : index.get(label)
      if (k === undefined) throw new LineError(line, `${name}: ${quote(cell)} is not a class of model ${model.name}: ${model.classes.join(', ')}`)
      return k
    },
  }
}

const classifierScore = (classes: number): QualityScore => {
  let rows = 0
  let correct = 0
  let logLoss = 0
  return {
    add: (prediction, truths) => {
      const { labels, probabilities } = prediction as Extract<Prediction, { labels: Uint32Array }>
      truths.forEach((truth, r) => {
        if (labels[r] === truth) correct++
        logLoss -= Math.log(Math.max(probabilities[r * classes + truth] as number, PROBABILITY_FLOOR))
      })
      rows += truths.length
    },
    quality: () => ({ accuracy: correct / rows, log_loss: logLoss / rows }),
  }
}

const regressorScore = (): QualityScore => {
  let rows = 0
  let absolute = 0
  let squared = 0
  // The truths' mean and sum of squared deviations, updated row by row (Welford): no cancellation.
  let mean = 0
  let deviations = 0
  return {
    add: (prediction, truths) => {
      const { values } = prediction as Extract<Prediction, { values: Float64Array }>
      truths.forEach((truth, r) => {
        const error = (values[r] as number) - truth
        absolute += Math.abs(error)
        squared += error * error
        rows++
        const delta = truth - mean
        mean += delta / rows
        deviations += delta * (truth - mean)
      })
    },
    quality: () => {
      const scores = { rmse: Math.sqrt(squared / rows), mae: absolute / rows }
      return deviations === 0 ? scores : { ...scores, r2: 1 - squared / deviations }
    },
  }
}

/** The score of `model`'s answers against the truths. */
export const qualityScore = (model: ModelVersion): QualityScore => (model.task === 'classification' ? classifierScore(model.classes.length) : regressorScore())
