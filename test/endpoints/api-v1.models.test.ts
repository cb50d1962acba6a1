// The model endpoints as pure functions: routed with no layers, over a registry on a memory store.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { EventEmitter } from 'node:events'
import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import { apiV1Routes } from '../../lib/endpoints/api-v1.js'
import { v2Routes } from '../../lib/endpoints/v2.js'
import { Ctx } from '../../lib/core/http/context.js'
import { createModelMetrics } from '../../lib/serving/metrics.js'
import type { Runtime } from '../../lib/models/runtime.js'
import { KERNEL_PLATFORM, kernelRuntime } from '../../lib/models/kernel/runtime.js'
import type { ProblemReply, Reply } from '../../lib/core/pipeline.js'
import { createRouter } from '../../lib/core/router.js'
import { VERSION } from '../../lib/config/version.js'
import { sample } from '../fixtures/metrics-text.js'
import { corrupted, harness, manifest, shippedFiles, type Harness } from '../fixtures/model-registry.js'
import { FAKE_PLATFORM, fakeFiles, fakeRuntime } from '../fixtures/model-runtime.js'
import { rawArtifact } from '../fixtures/models.js'

const BODY_LIMIT = 4096

/** A Ctx over a readable request carrying `body` (JSON-encoded unless a string). */
const request = (method: string, url: string, body?: unknown, contentType = 'application/json'): Ctx => {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)
  const headers = body === undefined ? {} : { 'content-type': contentType }
  const req = Object.assign(Readable.from([Buffer.from(text)]), { method, url, headers })
  return new Ctx(req as unknown as IncomingMessage, new EventEmitter() as unknown as ServerResponse, BODY_LIMIT)
}

type Setup = Harness & { call(method: string, url: string, body?: unknown, contentType?: string, ctx?: Ctx): Promise<Reply>; text(): Promise<string> }

const setup = async (t: Test, files = shippedFiles(), maxBatch = 10, runtimes?: readonly Runtime[]): Promise<Setup> => {
  const h = harness(files, runtimes === undefined ? {} : { runtimes })
  await h.registry.load()
  t.teardown(() => h.registry.stop())
  const options = { models: h.registry, metrics: createModelMetrics(h.metrics), maxBatch, drift: undefined }
  const router = createRouter([...apiV1Routes(options), ...v2Routes(options)], [])
  const call = async (method: string, url: string, body?: unknown, contentType?: string, ctx = request(method, url, body, contentType)): Promise<Reply> => {
    const entry = router.find(ctx)
    return (entry.handlers.get(method) ?? entry.otherMethod)(ctx)
  }
  return { ...h, call, text: () => h.metrics.metrics() }
}

/** A reply's body as a client reads it: the inference response comes as JSON text (`json`). */
const bodyOf = (reply: Reply): any => (reply.kind === 'json' && reply.json !== undefined ? JSON.parse(reply.json) : 'body' in reply ? reply.body : undefined)
const problemOf = (reply: Reply): any => (reply as ProblemReply).problem

const IRIS_ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 5.9, sepal_width: 3.0, petal_length: 4.2, petal_width: 1.5 },
  { sepal_length: 6.7, sepal_width: 3.0, petal_length: 5.2, petal_width: 2.3 },
]
const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const
const column = (name: (typeof FEATURES)[number]): number[] => IRIS_ROWS.map((row) => row[name])

/** Softmax of the artifact's parameters, computed here from the JSON rather than by the kernel. */
const expectedProbabilities = (row: Record<string, number>): number[] => {
  const raw = rawArtifact('iris')
  const x = FEATURES.map((f, j) => ((row[f] as number) - raw.preprocessing.standardisation.mean[j]) / raw.preprocessing.standardisation.scale[j])
  const z = raw.parameters.weights.map((w: number[], k: number) => raw.parameters.intercepts[k] + w.reduce((s, wj, j) => s + wj * (x[j] as number), 0))
  const max = Math.max(...z)
  const e = z.map((v: number) => Math.exp(v - max))
  const sum = e.reduce((s: number, v: number) => s + v, 0)
  return e.map((v: number) => v / sum)
}

