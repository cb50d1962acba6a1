// Model serving over a real socket: the shipped models, the OIP routes, errors and the ML series.
import { cp, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { KERNEL_PLATFORM as PLATFORM } from '../../lib/models/kernel/runtime.js'
import { startApp, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { artifactFile, corrupted, manifest } from '../fixtures/model-registry.js'
import { ARTIFACTS, artifactBytes } from '../fixtures/models.js'
import { tempTree } from '../fixtures/model-store.js'
import { irisVersions, writeManifest } from '../fixtures/rollout.js'
import { oipChecker } from '../fixtures/oip-schemas.js'
import { describedResponse, type Json, pointer, schemaChecker } from '../fixtures/openapi.js'

type Setup = Running & {
  post(path: string, body: unknown, init?: RequestInit): Promise<Response>
  get(path: string): Promise<Response>
  scrape(): Promise<string>
}

const setup = async (t: Test, env: Env = {}): Promise<Setup> => {
  const running = await startApp(t, { SVC_ENVIRONMENT: 'stage', ...env })
  const post = (path: string, body: unknown, init: RequestInit = {}) =>
    fetch(running.base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    })
  const get = (path: string) => fetch(running.base + path)
  return { ...running, post, get, scrape: async () => (await get('/metrics')).text() }
}

const ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 6.7, sepal_width: 3.0, petal_length: 5.2, petal_width: 2.3 },
]
const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const
const PER_INPUT = FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [2], data: ROWS.map((row) => row[name]) }))
const MATRIX = [{ name: 'x', datatype: 'FP64', shape: [2, 4], data: ROWS.map((row) => FEATURES.map((f) => row[f])) }]

t.test('instances, tensors per input and one [N, F] tensor predict the same over HTTP', async (t) => {
  const s = await setup(t)
  const shorthand = await s.post('/api/v1/predict', { model: 'iris', id: 'abc', instances: ROWS })
  t.equal(shorthand.status, 200)
  t.equal(shorthand.headers.get('content-type'), 'application/json')
  const body = (await shorthand.json()) as any
  t.match(body, { model_name: 'iris', model_version: '1', id: 'abc' })
  t.same(body.outputs[0], { name: 'species', datatype: 'BYTES', shape: [2], data: ['setosa', 'virginica'] })
  t.same(body.outputs[1].shape, [2, 3])
  for (let r = 0; r < 2; r++) {
    const row = body.outputs[1].data.slice(r * 3, r * 3 + 3) as number[]
    t.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12, `row ${r} sums to 1`)
  }
  const outputsOf = async (res: Promise<Response>) => ((await (await res).json()) as any).outputs
  t.same(await outputsOf(s.post('/api/v1/predict', { model: 'iris', inputs: PER_INPUT })), body.outputs)
  t.same(await outputsOf(s.post('/v2/models/iris/infer', { inputs: MATRIX })), body.outputs)
  t.same(await outputsOf(s.post('/v2/models/iris/versions/1/infer', { id: 'x', inputs: PER_INPUT })), body.outputs)
})

t.test('OIP metadata routes answer the KServe v2 shapes', async (t) => {
  const s = await setup(t)
  t.match(await (await s.get('/v2')).json(), { name: 'svc', version: String, extensions: [] })
  t.same(await (await s.get('/v2/health/live')).json(), { live: true })
  const ready = await s.get('/v2/health/ready')
  t.equal(ready.status, 200)
  t.same(await ready.json(), { ready: true })
  t.same(await (await s.get('/v2/models/iris/ready')).json(), { name: 'iris', ready: true })
  t.same(await (await s.get('/v2/models/cars')).json(), {
    name: 'cars',
    versions: ['1'],
    platform: PLATFORM,
    inputs: [
      ...['cylinders', 'displacement', 'horsepower', 'weight_in_lbs', 'acceleration', 'year'].map((name) => ({ name, datatype: 'FP64', shape: [-1] })),
      { name: 'origin', datatype: 'BYTES', shape: [-1] },
    ],
    outputs: [{ name: 'miles_per_gallon', datatype: 'FP64', shape: [-1] }],
  })
  const list = (await (await s.get('/api/v1/models')).json()) as any
  t.same(
    list.models.map((m: any) => [m.name, m.state]),
    [
      ['cars', 'READY'],
      ['iris', 'READY'],
    ],
  )
})

