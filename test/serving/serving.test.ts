// One prediction, for /api/v1 and /v2 alike, over a real registry of the shipped models: the lookup
// and its errors, the answer's JSON text with each API's feedback tokens, the rollout's routing, the
// drift, shadow and payload hand-offs, and the series counted against the version that answered.
import { Registry } from 'prom-client'
import t from 'tap'
import type { Ctx } from '../../lib/core/http/context.js'
import type { DriftMonitor } from '../../lib/drift/monitor.js'
import { createFeedback } from '../../lib/serving/feedback/feedback.js'
import type { InferRequest } from '../../lib/models/inference/request.js'
import type { PayloadLog, PredictionCapture } from '../../lib/serving/payload/log.js'
import type { ModelRegistry, ServedModel } from '../../lib/models/registry/registry.js'
import { createShadowCopies, type ShadowCopies } from '../../lib/serving/shadow/copies.js'
import { createModelMetrics } from '../../lib/serving/metrics.js'
import { type Api, createModelServing, type ServingOptions, TOKEN_MEMBERS } from '../../lib/serving/serving.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { makeCtx, rethrow } from '../fixtures/ctx.js'
import { corrupted, harness, manifest, shippedFiles } from '../fixtures/model-registry.js'
import { FAKE_PLATFORM, fakeFiles, fakeRuntime } from '../fixtures/model-runtime.js'
import { irisVersions, total, withCanary } from '../fixtures/rollout.js'

const ROW = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }
const instances = (id: string | undefined, rows = 1, outputs?: readonly string[]): InferRequest => ({
  kind: 'instances',
  instances: Array.from({ length: rows }, () => ROW),
  rows,
  id,
  outputs,
})
const tensors = (id: string): InferRequest => ({
  kind: 'tensors',
  inputs: Object.entries(ROW).map(([name, value]) => ({ name, datatype: 'FP64', shape: [1], data: [value] })),
  rows: 1,
  id,
})

type Calls = { drift: string[]; payload: PredictionCapture[] }

/** A registry of `files`, loaded, and a serving of it for `api` with the rest of `options`. */
const setup = async (
  files: Record<string, string | Buffer> = shippedFiles(),
  api: Api = 'v1',
  options: Partial<ServingOptions> = {},
  runtimes?: Parameters<typeof harness>[1],
) => {
  const h = harness(files, runtimes)
  await h.registry.load()
  const metrics = createModelMetrics(h.metrics)
  const serving = createModelServing({ models: h.registry, metrics, maxBatch: 8, drift: undefined, ...options }, api)
  const count = (name: string, labels: Record<string, string>) => h.metrics.metrics().then((text) => total(text, name, labels))
  return { h, serving, count }
}

const predict = async (
  serving: ReturnType<typeof createModelServing>,
  request: InferRequest,
  version?: string,
  ctx: Ctx = makeCtx('POST', '/api/v1/predict'),
) => JSON.parse(await serving.predict(ctx, 'iris', version, request)) as Record<string, unknown>

t.test('find: the served version, or a ModelLookupError for an unknown model, version, or an UNAVAILABLE model', async (t) => {
  const { h, serving } = await setup({ ...shippedFiles(), 'cars/1/model.json': corrupted('cars') })
  t.equal(serving.find('iris', undefined), h.registry.resolve('iris'))
  t.equal(serving.find('iris', '1'), h.registry.resolve('iris'))
  t.same(serving.requestOptions, { maxBatch: 8 })
  t.throws(() => serving.find('wine', undefined), { name: 'ModelLookupError', code: 'MODEL_NOT_FOUND', message: 'Model wine not found' })
  t.throws(() => serving.find('wine', '2'), { code: 'MODEL_NOT_FOUND', message: 'Model wine not found' }, 'an unknown model is not found, whatever the version')
  t.throws(() => serving.find('iris', '3'), { code: 'MODEL_NOT_FOUND', message: 'Model iris with version 3 not found' })
  t.throws(() => serving.find('cars', undefined), { code: 'MODEL_NOT_READY', message: /^Model cars is not ready: default version 1: / })
})