t.test('a classifier answers labels and probabilities that match the artifact and sum to 1', async (t) => {
  const s = await setup(t)
  const reply = await s.call('POST', '/api/v1/predict', { model: 'iris', id: 'req-1', instances: IRIS_ROWS })
  t.equal(reply.status, 200)
  const body = bodyOf(reply)
  t.equal(body.model_name, 'iris')
  t.equal(body.model_version, '1')
  t.equal(body.id, 'req-1', 'the id is echoed')
  t.same(body.outputs[0], { name: 'species', datatype: 'BYTES', shape: [3], data: ['setosa', 'versicolor', 'virginica'] })
  t.match(body.outputs[1], { name: 'probabilities', datatype: 'FP64', shape: [3, 3] })
  IRIS_ROWS.forEach((row, r) => {
    const got = body.outputs[1].data.slice(r * 3, r * 3 + 3) as number[]
    expectedProbabilities(row).forEach((p, k) => {
      t.ok(Math.abs((got[k] as number) - p) < 1e-12, `row ${r} class ${k}`)
    })
    t.ok(Math.abs(got.reduce((a, b) => a + b, 0) - 1) < 1e-12, `row ${r} sums to 1`)
  })
})

t.test('tensors per input, one [N, F] tensor (flat or nested) and instances give identical predictions', async (t) => {
  const s = await setup(t)
  const perInput = FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [3], data: column(name) }))
  const flat = [{ name: 'x', datatype: 'FP64', shape: [3, 4], data: IRIS_ROWS.flatMap((row) => FEATURES.map((f) => row[f])) }]
  const nested = [{ name: 'x', datatype: 'FP64', shape: [3, 4], data: IRIS_ROWS.map((row) => FEATURES.map((f) => row[f])) }]
  const outputs = async (reply: Promise<Reply>) => bodyOf(await reply).outputs
  const reference = await outputs(s.call('POST', '/api/v1/predict', { model: 'iris', instances: IRIS_ROWS }))
  t.same(await outputs(s.call('POST', '/api/v1/predict', { model: 'iris', inputs: perInput })), reference)
  t.same(await outputs(s.call('POST', '/api/v1/predict', { model: 'iris', version: '1', inputs: flat })), reference)
  t.same(await outputs(s.call('POST', '/v2/models/iris/infer', { inputs: nested })), reference)
  t.same(await outputs(s.call('POST', '/v2/models/iris/versions/1/infer', { inputs: perInput })), reference)
})

t.test('a request that sends no id is answered with its X-Request-ID', async (t) => {
  const s = await setup(t)
  for (const [url, body] of [
    ['/v2/models/iris/infer', { inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] }],
    ['/api/v1/predict', { model: 'iris', instances: IRIS_ROWS }],
  ] as const) {
    const first = request('POST', url, body)
    const second = request('POST', url, body)
    t.match(first.requestId, /^[0-9a-f-]{36}$/)
    t.equal(bodyOf(await s.call('POST', url, body, undefined, first)).id, first.requestId, url)
    t.equal(bodyOf(await s.call('POST', url, body, undefined, second)).id, second.requestId, 'each request its own')
    t.not(first.requestId, second.requestId)
  }
})

t.test('a regression model with a categorical input answers one value per row', async (t) => {
  const s = await setup(t)
  const row = { cylinders: 4, displacement: 97, horsepower: 88, weight_in_lbs: 2130, acceleration: 14.5, year: 1970, origin: 'Japan' }
  const reply = await s.call('POST', '/api/v1/predict', { model: 'cars', instances: [row] })
  const out = bodyOf(reply).outputs
  t.equal(out.length, 1)
  t.match(out[0], { name: 'miles_per_gallon', datatype: 'FP64', shape: [1] })
  t.ok(Number.isFinite(out[0].data[0]))
  const tensors = Object.entries(row).map(([name, v]) =>
    typeof v === 'string' ? { name, datatype: 'BYTES', shape: [1], data: [v] } : { name, datatype: 'FP64', shape: [1], data: [v] },
  )
  t.same(bodyOf(await s.call('POST', '/v2/models/cars/infer', { inputs: tensors })).outputs, out, 'tensors give the same value')
})