t.test('errors are problem+json with an error member: 404 with the exact message, 400, 413, 415', async (t) => {
  const s = await setup(t, { SVC_MAX_BATCH: '2', SVC_MAX_BODY_BYTES: '2048' })
  const unknown = await s.post('/api/v1/predict', { model: 'iris', version: '3', instances: ROWS })
  t.equal(unknown.status, 404)
  t.equal(unknown.headers.get('content-type'), 'application/problem+json')
  t.match(await unknown.json(), {
    status: 404,
    detail: 'Model iris with version 3 not found',
    error: 'Model iris with version 3 not found',
    request_id: String,
  })
  t.match(await (await s.get('/v2/models/nope')).json(), { status: 404, error: 'Model nope not found' })
  const batch = await s.post('/v2/models/iris/infer', { inputs: [{ name: 'x', datatype: 'FP64', shape: [3, 4], data: Array(12).fill(1) }] })
  t.equal(batch.status, 400)
  t.match(await batch.json(), { error: 'the batch has 3 rows; at most 2 are allowed per request', input: 'x' })
  // Sent chunked, so the limit is found while ctx.json() reads (a Content-Length over it is refused before routing).
  const chunked = new Blob([JSON.stringify({ model: 'iris', pad: 'x'.repeat(4096) })]).stream()
  const large = await s.post('/api/v1/predict', '', { body: chunked, duplex: 'half' } as RequestInit)
  t.equal(large.status, 413)
  t.match(await large.json(), { error: /exceeds the limit of 2048 bytes/ })
  const wrong = await s.post('/api/v1/predict', '{}', { headers: { 'content-type': 'text/plain' } })
  t.equal(wrong.status, 415)
  t.match(await wrong.json(), { error: /Content-Type must be application\/json/ })
})

t.test('the ML series are exact after known traffic, with no series for unknown names', async (t) => {
  const s = await setup(t)
  await (await s.post('/api/v1/predict', { model: 'iris', instances: ROWS })).arrayBuffer()
  await (await s.post('/v2/models/iris/infer', { inputs: MATRIX })).arrayBuffer()
  await (await s.post('/v2/models/iris/infer', { inputs: [{ name: 'x', datatype: 'FP64', shape: [1, 3], data: [1, 2, 3] }] })).arrayBuffer()
  await (await s.post('/api/v1/predict', { model: 'ghost', instances: ROWS })).arrayBuffer()
  await (await s.post('/v2/models/ghost/infer', { inputs: MATRIX })).arrayBuffer()
  const text = await s.scrape()
  const iris = { model: 'iris', version: '1', environment: 'stage' }
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'success' }), 2)
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'client_error' }), 1)
  t.equal(sample(text, 'svc_model_prediction_requests_total', { ...iris, outcome: 'server_error' }), 0)
  t.equal(sample(text, 'svc_model_predictions_total', iris), 4)
  t.equal(sample(text, 'svc_model_prediction_duration_seconds_count', iris), 2)
  t.equal(sample(text, 'svc_model_prediction_batch_size_sum', { model: 'iris', environment: 'stage' }), 4)
  t.equal(sample(text, 'svc_model_prediction_batch_size_count', { model: 'iris', environment: 'stage' }), 2)
  t.notMatch(text, /svc_model_predictions_in_flight/, 'no per-model in-flight gauge: no rule, alert or panel read it')
  t.notMatch(text, /ghost/, 'a model that does not exist never makes a series')
})

