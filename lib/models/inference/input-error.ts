// Rows a model cannot take, by row and feature name: what `encodeRows` (features.ts) throws for a
// request's named rows, and what the kernel throws for a value it is handed that encoding would
// have refused. Depends on nothing, so the kernel does not depend on request handling.
import { SvcError } from '../../core/errors.js'

export type InputProblemCode = 'NOT_AN_OBJECT' | 'MISSING_FEATURE' | 'UNKNOWN_FEATURE' | 'WRONG_TYPE' | 'NON_FINITE_VALUE' | 'OUT_OF_RANGE' | 'UNKNOWN_LEVEL'
/** One bad value: `row` is its index in the batch, `feature` the input's name ('' for a whole row). */
export type InputProblem = Readonly<{ row: number; feature: string; code: InputProblemCode; message: string }>

/** Rows a model cannot take. `problems` lists the first MAX_PROBLEMS, each by row and feature name. */
export class InputError extends SvcError {
  override name = 'InputError'
  readonly code = 'INVALID_INPUT'
  readonly problems: readonly InputProblem[]
  constructor(problems: readonly InputProblem[]) {
    super(problems.map((problem) => problem.message).join('; '))
    this.problems = problems
  }
}

/** Enough to fix a request; a batch of 10 000 bad rows does not need 10 000 messages. */
export const MAX_PROBLEMS = 10

/** A problem with its message: `row 3: origin must be a string`, or `row 1 must be …` for a whole row. */
export const inputProblem = (row: number, feature: string, code: InputProblemCode, what: string): InputProblem => ({
  row,
  feature,
  code,
  message: feature === '' ? `row ${row} ${what}` : `row ${row}: ${feature} ${what}`,
})