t.test('unknown models and versions are 404 with the exact message and an error member', async (t) => {
  const s = await setup(t)
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/api/v1/predict', { model: 'nope', instances: IRIS_ROWS }, 'Model nope not found'],
    ['POST', '/api/v1/predict', { model: 'iris', version: '3', instances: IRIS_ROWS }, 'Model iris with version 3 not found'],
    ['POST', '/v2/models/nope/infer', { inputs: [] }, 'Model nope not found'],
    ['POST', '/v2/models/iris/versions/3/infer', { inputs: [] }, 'Model iris with version 3 not found'],
    ['GET', '/v2/models/nope', undefined, 'Model nope not found'],
    ['GET', '/v2/models/iris/versions/3', undefined, 'Model iris with version 3 not found'],
    ['GET', '/v2/models/nope/ready', undefined, 'Model nope not found'],
    ['GET', '/v2/models/iris/versions/3/ready', undefined, 'Model iris with version 3 not found'],
    ['GET', '/api/v1/models/nope', undefined, 'Model nope not found'],
  ]
  for (const [method, url, body, detail] of cases) {
    const reply = await s.call(method, url, body)
    t.equal(reply.status, 404, `${method} ${url}`)
    t.match(problemOf(reply), { type: 'urn:svc:problem:model-not-found', status: 404, detail, error: detail })
  }
  const text = await s.text()
  t.notMatch(text, /model="nope"/, 'no series for a model that does not exist')
  t.notMatch(text, /version="3"/, 'nor for a version that does not exist')
})

t.test('validation failures are 400 problems naming the input, and count as client errors', async (t) => {
  const s = await setup(t)
  const tensors = (change: (inputs: any[]) => void) => {
    const inputs: any[] = FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [3], data: column(name) }))
    change(inputs)
    return { model: 'iris', inputs }
  }
  const cases: Array<[unknown, RegExp, string | undefined]> = [
    [tensors((i) => i.pop()), /input petal_width is missing/, 'petal_width'],
    [tensors((i) => i.push({ name: 'colour', datatype: 'FP64', shape: [3], data: [1, 2, 3] })), /input colour is not an input of model iris/, 'colour'],
    [tensors((i) => i.push({ ...i[0] })), /input sepal_length is given more than once/, 'sepal_length'],
    [
      tensors((i) => void (i[1] = { ...i[1], datatype: 'BYTES', data: ['a', 'b', 'c'] })),
      /^input sepal_width takes FP64, FP32, .* or UINT8; got BYTES$/,
      'sepal_width',
    ],
    [tensors((i) => void (i[2] = { ...i[2], shape: [4], data: [1, 2, 3, 4] })), /has 4 rows/, 'petal_length'],
    [tensors((i) => void (i[0].shape = [2])), /shape \[2\] holds 2 values, data has 3/, 'sepal_length'],
    [
      {
        model: 'iris',
        inputs: [
          {
            name: 'x',
            datatype: 'FP64',
            shape: [2, 4],
            data: [
              [1, 2, 3, 4],
              [1, 2, 3],
            ],
          },
        ],
      },
      /nested rows must all have the same length/,
      'x',
    ],
    [{ model: 'iris', instances: [{ ...IRIS_ROWS[0], petal_width: 'wide' }] }, /petal_width must be a number/, 'petal_width'],
    [
      { model: 'cars', instances: [{ cylinders: 4, displacement: 97, horsepower: 88, weight_in_lbs: 2130, acceleration: 14.5, year: 1970, origin: 'Mars' }] },
      /origin must be one of USA, Europe, Japan/,
      'origin',
    ],
  ]
  for (const [body, detail, input] of cases) {
    const reply = await s.call('POST', '/api/v1/predict', body)
    t.equal(reply.status, 400, String(detail))
    const p = problemOf(reply)
    t.match(p.detail, detail)
    t.equal(p.error, p.detail, 'error carries the detail')
    t.equal(p.input, input)
  }
  const text = await s.text()
  t.equal(
    sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'client_error', environment: 'test' }),
    8,
    'every refusal once the model is known',
  )
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'cars', version: '1', outcome: 'client_error', environment: 'test' }), 1)
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success', environment: 'test' }), 0)
})