t.test("every served version's prediction series are on /metrics at 0 right after load, before any request, and a reload adds a new version's", async (t) => {
  const root = await tempTree(t, irisVersions({ default_version: '1', versions: ['1'] }))
  const s = await setup(t, { SVC_MODEL_STORE: root })
  const atZero = (text: string, model: string, version: string) => {
    const labels = { model, version, environment: 'stage' }
    for (const outcome of ['success', 'client_error', 'server_error'])
      t.equal(sample(text, 'svc_model_prediction_requests_total', { ...labels, outcome }), 0, `${model} ${version}: ${outcome} requests at 0`)
    t.equal(sample(text, 'svc_model_predictions_total', labels), 0, `${model} ${version}: rows at 0`)
    t.equal(sample(text, 'svc_model_prediction_duration_seconds_bucket', { ...labels, le: '+Inf' }), 0, `${model} ${version}: duration at 0`)
    t.equal(sample(text, 'svc_model_prediction_duration_seconds_count', labels), 0)
    t.equal(sample(text, 'svc_model_prediction_batch_size_count', { model, environment: 'stage' }), 0, `${model}: batch size at 0`)
  }
  const first = await s.scrape()
  atZero(first, 'iris', '1')
  t.notMatch(first, /version="2"/, 'a version the manifest does not list has no series')

  await writeManifest(root, { default_version: '1', versions: ['1', '2'] })
  await s.app.models.reload()
  const reloaded = await s.scrape()
  atZero(reloaded, 'iris', '2')
  await (await s.post('/v2/models/iris/versions/2/infer', { inputs: MATRIX })).arrayBuffer()
  const text = await s.scrape()
  t.equal(sample(text, 'svc_model_predictions_total', { model: 'iris', version: '2', environment: 'stage' }), 2, 'the first request counts from 0')
  t.equal(sample(text, 'svc_model_predictions_total', { model: 'iris', version: '1', environment: 'stage' }), 0)
})

t.test('a broken model is UNAVAILABLE with its reason and answers 503; the other serves', async (t) => {
  const root = await tempTree(t, {})
  await cp(ARTIFACTS, root, { recursive: true })
  await writeFile(join(root, 'cars/1/model.json'), corrupted('cars'))
  const s = await setup(t, { SVC_MODEL_STORE: root })
  const list = (await (await s.get('/api/v1/models')).json()) as any
  const cars = list.models.find((m: any) => m.name === 'cars')
  t.match(cars, { state: 'UNAVAILABLE', reason: /sha256/, versions: [], platform: PLATFORM })
  const predict = await s.post('/api/v1/predict', { model: 'cars', instances: [{}] })
  t.equal(predict.status, 503)
  t.match(await predict.json(), { status: 503, error: `Model cars is not ready: ${cars.reason}` })
  t.equal((await s.get('/v2/models/cars/ready')).status, 503)
  t.equal((await s.post('/api/v1/predict', { model: 'iris', instances: ROWS })).status, 200)
})

t.test('a version that fails to load is listed FAILED with its reason; one that fails on reload is READY with it; the bodies fit the document', async (t) => {
  const root = await tempTree(t, {
    'iris/manifest.json': manifest('1', ['2', '3']),
    'iris/1/model.json': artifactBytes('iris'),
    'iris/2/model.json': artifactFile('iris', '2'),
    'iris/3/model.json': '{"format": 1, "name": "iris",',
  })
  const s = await setup(t, { SVC_MODEL_STORE: root })
  const document = (await (await s.get('/openapi.json')).json()) as Json
  const check = schemaChecker(document, { isClosed: true })
  const fits = (template: string, body: unknown): string | undefined =>
    check(pointer(...describedResponse(document, 'GET', template, 200).tokens, 'content', 'application/json', 'schema'), body)

  const one = (await (await s.get('/api/v1/models/iris')).json()) as any
  t.equal(fits('/api/v1/models/{name}', one), undefined, 'GET /api/v1/models/iris fits its schema')
  t.match(one, { state: 'READY', versions: ['1', '2'] })
  t.match(one.version_states, [
    { version: '1', state: 'READY', reason: null },
    { version: '2', state: 'READY', reason: null },
    { version: '3', state: 'FAILED', reason: /^iris\/3\/model\.json: .*JSON/ },
  ])
  t.equal(one.version_states.length, 3, 'one entry per version the manifest names')
  const list = (await (await s.get('/api/v1/models')).json()) as any
  t.equal(fits('/api/v1/models', list), undefined, 'GET /api/v1/models fits its schema')
  t.same(list.models[0].version_states, one.version_states, 'the list shows the same')

  // Version 2 served, then its file is damaged: the build loaded before serves on, and says why the new one was refused.
  await writeFile(join(root, 'iris/2/model.json'), '{"format": 1, "name": "iris",')
  await s.app.models.reload()
  const reloaded = (await (await s.get('/api/v1/models/iris')).json()) as any
  t.equal(fits('/api/v1/models/{name}', reloaded), undefined)
  t.same(reloaded.versions, ['1', '2'])
  t.match(reloaded.version_states[1], { version: '2', state: 'READY', reason: /^iris\/2\/model\.json: .*JSON/ })
  t.equal((await s.post('/api/v1/predict', { model: 'iris', version: '2', instances: ROWS })).status, 200, 'version 2 still answers')
})

