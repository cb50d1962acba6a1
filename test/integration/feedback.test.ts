// Labels sent back over real sockets: tokens on both APIs, every refusal, the route's guards, and
// answers byte-identical with feedback off.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { startApp, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { manifest, rebuilt, shippedFiles } from '../fixtures/model-registry.js'
import { tempTree } from '../fixtures/model-store.js'

const SECRET = 'fleet-secret-for-feedback-tests!'

type Setup = Running & { post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>; scrape(): Promise<string> }

const setup = async (t: Test, env: Env = {}): Promise<Setup> => {
  const running = await startApp(t, { SVC_FEEDBACK_SECRET: SECRET, ...env })
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(running.base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
  return { ...running, post, scrape: async () => (await fetch(`${running.base}/metrics`)).text() }
}

const ROWS = [
  { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 },
  { sepal_length: 6.7, sepal_width: 3.0, petal_length: 5.2, petal_width: 2.3 },
  { sepal_length: 5.9, sepal_width: 3.0, petal_length: 4.2, petal_width: 1.5 },
]
const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] as const
const PER_INPUT = FEATURES.map((name) => ({ name, datatype: 'FP64', shape: [ROWS.length], data: ROWS.map((row) => row[name]) }))

const v1Tokens = async (s: Setup, rows = ROWS): Promise<string[]> =>
  ((await (await s.post('/api/v1/predict', { model: 'iris', instances: rows })).json()) as any).feedback_tokens
const send = async (s: Setup, feedback: unknown, headers?: Record<string, string>): Promise<any> => {
  const res = await s.post('/api/v1/feedback', { feedback }, headers)
  return { status: res.status, body: await res.json() }
}

t.test('every answered row carries a token, on /api/v1 and /v2, in row order, and each scores its row', async (t) => {
  const s = await setup(t)
  const v1 = (await (await s.post('/api/v1/predict', { model: 'iris', instances: ROWS })).json()) as any
  t.same(Object.keys(v1), ['model_name', 'model_version', 'id', 'outputs', 'feedback_tokens'])
  t.equal(v1.feedback_tokens.length, 3)
  const v2 = (await (await s.post('/v2/models/iris/infer', { inputs: PER_INPUT })).json()) as any
  t.same(Object.keys(v2), ['model_name', 'model_version', 'id', 'outputs', 'parameters'])
  t.equal(v2.parameters.feedback_tokens.length, 3)
  t.same(v2.outputs, v1.outputs)
  const selected = (await (await s.post('/v2/models/iris/infer', { inputs: PER_INPUT, outputs: [{ name: 'probabilities' }] })).json()) as any
  t.same(Object.keys(selected), ['model_name', 'model_version', 'id', 'outputs', 'parameters'], 'outputs asked for: the tokens still follow')
  t.same(selected.outputs, [v1.outputs[1]])
  t.equal(selected.parameters.feedback_tokens.length, 3)
  for (const token of [...v1.feedback_tokens, ...v2.parameters.feedback_tokens]) t.ok(token.length < 120 && /^[A-Za-z0-9_-]+$/.test(token), token)
  // The answers were setosa, virginica, versicolor: label them right, wrong, right.
  const truths = ['setosa', 'versicolor', 'versicolor']
  const result = await send(
    s,
    [...v1.feedback_tokens, ...v2.parameters.feedback_tokens].map((token, i) => ({ token, truth: truths[i % 3] })),
  )
  t.same(result, { status: 200, body: { accepted: 6, refused: [] } })
  const body = await s.scrape()
  const confusion = (actual: string, predicted: string) =>
    sample(body, 'svc_model_feedback_confusion_total', {
      model: 'iris',
      version: '1',
      actual,
      predicted,
      correct: String(actual === predicted),
      environment: 'dev',
    })
  t.equal(confusion('setosa', 'setosa'), 2)
  t.equal(confusion('versicolor', 'virginica'), 2)
  t.equal(confusion('versicolor', 'versicolor'), 2)
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'iris', version: '1', environment: 'dev' }), 6)
})