t.test('a body refused before the model lookup counts only against a served model it names', async (t) => {
  const s = await setup(t)
  const refusals: Array<[string, RegExp]> = [
    ['null', /the request body must be a JSON object/],
    ['{"model":7,"inputs":[]}', /model must be a non-empty string/],
    ['{"model":"iris","version":3,"inputs":[]}', /version must be a non-empty string/],
    ['{"model":"nope","inputs":[]}', /inputs must be a non-empty array/],
    ['{"model":"iris","version":"3","inputs":[]}', /inputs must be a non-empty array/],
    ['{"model":"iris","inputs":[]}', /inputs must be a non-empty array/],
    ['{"model":"iris","version":"1","instances":[]}', /instances must be a non-empty array/],
  ]
  for (const [body, detail] of refusals) {
    const reply = await s.call('POST', '/api/v1/predict', body)
    t.equal(reply.status, 400, body)
    t.match(problemOf(reply), { type: 'urn:svc:problem:invalid-request', detail, error: detail })
  }
  const text = await s.text()
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'client_error', environment: 'test' }), 2)
  t.notMatch(text, /model="nope"|version="3"/)
})

t.test('non-finite numbers and batches over the limit are 400', async (t) => {
  const s = await setup(t, shippedFiles(), 2)
  const big = await s.call('POST', '/api/v1/predict', { model: 'iris', instances: IRIS_ROWS })
  t.equal(big.status, 400)
  t.match(problemOf(big), { type: 'urn:svc:problem:batch-too-large', detail: 'the batch has 3 rows; at most 2 are allowed per request' })
  const v2 = await s.call('POST', '/v2/models/iris/infer', { inputs: [{ name: 'x', datatype: 'FP64', shape: [3, 4], data: Array(12).fill(1) }] })
  t.match(problemOf(v2), { status: 400, type: 'urn:svc:problem:batch-too-large', input: 'x' })
  // JSON has no NaN; a number too large for a double parses as Infinity.
  const huge = await s.call('POST', '/api/v1/predict', `{"model":"iris","inputs":[{"name":"x","datatype":"FP64","shape":[1,4],"data":[1e999,1,1,1]}]}`)
  t.match(problemOf(huge), { status: 400, detail: 'input x: data[0] must be a finite number', input: 'x' })
  const text = await s.text()
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'client_error', environment: 'test' }), 3)
})

t.test('body errors from ctx.json() carry the error member', async (t) => {
  const s = await setup(t)
  const wrongType = await s.call('POST', '/api/v1/predict', { model: 'iris' }, 'text/plain')
  t.equal(wrongType.status, 415)
  t.equal(problemOf(wrongType).error, problemOf(wrongType).detail)
  const malformed = await s.call('POST', '/v2/models/iris/infer', '{"inputs":')
  t.equal(malformed.status, 400)
  t.match(problemOf(malformed), { type: 'urn:svc:problem:invalid-json', error: /^Request body is not valid JSON/ })
  const large = await s.call('POST', '/api/v1/predict', { model: 'iris', pad: 'x'.repeat(BODY_LIMIT) })
  t.equal(large.status, 413)
  t.match(problemOf(large), { type: 'urn:svc:problem:payload-too-large', error: /exceeds the limit/ })
})

t.test('an unexpected failure in a prediction is a 500 counted as a server error', async (t) => {
  const broken: Runtime = {
    ...kernelRuntime,
    load: () => ({
      predict: () => {
        throw new Error('kernel broke')
      },
      dispose: () => {},
    }),
  }
  const s = await setup(t, shippedFiles(), 10, [broken])
  const reply = await s.call('POST', '/api/v1/predict', { model: 'iris', instances: IRIS_ROWS })
  t.equal(reply.status, 500)
  t.match((reply as ProblemReply).error, { message: 'kernel broke' })
  const text = await s.text()
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'server_error', environment: 'test' }), 1)
})