t.test('outputs asked for are the only ones answered, in that order, on both APIs; an unknown or repeated name is a 400 naming it', async (t) => {
  const s = await setup(t)
  const oip = (schema: Parameters<ReturnType<typeof oipChecker>>[0], body: unknown, what: string) =>
    t.equal(oipChecker()(schema, body), undefined, `${what}: fits OIP ${schema}`)
  const full = (await (await s.post('/v2/models/iris/infer', { id: 'o', inputs: PER_INPUT })).json()) as any
  const [species, probabilities] = full.outputs
  const calls = [
    ['/v2/models/iris/infer', { id: 'o', inputs: PER_INPUT }],
    ['/v2/models/iris/versions/1/infer', { id: 'o', inputs: MATRIX }],
    ['/api/v1/predict', { model: 'iris', id: 'o', inputs: PER_INPUT }],
    ['/api/v1/predict', { model: 'iris', id: 'o', instances: ROWS }],
  ] as const
  for (const [path, body] of calls) {
    for (const [names, outputs] of [
      [['probabilities'], [probabilities]],
      [
        ['probabilities', 'species'],
        [probabilities, species],
      ],
      [['species'], [species]],
    ] as const) {
      const request = { ...body, outputs: names.map((name) => ({ name })) }
      if ('inputs' in request && !path.startsWith('/api')) oip('inference_request', request, `${path} ${names}`)
      const answer = await s.post(path, request)
      t.equal(answer.status, 200, `${path} ${names}`)
      const json = await answer.json()
      oip('inference_response', json, `${path} ${names}`)
      t.same(json, { ...full, outputs }, `${path} ${names}: those outputs only, in that order`)
    }
    t.same(await (await s.post(path, { ...body, outputs: [] })).json(), full, `${path}: none named is every output`)
    const unknown = await s.post(path, { ...body, outputs: [{ name: 'species' }, { name: 'colour' }] })
    t.equal(unknown.status, 400)
    const refusal = (await unknown.json()) as any
    oip('inference_error_response', refusal, `${path} unknown`)
    t.match(refusal, {
      type: 'urn:svc:problem:invalid-request',
      error: 'output colour is not an output of model iris; its outputs are species, probabilities',
    })
    const twice = await s.post(path, { ...body, outputs: [{ name: 'species' }, { name: 'species' }] })
    t.equal(twice.status, 400)
    t.match(await twice.json(), { type: 'urn:svc:problem:invalid-request', error: 'output species is asked for more than once' })
  }
  const chevelle = { cylinders: 8, displacement: 307, horsepower: 130, weight_in_lbs: 3504, acceleration: 12, year: 1970, origin: 'USA' }
  const cars = await s.post('/api/v1/predict', { model: 'cars', instances: [chevelle], outputs: [{ name: 'species' }] })
  t.equal(cars.status, 400, 'an output of another model is unknown to this one')
  t.match(await cars.json(), { error: 'output species is not an output of model cars; its outputs are miles_per_gallon' })
  const mpg = (await (await s.post('/api/v1/predict', { model: 'cars', instances: [chevelle], outputs: [{ name: 'miles_per_gallon' }] })).json()) as any
  t.same(
    mpg.outputs.map((o: any) => o.name),
    ['miles_per_gallon'],
  )
  const text = await s.scrape()
  t.equal(
    sample(text, 'svc_model_prediction_requests_total', { model: 'iris', version: '1', environment: 'stage', outcome: 'client_error' }),
    8,
    'the refusals are the client’s',
  )
})
