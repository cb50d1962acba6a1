// The events' text (lib/serving/payload/events.ts) for what HTTP tests cannot reach on demand: a
// runtime answering a value JSON cannot hold (NaN) is written null, so the line stays JSON, and a
// traced request carries its trace id.
import t from 'tap'
import { createPayloadEvents } from '../../../lib/serving/payload/events.js'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import type { Prediction } from '../../../lib/models/runtime.js'
import { cloudEventErrors } from '../../fixtures/cloudevents-schema.js'
import { kernelVersion } from '../../fixtures/model-runtime.js'

t.test('a value JSON cannot hold is written null, and a trace id as itself', async (t) => {
  const served: ServedModel = { name: 'cars', version: '1', ...kernelVersion('cars') }
  const origin = served.model.inputs[6] as Readonly<{ levels: readonly string[] }>
  const events = createPayloadEvents({ source: () => 'svc://host:8080', exclude: ['weight_in_lbs'] })
  const features = new Float64Array([4, 97, 88, 2130, 14.5, 70, 2])
  const prediction: Prediction = { values: new Float64Array([Number.NaN]) }
  const capture = {
    served,
    requestId: 'r1',
    role: 'default',
    rows: 1,
    features,
    prediction,
    tokens: undefined,
    durationMs: 0.25,
    traceId: 'a'.repeat(32),
  } as const
  const event = JSON.parse(events.prediction(capture, Date.UTC(2026, 0, 2, 3, 4, 5))) as Record<string, any>
  t.same(cloudEventErrors(event), [])
  t.match(event, { source: 'svc://host:8080', time: '2026-01-02T03:04:05.000Z', subject: 'cars/1' })
  t.same(event['data'], {
    request_id: 'r1',
    model: 'cars',
    version: '1',
    role: 'default',
    rows: [{ cylinders: 4, displacement: 97, horsepower: 88, acceleration: 14.5, year: 70, origin: origin.levels[2] }],
    answers: [{ miles_per_gallon: null }],
    duration_ms: 0.25,
    trace_id: 'a'.repeat(32),
  })
})