t.test('an async predictor answers as the kernel does, and its request is timed and counted when it settles', async (t) => {
  const kernel = await setup(t)
  const runtime = fakeRuntime()
  const s = await setup(t, { 'iris/manifest.json': manifest('1'), ...fakeFiles('iris') }, 10, [runtime])
  for (const [method, url, body] of [
    ['POST', '/api/v1/predict', { model: 'iris', id: 'a', instances: IRIS_ROWS }],
    ['POST', '/v2/models/iris/infer', { id: 'a', inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] }],
  ] as const) {
    const reply = await s.call(method, url, body)
    t.equal(reply.status, 200, url)
    t.same(bodyOf(reply), bodyOf(await kernel.call(method, url, body)), `${url}: the same body, bit for bit`)
  }
  const text = await s.text()
  const iris = { model: 'iris', version: '1', environment: 'test' }
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'success' }), 2)
  t.equal(sample(text, 'svc_model_predictions_total', iris), 4)
  t.equal(sample(text, 'svc_model_prediction_duration_seconds_count', iris), 2)
})

t.test('an async predictor that rejects is a 500 counted as a server error, on both routes', async (t) => {
  const runtime = fakeRuntime()
  const s = await setup(t, { 'iris/manifest.json': manifest('1'), ...fakeFiles('iris') }, 10, [runtime])
  runtime.behaviour.predictError = new Error('session broke')
  const v1 = await s.call('POST', '/api/v1/predict', { model: 'iris', instances: IRIS_ROWS })
  const v2 = await s.call('POST', '/v2/models/iris/infer', { inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] })
  for (const reply of [v1, v2]) {
    t.equal(reply.status, 500)
    t.match((reply as ProblemReply).error, { message: 'session broke' })
  }
  const text = await s.text()
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'server_error', environment: 'test' }), 2)
  t.equal(sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success', environment: 'test' }), 0)
})

t.test('platform is the runtime’s, in summaries and in /v2 metadata', async (t) => {
  const s = await setup(t, { ...shippedFiles(), 'iris/manifest.json': manifest('1'), ...fakeFiles('iris') }, 10, [fakeRuntime(), kernelRuntime])
  t.match(bodyOf(await s.call('GET', '/api/v1/models')), {
    models: [
      { name: 'cars', platform: KERNEL_PLATFORM },
      { name: 'iris', platform: FAKE_PLATFORM },
    ],
  })
  t.match(bodyOf(await s.call('GET', '/api/v1/models/iris')), { platform: FAKE_PLATFORM, sha256: rawArtifact('iris').sha256 })
  t.match(bodyOf(await s.call('GET', '/v2/models/iris')), { name: 'iris', platform: FAKE_PLATFORM })
  t.match(bodyOf(await s.call('GET', '/v2/models/cars/versions/1')), { name: 'cars', platform: KERNEL_PLATFORM })
})

t.test('metrics are exact after known traffic', async (t) => {
  const s = await setup(t)
  await s.call('POST', '/api/v1/predict', { model: 'iris', instances: IRIS_ROWS })
  await s.call('POST', '/v2/models/iris/infer', { inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 4], data: [5.1, 3.5, 1.4, 0.2] }] })
  await s.call('POST', '/api/v1/predict', { model: 'iris', instances: [{}] })
  const text = await s.text()
  const iris = { model: 'iris', version: '1', environment: 'test' }
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'success' }), 2)
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'client_error' }), 1)
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'server_error' }), 0)
  t.equal(sample(text, 'svc_model_predictions_total', iris), 4)
  t.equal(sample(text, 'svc_model_prediction_duration_seconds_count', iris), 2)
  t.equal(sample(text, 'svc_model_prediction_duration_seconds_bucket', { ...iris, le: '1' }), 2)
  t.equal(sample(text, 'svc_model_prediction_batch_size_count', { model: 'iris', environment: 'test' }), 2)
  t.equal(sample(text, 'svc_model_prediction_batch_size_sum', { model: 'iris', environment: 'test' }), 4)
  t.equal(sample(text, 'svc_model_prediction_batch_size_bucket', { model: 'iris', environment: 'test', le: '1' }), 1)
  t.equal(sample(text, 'svc_model_predictions_total', { model: 'cars', version: '1', environment: 'test' }), undefined, 'no traffic, no series')
})