t.test('a regressor is scored on the value its token carries', async (t) => {
  const s = await setup(t)
  const row = { cylinders: 4, displacement: 97, horsepower: 88, weight_in_lbs: 2130, acceleration: 14.5, year: 1970, origin: 'Japan' }
  const answer = (await (await s.post('/api/v1/predict', { model: 'cars', instances: [row] })).json()) as any
  const predicted = answer.outputs[0].data[0] as number
  t.same(await send(s, [{ token: answer.feedback_tokens[0], truth: predicted - 1.5 }]), { status: 200, body: { accepted: 1, refused: [] } })
  const body = await s.scrape()
  t.equal(sample(body, 'svc_model_feedback_absolute_error_sum', { model: 'cars', version: '1', environment: 'dev' }), 1.5)
  t.equal(sample(body, 'svc_model_feedback_squared_error_sum', { model: 'cars', version: '1', environment: 'dev' }), 2.25)
  t.equal(sample(body, 'svc_model_feedback_overestimate_sum', { model: 'cars', version: '1', environment: 'dev' }), 1.5)
})

t.test('each refusal over HTTP: another secret, one character changed, a bad truth, a duplicate, an unknown build, an expired token', async (t) => {
  const s = await setup(t, { SVC_FEEDBACK_MAX_AGE_S: '1' })
  const other = await setup(t, { SVC_FEEDBACK_SECRET: 'another-fleets-secret-0123456789' })
  const store = await tempTree(t, { ...shippedFiles(), 'iris/1/model.json': rebuilt('iris'), 'iris/manifest.json': manifest('1') })
  const rebuiltFleet = await setup(t, { SVC_MODEL_STORE: store })
  const [a, b] = (await v1Tokens(s)) as [string, string]
  const foreign = (await v1Tokens(other))[0] as string
  const unknownBuild = (await v1Tokens(rebuiltFleet))[0] as string
  const edited = `${a.slice(0, 30)}${a[30] === 'Q' ? 'R' : 'Q'}${a.slice(31)}`
  const result = await send(s, [
    { token: a, truth: 'setosa' },
    { token: foreign, truth: 'setosa' },
    { token: edited, truth: 'setosa' },
    { token: b, truth: 'tulip' },
    { token: b, truth: 2 },
    { token: a, truth: 'setosa' },
    { token: unknownBuild, truth: 'setosa' },
  ])
  t.same(result, {
    status: 200,
    body: {
      accepted: 1,
      refused: [
        { index: 1, reason: 'invalid_token' },
        { index: 2, reason: 'invalid_token' },
        { index: 3, reason: 'invalid_truth', expected: ['setosa', 'versicolor', 'virginica'] },
        { index: 4, reason: 'invalid_truth', expected: ['setosa', 'versicolor', 'virginica'] },
        { index: 5, reason: 'duplicate' },
        { index: 6, reason: 'unknown_version' },
      ],
    },
  })
  // Whole seconds: a token issued in second n is expired from second n + 2.
  await sleep(2100)
  t.same(await send(s, [{ token: b, truth: 'virginica' }]), { status: 200, body: { accepted: 0, refused: [{ index: 0, reason: 'expired' }] } })
  const body = await s.scrape()
  const refused = (reason: string) => sample(body, 'svc_feedback_refused_total', { reason, environment: 'dev' })
  t.same(['invalid_token', 'expired', 'invalid_truth', 'unknown_version', 'duplicate'].map(refused), [2, 1, 2, 1, 1])
  t.equal(sample(body, 'svc_model_feedback_rows_total', { model: 'iris', version: '1', environment: 'dev' }), 1, 'refusals count nowhere else')
})

