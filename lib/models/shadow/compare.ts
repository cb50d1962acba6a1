// Whether a shadow agrees with the primary, row by row (lib/README.md §10):
//   classifier  the label differs (compared by class name, so a version that orders or names its
//               classes differently is still compared fairly);
//   regressor   |shadow − primary| > tolerance × max(|shadow|, |primary|): a relative tolerance
//               (SVC_SHADOW_TOLERANCE, 0.05 by default) that needs no unit, and two zeros agree.
// A shadow of another task than the primary's disagrees on every row.
import type { ClassPrediction, ModelVersion, Prediction, ValuePrediction } from '../runtime.js'

/** The rows of `rows` whose shadow answer differs from the primary's. */
export const disagreements = (
  primary: ModelVersion,
  answered: Prediction,
  shadow: ModelVersion,
  copied: Prediction,
  rows: number,
  tolerance: number,
): number => {
  if (primary.task === 'classification' && shadow.task === 'classification') {
    const a = (answered as ClassPrediction).labels
    const b = (copied as ClassPrediction).labels
    let differing = 0
    for (let r = 0; r < rows; r++) if (primary.classes[a[r] as number] !== shadow.classes[b[r] as number]) differing++
    return differing
  }
  if (primary.task === 'regression' && shadow.task === 'regression') {
    const a = (answered as ValuePrediction).values
    const b = (copied as ValuePrediction).values
    let differing = 0
    for (let r = 0; r < rows; r++) {
      const x = a[r] as number
      const y = b[r] as number
      if (Math.abs(y - x) > tolerance * Math.max(Math.abs(x), Math.abs(y))) differing++
    }
    return differing
  }
  return rows
}