const NO_SPLIT = { canary: null, shadow: null }

t.test('GET /api/v1/models lists every model with its state', async (t) => {
  const s = await setup(t)
  const reply = await s.call('GET', '/api/v1/models')
  t.same(bodyOf(reply), {
    models: [
      ...['cars', 'iris'].map((name) => ({
        name,
        versions: ['1'],
        version_states: [{ version: '1', state: 'READY', reason: null }],
        default_version: '1',
        platform: KERNEL_PLATFORM,
        state: 'READY',
        reason: null,
        rollout: NO_SPLIT,
        rollout_error: null,
      })),
    ],
  })
})

t.test('GET /api/v1/models/{name} describes inputs, outputs, classes and training metrics', async (t) => {
  const s = await setup(t)
  const iris = bodyOf(await s.call('GET', '/api/v1/models/iris'))
  const raw = rawArtifact('iris')
  t.match(iris, {
    name: 'iris',
    versions: ['1'],
    default_version: '1',
    platform: KERNEL_PLATFORM,
    state: 'READY',
    reason: null,
    version: '1',
    type: 'logistic_regression',
    task: 'classification',
    classes: ['setosa', 'versicolor', 'virginica'],
    outputs: [
      {
        name: 'species',
        datatype: 'BYTES',
        shape: [-1],
        reference: { levels: raw.reference.predictions.levels, proportions: raw.reference.predictions.proportions },
      },
      { name: 'probabilities', datatype: 'FP64', shape: [-1, 3] },
    ],
    metrics: raw.provenance.metrics,
    sha256: raw.sha256,
  })
  t.same(iris.inputs[0], {
    name: 'sepal_length',
    datatype: 'FP64',
    shape: [-1],
    type: 'numerical',
    reference: {
      edges: raw.reference.features[0].edges,
      proportions: raw.reference.features[0].proportions,
      min: raw.reference.features[0].min,
      max: raw.reference.features[0].max,
    },
    standardisation: { mean: raw.preprocessing.standardisation.mean[0], scale: raw.preprocessing.standardisation.scale[0] },
  })
  t.equal(iris.reference_rows, 150)
  t.same(iris.drift, { status: 'disabled' }, 'drift monitoring is off in this set-up')
  const cars = bodyOf(await s.call('GET', '/api/v1/models/cars'))
  t.equal(cars.classes, undefined, 'a regression has no classes')
  const answers = rawArtifact('cars').reference.predictions
  t.same(cars.outputs, [
    {
      name: 'miles_per_gallon',
      datatype: 'FP64',
      shape: [-1],
      reference: { edges: answers.edges, proportions: answers.proportions, min: answers.min, max: answers.max },
    },
  ])
  const origin = rawArtifact('cars').reference.features[6]
  t.same(cars.inputs[6], {
    name: 'origin',
    datatype: 'BYTES',
    shape: [-1],
    type: 'categorical',
    levels: ['USA', 'Europe', 'Japan'],
    reference: { levels: origin.levels, proportions: origin.proportions },
  })
  t.same(
    cars.inputs[5].standardisation,
    { mean: rawArtifact('cars').preprocessing.standardisation.mean[5], scale: rawArtifact('cars').preprocessing.standardisation.scale[5] },
    'a numerical input after others has its own mean and scale',
  )
})

