// The prediction duration buckets: ascending from 0.1 ms to 1 s, and holding every bound the
// Prometheus rules read of the prediction and shadow duration histograms.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { PREDICTION_DURATION_BUCKETS } from '../../../lib/models/inference/duration-buckets.js'

const RULES = 'ops/prometheus/rules'
const rules = readdirSync(RULES)
  .filter((file) => file.endsWith('.yml'))
  .map((file) => readFileSync(join(RULES, file), 'utf8'))
  .join('\n')

t.test('ascending, from 0.1 ms (a small batch of a linear model) to 1 s', async (t) => {
  t.equal(PREDICTION_DURATION_BUCKETS[0], 0.0001)
  t.equal(PREDICTION_DURATION_BUCKETS.at(-1), 1)
  for (let i = 1; i < PREDICTION_DURATION_BUCKETS.length; i++)
    t.ok((PREDICTION_DURATION_BUCKETS[i] as number) > (PREDICTION_DURATION_BUCKETS[i - 1] as number), `${PREDICTION_DURATION_BUCKETS[i]} ascends`)
})

t.test('every bound a rule reads of a prediction duration histogram is a bucket', async (t) => {
  const buckets: readonly number[] = PREDICTION_DURATION_BUCKETS
  // A selector on the bucket series (`…_bucket{… le="0.025" …}`): a bound between buckets would match nothing.
  const selectors = [...rules.matchAll(/svc_model_(?:prediction|shadow)_duration_seconds_bucket\{([^}]*)\}/g)]
  for (const [, labels] of selectors) {
    const le = /\ble="([^"]+)"/.exec(labels as string)?.[1]
    if (le !== undefined) t.ok(buckets.includes(Number(le)), `le="${le}" is a bucket`)
  }
  // The canary latency alert's floor: a P95 interpolated within buckets is only known to the nearest bound.
  const floors = [...rules.matchAll(/clamp_min\(0\.5 \* .*svc_model_prediction_duration_seconds:p95_rate10m.*, ([\d.]+)\)$/gm)]
  t.ok(floors.length > 0, 'SvcCanaryLatencyHigh floors its margin')
  for (const [, floor] of floors) t.ok(buckets.includes(Number(floor)), `the margin's floor ${floor} s is a bucket`)
  t.match(rules, /service's buckets\s*\n\s*# \(0\.1 ms to 1 s/, 'the recording rule names the range the buckets span')
})