t.test("predict answers the JSON text, counts its series against the version, and names it on the request's line", async (t) => {
  const { h, serving, count } = await setup()
  const ctx = makeCtx('POST', '/api/v1/predict')
  const answer = await predict(serving, instances(undefined, 2), undefined, ctx)
  t.match(answer, { id: ctx.requestId, model_version: '1' }, 'no id: the request id is echoed')
  t.equal(ctx.logMembers, ',"model":"iris","model_version":"1"')
  t.match(await predict(serving, instances('r-1', 1, ['species'])), { id: 'r-1', model_version: '1' })
  t.equal(await count('svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }), 2)
  t.equal(await count('svc_model_predictions_total', { model: 'iris', version: '1' }), 3, 'rows, not requests')
  t.equal(await count('svc_model_prediction_duration_seconds_count', { model: 'iris', version: '1' }), 2)
  t.equal(await count('svc_model_prediction_batch_size_sum', { model: 'iris' }), 3)
  t.throws(() => serving.predict(makeCtx(), 'iris', undefined, instances(undefined, 1, ['no_such_output'])), { name: 'RequestError' })
  t.throws(() => serving.predict(makeCtx(), 'iris', undefined, { kind: 'instances', instances: [{ horsepower: 1 }], rows: 1, id: undefined }), {
    name: 'RequestError',
  })
  serving.refused('iris', undefined)
  serving.refused('iris', '1')
  serving.refused('iris', '3')
  serving.refused('wine', undefined)
  t.equal(
    await count('svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'client_error' }),
    4,
    'refused inputs and bodies refused before the lookup, naming the default or its version',
  )
  t.throws(() => serving.predict(makeCtx(), 'wine', undefined, instances(undefined)), { code: 'MODEL_NOT_FOUND' })
  t.notMatch(await h.metrics.metrics(), /wine/, 'an unknown model makes no series')
})

/** Feedback on, with its own series: no version has a key until it is published to it. */
const feedbackOf = () => createFeedback({ config: { secret: 's'.repeat(32), previousSecret: undefined, maxAgeS: 3600, seen: 100 }, metrics: new Registry() })

t.test("with feedback on, each API puts the rows' tokens where its clients read them", async (t) => {
  for (const api of ['v1', 'v2'] as const) {
    const files = shippedFiles()
    const feedback = feedbackOf()
    const { h, serving } = await setup(files, api, { feedback })
    feedback.publish([h.registry.resolve('iris') as ServedModel])
    const answer = await predict(serving, api === 'v1' ? instances('a', 2) : tensors('a'))
    const tokens = api === 'v1' ? answer['feedback_tokens'] : (answer['parameters'] as Record<string, unknown>)['feedback_tokens']
    t.ok(Array.isArray(tokens) && tokens.length === (api === 'v1' ? 2 : 1) && tokens.every((token) => typeof token === 'string'), `${api}: a token per row`)
    t.equal(TOKEN_MEMBERS[api]('["x"]'), api === 'v1' ? ',"feedback_tokens":["x"]' : ',"parameters":{"feedback_tokens":["x"]}')
    // A version without a key (not published to feedback) answers no tokens, and no member.
    const { serving: unkeyed } = await setup(files, api, { feedback: feedbackOf() })
    const bare = await predict(unkeyed, instances('b'))
    t.notOk('feedback_tokens' in bare || 'parameters' in bare, `${api}: no key, no tokens`)
  }
})

t.test(
  'rollouts: the canary answers its share and its rows go to its bin counters; a named version bypasses the split; the payload log and the shadow hear of it',
  async (t) => {
    const drift: Calls['drift'] = []
    const payload: Calls['payload'] = []
    const monitor = {
      record: (served: ServedModel) => void drift.push(`record ${served.version}`),
      count: (served: ServedModel) => void drift.push(`count ${served.version}`),
    } as unknown as DriftMonitor
    const log = {
      isSampled: (_percent: number | undefined, key: string | undefined) => key !== 'unsampled',
      prediction: (_ctx: Ctx, capture: PredictionCapture) => void payload.push(capture),
    } as unknown as PayloadLog
    const { h, serving, count } = await setup(irisVersions(withCanary(100)), 'v1', { drift: monitor, payload: log })
    t.match(await predict(serving, instances('r')), { model_version: '2' }, 'the canary answers its share')
    t.match(await predict(serving, instances('r'), '1'), { model_version: '1' }, 'a named version bypasses the split')
    t.match(await predict(serving, instances('unsampled'), '2'), { model_version: '2' })
    t.same(drift, ['count 2', 'record 1', 'count 2'], "only the default's rows enter the window")
    t.same(
      payload.map(({ role, requestId, served }) => [role, requestId, served.version]),
      [
        ['canary', 'r', '2'],
        ['named', 'r', '1'],
      ],
    )
    t.equal(await count('svc_model_prediction_requests_total', { model: 'iris', version: '2', outcome: 'success' }), 2)
    t.equal(await count('svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }), 1)

    // The routing key from a header: the payload log samples by it, not by the body's id.
    const keyed = await setup(irisVersions(withCanary(100)), 'v1', { payload: log, routingHeader: 'x-route' })
    payload.length = 0
    await predict(keyed.serving, instances('r'), undefined, makeCtx('POST', '/api/v1/predict', { 'x-route': 'unsampled' }))
    await predict(keyed.serving, instances('unsampled'), undefined, makeCtx('POST', '/api/v1/predict', { 'x-route': 'k' }))
    t.same(
      payload.map(({ requestId }) => requestId),
      ['unsampled'],
    )
    const defaults = await setup(irisVersions({ default_version: '1', versions: ['1', '2'] }), 'v1', { payload: log })
    payload.length = 0
    const unnamed = makeCtx('POST', '/api/v1/predict')
    await predict(defaults.serving, instances(undefined), undefined, unnamed)
    t.same(
      payload.map(({ role, requestId }) => [role, requestId]),
      [['default', unnamed.requestId]],
      'a request without an id is logged by its request id',
    )
    t.ok(h.registry.isReady())
  },
)

t.test('a request looks its model up once: the split, the drift window, the shadow and the payload log read the publish it found', async (t) => {
  const files = irisVersions({ ...withCanary(50), shadow: { version: '2', percent: 100 }, log: { percent: 100 } })
  const h = harness(files)
  await h.registry.load()
  const lookups: string[] = []
  const { registry } = h
  const looked =
    <T>(what: string, look: (name: string) => T) =>
    (name: string): T => {
      lookups.push(`${what} ${name}`)
      return look(name)
    }
  const models: ModelRegistry = {
    ...registry,
    resolve: (name, version) => looked('resolve', (model) => registry.resolve(model, version))(name),
    entry: looked('entry', registry.entry),
    shadowOf: looked('shadowOf', registry.shadowOf),
    published: looked('published', registry.published),
  }
  const recorded: string[] = []
  const drift = {
    record: (served: ServedModel) => void recorded.push(`record ${served.version}`),
    count: (served: ServedModel) => void recorded.push(`count ${served.version}`),
  } as unknown as DriftMonitor
  const roles: string[] = []
  const payload = {
    isSampled: (percent: number | undefined) => percent === 100,
    prediction: (_ctx: Ctx, capture: PredictionCapture) => void roles.push(`${capture.role} ${capture.served.version}`),
  } as unknown as PayloadLog
  const shadows = { copy: () => void recorded.push('copy') } as unknown as ShadowCopies
  const serving = createModelServing({ models, metrics: createModelMetrics(new Registry()), maxBatch: 8, drift, payload, shadows }, 'v1')
  for (const [id, version] of [
    ['a', undefined],
    ['b', undefined],
    ['c', undefined],
    ['d', '1'],
    ['e', '2'],
  ] as const) {
    lookups.length = 0
    await predict(serving, instances(id), version)
    t.same(lookups, ['published iris'], `request ${id}: one lookup`)
  }
  t.same(roles.slice(-2), ['named 1', 'named 2'])
  t.ok(roles.includes('default 1') && roles.includes('canary 2'), roles.join(', '))
  t.same(
    recorded.filter((call) => call !== 'copy'),
    roles.map((role) => (role.endsWith(' 1') ? 'record 1' : 'count 2')),
    "the default's rows enter the window, the canary's its bin counters",
  )
  t.equal(recorded.filter((call) => call === 'copy').length, roles.filter((role) => role.endsWith(' 1')).length, 'what version 1 answered is copied')
})

t.test('a shadow gets a copy of what the primary answered, never of what it answered itself', async (t) => {
  const files = irisVersions({ default_version: '1', versions: ['1', '2'], shadow: { version: '2', percent: 100 } })
  const probe = harness(files)
  const copies = createShadowCopies({
    metrics: probe.metrics,
    logger: createLogger({ name: 'svc', level: 'error', format: 'json', write: () => {} }),
    capacity: 4,
    timeoutMs: 1000,
    tolerance: 0,
    isUnderPressure: () => false,
  })
  const { h, serving } = await setup(files, 'v1', { shadows: copies })
  copies.track([h.registry.resolve('iris', '2') as ServedModel])
  const ctx = makeCtx('POST', '/api/v1/predict')
  await predict(serving, instances('s'), undefined, ctx)
  const named = makeCtx('POST', '/api/v1/predict')
  await predict(serving, instances('s'), '2', named)
  ctx.replyWritten(undefined, rethrow)
  named.replyWritten(undefined, rethrow)
  t.equal(copies.pending(), 1, "the default's answer is copied, the shadow's own is not")
  const plain = await setup(irisVersions({ default_version: '1', versions: ['1', '2'] }), 'v1', { shadows: copies })
  const unshadowed = makeCtx('POST', '/api/v1/predict')
  await predict(plain.serving, instances('s'), undefined, unshadowed)
  unshadowed.replyWritten(undefined, rethrow)
  t.equal(copies.pending(), 1, 'a model without a shadow copies nothing')
})

t.test('an asynchronous runtime: the answer once it settles, a rejection counted as a server error', async (t) => {
  const runtime = fakeRuntime()
  const files = { 'iris/manifest.json': manifest('1'), ...fakeFiles('iris') }
  const { serving, count } = await setup(files, 'v2', {}, { runtimes: [runtime] })
  t.equal(serving.find('iris', undefined).model.platform, FAKE_PLATFORM)
  const pending = serving.predict(makeCtx(), 'iris', undefined, tensors('a'))
  t.ok(pending instanceof Promise, 'a Promise, not the text')
  t.match(JSON.parse(await pending), { id: 'a', model_name: 'iris', model_version: '1' })
  runtime.behaviour.predictError = new Error('session lost')
  await t.rejects(serving.predict(makeCtx(), 'iris', undefined, tensors('b')) as Promise<string>, { message: 'session lost' })
  t.equal(await count('svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'server_error' }), 1)
  t.equal(await count('svc_model_prediction_requests_total', { model: 'iris', version: '1', outcome: 'success' }), 1)
})