t.test('OIP metadata: server, model (per version) and probes', async (t) => {
  const s = await setup(t)
  t.same(bodyOf(await s.call('GET', '/v2')), { name: 'svc', version: VERSION, extensions: [] })
  t.same(bodyOf(await s.call('GET', '/v2/health/live')), { live: true })
  const ready = await s.call('GET', '/v2/health/ready')
  t.equal(ready.status, 200)
  t.same(bodyOf(ready), { ready: true })
  const expected = {
    name: 'iris',
    versions: ['1'],
    platform: KERNEL_PLATFORM,
    inputs: ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'].map((name) => ({ name, datatype: 'FP64', shape: [-1] })),
    outputs: [
      { name: 'species', datatype: 'BYTES', shape: [-1] },
      { name: 'probabilities', datatype: 'FP64', shape: [-1, 3] },
    ],
  }
  t.same(bodyOf(await s.call('GET', '/v2/models/iris')), expected)
  t.same(bodyOf(await s.call('GET', '/v2/models/iris/versions/1')), expected)
  t.same(bodyOf(await s.call('GET', '/v2/models/iris/ready')), { name: 'iris', ready: true })
  t.same(bodyOf(await s.call('GET', '/v2/models/iris/versions/1/ready')), { name: 'iris', ready: true })
})

t.test('a broken model is UNAVAILABLE with its reason: 503 on predict, metadata and ready; the other serves', async (t) => {
  const s = await setup(t, { ...shippedFiles(), 'cars/1/model.json': corrupted('cars') })
  const list = bodyOf(await s.call('GET', '/api/v1/models')).models
  t.match(list[0], { name: 'cars', state: 'UNAVAILABLE', versions: [], default_version: '1', reason: /cars\/1\/model\.json: .*sha256/ })
  const { reason } = list[0]
  const detail = `Model cars is not ready: ${reason}`
  const predict = await s.call('POST', '/api/v1/predict', { model: 'cars', instances: [{}] })
  t.equal(predict.status, 503)
  t.match(problemOf(predict), { type: 'urn:svc:problem:model-not-ready', detail, error: detail })
  t.equal((await s.call('POST', '/v2/models/cars/infer', { inputs: [] })).status, 503)
  t.equal((await s.call('GET', '/v2/models/cars')).status, 503)
  const ready = await s.call('GET', '/v2/models/cars/ready')
  t.equal(ready.status, 503)
  t.match(problemOf(ready), { error: detail, name: 'cars', ready: false })
  t.same(bodyOf(await s.call('GET', '/api/v1/models/cars')), list[0], 'the summary alone: there is no schema to show')
  t.equal((await s.call('POST', '/api/v1/predict', { model: 'iris', instances: IRIS_ROWS })).status, 200, 'iris still serves')
  t.equal((await s.call('GET', '/v2/health/ready')).status, 200, 'one ready model makes the server ready')
  t.notMatch(await s.text(), /svc_model_prediction_requests_total\{[^}]*model="cars"/, 'an unavailable model makes no series')
})

t.test('with no model ready, /v2/health/ready is 503; a model without a manifest has no default version', async (t) => {
  const s = await setup(t, {
    'iris/manifest.json': manifest('1'),
    'iris/1/model.json': corrupted('iris'),
    'cars/manifest.json': '{',
    'cars/1/model.json': '{}',
  })
  const reply = await s.call('GET', '/v2/health/ready')
  t.equal(reply.status, 503)
  t.match(problemOf(reply), { type: 'urn:svc:problem:server-not-ready', error: 'No model is ready to serve', ready: false })
  t.match(bodyOf(await s.call('GET', '/api/v1/models/cars')), {
    name: 'cars',
    state: 'UNAVAILABLE',
    default_version: null,
    versions: [],
    reason: /cars\/manifest\.json/,
  })
})

t.test('a version whose tokens cannot be signed (feedback on, no key for it) answers without a feedback_tokens member', async (t) => {
  const h = harness()
  await h.registry.load()
  t.teardown(() => h.registry.stop())
  const feedback = { publish: () => {}, tokens: () => undefined, score: () => ({ accepted: 0, refused: [] }) }
  const options = { models: h.registry, metrics: createModelMetrics(h.metrics), maxBatch: 10, drift: undefined, feedback }
  const router = createRouter(apiV1Routes(options), [])
  const ctx = request('POST', '/api/v1/predict', { model: 'iris', id: 'x', instances: IRIS_ROWS })
  const entry = router.find(ctx)
  const reply = await (entry.handlers.get('POST') ?? entry.otherMethod)(ctx)
  t.same(Object.keys(bodyOf(reply)), ['model_name', 'model_version', 'id', 'outputs'])
})
