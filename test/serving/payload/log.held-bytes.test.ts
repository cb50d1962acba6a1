// What a queued payload log event is counted as holding (lib/serving/payload/log.ts `heldBytes`):
// its features, its answers' arrays and its tokens' text, above a fixed overhead, so the writer's
// bound in bytes follows what a down sink would pin.
import t from 'tap'
import { EVENT_OVERHEAD_BYTES, heldBytes } from '../../../lib/serving/payload/log.js'
import type { PredictionCapture } from '../../../lib/serving/payload/events.js'

const capture = (rows: number, prediction: PredictionCapture['prediction'], tokens: string | undefined): PredictionCapture =>
  ({ rows, features: new Float64Array(rows * 4), prediction, tokens }) as unknown as PredictionCapture

t.test("a classifier's event of 100 rows of 4 inputs and 3 classes holds its features, labels, probabilities and tokens", async (t) => {
  const classes = { labels: new Uint32Array(100), probabilities: new Float64Array(300) }
  t.equal(heldBytes(capture(100, classes, undefined)), EVENT_OVERHEAD_BYTES + 3200 + 400 + 2400)
  t.equal(heldBytes(capture(100, classes, 'x'.repeat(5000))), EVENT_OVERHEAD_BYTES + 3200 + 400 + 2400 + 5000)
})

t.test("a regressor's event holds its values", async (t) => {
  t.equal(heldBytes(capture(10, { values: new Float64Array(10) }, undefined)), EVENT_OVERHEAD_BYTES + 320 + 80)
})
