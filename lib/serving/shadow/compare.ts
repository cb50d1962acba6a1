// Whether a shadow agrees with the primary, row by row (lib/README.md §10):
//   classifier  the label differs (compared by class name, so a version that orders or names its
//               classes differently is still compared fairly);
//   regressor   |shadow − primary| > tolerance × max(|shadow|, |primary|): a relative tolerance
//               (SVC_SHADOW_TOLERANCE, 0.05 by default) that needs no unit, and two zeros agree.
// A shadow of another task than the primary's disagrees on every row.
import type { ModelVersion, Prediction } from '../../models/runtime.js'

/** Row `r` of a prediction's array, within its length (noUncheckedIndexedAccess types it `| undefined`). */
const numberAt = (values: ArrayLike<number>, r: number): number => values[r] as number

/** The rows of `rows` whose shadow answer differs from the primary's. */
export const disagreements = (
  primary: ModelVersion,
  answered: Prediction,
  shadow: ModelVersion,
  copied: Prediction,
  rows: number,
  tolerance: number,
): number => {
  // A classifier's predictor answers labels, a regressor's values (runtime.ts): the checks on the
  // predictions hold whenever the tasks match, and narrow them.
  if (primary.task === 'classification' && shadow.task === 'classification' && 'labels' in answered && 'labels' in copied) {
    const a = answered.labels
    const b = copied.labels
    let differing = 0
    for (let r = 0; r < rows; r++) if (primary.classes[numberAt(a, r)] !== shadow.classes[numberAt(b, r)]) differing++
    return differing
  }
  if (primary.task === 'regression' && shadow.task === 'regression' && 'values' in answered && 'values' in copied) {
    const a = answered.values
    const b = copied.values
    let differing = 0
    for (let r = 0; r < rows; r++) {
      const x = numberAt(a, r)
      const y = numberAt(b, r)
      if (Math.abs(y - x) > tolerance * Math.max(Math.abs(x), Math.abs(y))) differing++
    }
    return differing
  }
  return rows
}
