// The order rows are replayed in, and the shift that moves them.
//
// Order: every row once in a seeded shuffle, then every row again in a fresh shuffle, and so on. A
// whole cycle sends the file's rows exactly, so unshifted traffic has the file's distribution (its
// joint one, not only each column's) and the answers the model gave on those rows; the same seed
// sends the same rows in the same order.
//
// Shift: `k` standard deviations added to each chosen numerical input, the deviation computed once
// from the file's own values of that input: the population standard deviation (divided by n, as
// npm run train standardises its inputs, test/train/fit.ts), missing values left out of it and left
// missing. A categorical input cannot be shifted.
import type { Input } from '../../models/runtime.js'
import { LoadgenUsageError } from './errors.js'
import { shuffle } from './random.js'
import type { Row } from './rows.js'

/**
 * The inputs a shift applies to: `features`, or every numerical input when it is empty. Refuses a
 * name that is not an input, a categorical input, and a shift with nothing to move.
 */
export const shiftedInputs = (inputs: readonly Input[], features: readonly string[], shift: number, model: string): readonly string[] => {
  for (const name of features) {
    const input = inputs.find((candidate) => candidate.name === name)
    if (input === undefined)
      throw new LoadgenUsageError(`--features names ${name}, not an input of model ${model}; its inputs are ${inputs.map((i) => i.name).join(', ')}`)
    if (input.type !== 'numerical') throw new LoadgenUsageError(`--features names ${name}, a categorical input: only numerical inputs can be shifted`)
  }
  const names = features.length > 0 ? features : inputs.filter((input) => input.type === 'numerical').map((input) => input.name)
  if (shift !== 0 && names.length === 0) throw new LoadgenUsageError(`--shift ${shift}: model ${model} has no numerical input to shift`)
  return names
}

/** The population standard deviation of `name` over the rows that have a value of it; NaN when none does. */
export const standardDeviation = (rows: readonly Row[], name: string): number => {
  let n = 0
  let sum = 0
  for (const row of rows) {
    const value = row[name]
    if (typeof value !== 'number') continue
    n++
    sum += value
  }
  const mean = sum / n
  let squares = 0
  for (const row of rows) {
    const value = row[name]
    if (typeof value === 'number') squares += (value - mean) ** 2
  }
  return Math.sqrt(squares / n)
}

/**
 * The rows with each of `names` moved by `shift` of its standard deviation in the rows; `file`
 * names them in a message. The rows are copied, never changed.
 */
export const shiftRows = (rows: readonly Row[], names: readonly string[], shift: number, file: string): readonly Row[] => {
  if (shift === 0) return rows
  const offsets = names.map((name) => {
    const sd = standardDeviation(rows, name)
    if (!(sd > 0)) throw new LoadgenUsageError(`--shift: ${name} does not vary in ${file} (one value, or none): a standard deviation of it is no distance`)
    return shift * sd
  })
  return rows.map((row) => {
    const moved = { ...row }
    names.forEach((name, j) => {
      const value = moved[name]
      if (typeof value === 'number') moved[name] = value + (offsets[j] as number)
    })
    return moved
  })
}

/**
 * The index of the next row to send, forever: each cycle every one of `count` rows once, in a fresh
 * seeded shuffle. An index, so a row's label (labels.ts) goes with it.
 */
export const createReplay = (count: number, random: () => number): (() => number) => {
  const order = Array.from({ length: count }, (_, i) => i)
  let at = order.length
  return () => {
    if (at === order.length) {
      shuffle(order, random)
      at = 0
    }
    return order[at++] as number
  }
}