t.test('a malformed body is a 400 problem naming what is wrong; more items than SVC_MAX_BATCH too', async (t) => {
  const s = await setup(t, { SVC_MAX_BATCH: '2' })
  const cases: Array<[unknown, string, RegExp]> = [
    ['{', 'INVALID_JSON', /not valid JSON/],
    [[], 'INVALID_REQUEST', /expected a JSON object/],
    [{ labels: [] }, 'INVALID_REQUEST', /labels: unknown member/],
    [{ feedback: [] }, 'INVALID_REQUEST', /feedback: expected a non-empty array/],
    [{ feedback: [1] }, 'INVALID_REQUEST', /feedback\[0\]: expected an object/],
    [{ feedback: [{ truth: 'setosa' }] }, 'INVALID_REQUEST', /feedback\[0\]\.token: expected the string/],
    [{ feedback: [{ token: 'x' }] }, 'INVALID_REQUEST', /feedback\[0\]\.truth: missing/],
    [{ feedback: [{ token: 'x', truth: 1, note: 'y' }] }, 'INVALID_REQUEST', /feedback\[0\]\.note: unknown member/],
    [
      {
        feedback: [
          { token: 'x', truth: 1 },
          { token: 'y', truth: 1 },
          { token: 'z', truth: 1 },
        ],
      },
      'BATCH_TOO_LARGE',
      /3 items, more than SVC_MAX_BATCH \(2\)/,
    ],
  ]
  for (const [body, code, detail] of cases) {
    const res = await s.post('/api/v1/feedback', body)
    t.equal(res.status, 400, JSON.stringify(body))
    t.equal(res.headers.get('content-type'), 'application/problem+json')
    const problem = (await res.json()) as any
    t.equal(problem.type, `urn:svc:problem:${code.toLowerCase().replaceAll('_', '-')}`)
    t.match(problem.detail, detail)
  }
  const text = await fetch(`${s.base}/api/v1/feedback`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'token,truth' })
  t.equal(text.status, 415, 'a body of another type is refused unread')
})

t.test('a configured bearer token guards the route like the predictions', async (t) => {
  const s = await setup(t, { SVC_API_TOKENS: 'token-of-the-api-0123456789' })
  const open = await s.post('/api/v1/feedback', { feedback: [{ token: 'x', truth: 1 }] })
  t.equal(open.status, 401)
  const auth = { authorization: 'Bearer token-of-the-api-0123456789' }
  const tokens = ((await (await s.post('/api/v1/predict', { model: 'iris', instances: ROWS }, auth)).json()) as any).feedback_tokens
  t.same(await send(s, [{ token: tokens[0], truth: 'setosa' }], auth), { status: 200, body: { accepted: 1, refused: [] } })
})

t.test('with no secret, answers carry no tokens, the route answers 404 FEEDBACK_DISABLED and no feedback series exist', async (t) => {
  const s = await setup(t, { SVC_FEEDBACK_SECRET: '' })
  const answer = await (await s.post('/api/v1/predict', { model: 'iris', id: 'same', instances: ROWS })).text()
  t.equal(
    answer,
    '{"model_name":"iris","model_version":"1","id":"same","outputs":[{"name":"species","datatype":"BYTES","shape":[3],"data":["setosa","virginica","versicolor"]},' +
      `{"name":"probabilities","datatype":"FP64","shape":[3,3],"data":${JSON.stringify(JSON.parse(answer).outputs[1].data)}}]}`,
  )
  const v2 = (await (await s.post('/v2/models/iris/infer', { inputs: PER_INPUT })).json()) as any
  t.notOk('parameters' in v2)
  const res = await s.post('/api/v1/feedback', { feedback: [{ token: 'x', truth: 'setosa' }] })
  t.equal(res.status, 404)
  t.match(await res.json(), { type: 'urn:svc:problem:feedback-disabled', status: 404 })
  t.notMatch(await s.scrape(), /svc_model_feedback|svc_feedback_refused/)
})
