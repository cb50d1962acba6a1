// What the model endpoints share on the HTTP side: the reply of a prediction (now, or once an async
// predictor settles), the body read with OIP's `error` member on its errors, tensor metadata, the
// per-build memo, and the errors of a missing model or server.
import { EventEmitter } from 'node:events'
import type { IncomingMessage, ServerResponse } from 'node:http'
import t from 'tap'
import { Ctx } from '../../lib/core/http/context.js'
import { HttpError } from '../../lib/core/http/errors.js'
import type { Reply } from '../../lib/core/pipeline.js'
import { answered, find, inputMetadata, memo, notFound, outputMetadata, readJson, readJsonNow, replyOf, SERVER_NOT_READY } from '../../lib/endpoints/serving.js'
import { RequestError } from '../../lib/models/inference/request-error.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import { notReady } from '../../lib/serving/lookup-error.js'
import type { ModelServing } from '../../lib/serving/serving.js'
import { kernelVersion } from '../fixtures/model-runtime.js'

/** A context whose body arrives as `chunks`, read before the pipeline as a `body: 'json'` route's is. */
const bodyCtx = (contentType: string | undefined, chunks: readonly string[], limit = 64) => {
  const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType }
  const req = Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers, rawHeaders: [], pause() {} })
  const ctx = new Ctx(req as unknown as IncomingMessage, new EventEmitter() as unknown as ServerResponse, limit)
  ctx.readBody(() => {})
  for (const chunk of chunks) req.emit('data', Buffer.from(chunk))
  req.emit('end')
  return ctx
}

t.test('a prediction replies in the same turn when its answer is text, once it settles when a promise', async (t) => {
  t.same(replyOf('{"a":1}'), { kind: 'json', status: 200, json: '{"a":1}' })
  t.same(answered('[]'), { kind: 'json', status: 200, json: '[]' })
  const later = replyOf(Promise.resolve('{"b":2}'))
  t.ok(later instanceof Promise)
  t.same(await later, { kind: 'json', status: 200, json: '{"b":2}' })
  const refused = new RequestError('INVALID_INPUT', 'Input petal_width: expected a number', 'petal_width')
  await t.rejects(
    replyOf(Promise.reject(refused)) as Promise<Reply>,
    { status: 400, code: 'INVALID_INPUT', extra: { error: refused.message, input: 'petal_width' } },
    "an async runtime's RequestError is its 400",
  )
  const crash = new Error('session lost')
  await t.rejects(replyOf(Promise.reject(crash)) as Promise<Reply>, crash, 'anything else goes on as it was (a 500)')
})

t.test("the body's errors carry OIP's `error` member, in this turn or by promise", async (t) => {
  t.same(readJsonNow(bodyCtx('application/json', ['{"inputs":', '[]}'])), { inputs: [] })
  const cases: Array<[string, Ctx, { status: number; code: string; extra: Record<string, unknown> }]> = [
    [
      'no content type',
      bodyCtx(undefined, ['{}']),
      { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', extra: { error: 'Content-Type must be application/json, got none' } },
    ],
    ['malformed JSON', bodyCtx('application/json', ['{']), { status: 400, code: 'INVALID_JSON', extra: { error: /^Request body is not valid JSON/ } }],
    ['over the limit', bodyCtx('application/json', ['[1,2,3]'], 4), { status: 413, code: 'PAYLOAD_TOO_LARGE', extra: { error: /4/ } }],
  ]
  for (const [what, ctx, expected] of cases) {
    const error = t.throws(() => readJsonNow(ctx), expected, what) as unknown as HttpError
    t.ok(error instanceof HttpError && error.cause instanceof HttpError, `${what}: the error read is its cause`)
    t.equal(error.message, (error.cause as HttpError).message)
    await t.rejects(readJson(ctx), expected, `${what}, by promise`)
  }
  t.same(await readJson(bodyCtx('application/json', ['[1]'])), [1])
})

t.test('tensor metadata: an input by its type, an output by its kind, probabilities one column per class', async (t) => {
  t.same(inputMetadata({ name: 'weight', type: 'numerical' }), { name: 'weight', datatype: 'FP64', shape: [-1] })
  t.same(inputMetadata({ name: 'age', type: 'numerical', datatype: 'INT64' }), { name: 'age', datatype: 'INT64', shape: [-1] })
  t.same(inputMetadata({ name: 'origin', type: 'categorical', levels: ['usa', 'japan'] }), { name: 'origin', datatype: 'BYTES', shape: [-1] })
  const iris = kernelVersion('iris').model
  t.same(
    outputMetadata(iris),
    iris.outputs.map(({ name, type }) =>
      type === 'label' ? { name, datatype: 'BYTES', shape: [-1] } : { name, datatype: 'FP64', shape: type === 'probabilities' ? [-1, 3] : [-1] },
    ),
  )
  t.ok(
    outputMetadata(iris).some((output) => output.shape.length === 2),
    'iris has its probabilities',
  )
  const cars = kernelVersion('cars').model
  t.same(
    outputMetadata(cars),
    cars.outputs.map(({ name }) => ({ name, datatype: 'FP64', shape: [-1] })),
  )
  const both = { ...cars, outputs: [{ name: 'p', type: 'probabilities' }] } as unknown as typeof cars
  t.same(outputMetadata(both), [{ name: 'p', datatype: 'FP64', shape: [-1, 0] }], 'a regressor has no classes')
})

t.test('memo builds once per served build: a reload brings a new build, so a new value', async (t) => {
  const { model, predictor } = kernelVersion('iris')
  const build = (): ServedModel => Object.freeze({ name: 'iris', version: '1', model, predictor })
  const builds: ServedModel[] = []
  const bodyOf = memo((served) => {
    builds.push(served)
    return { version: served.version }
  })
  const [first, reloaded] = [build(), build()]
  const value = bodyOf(first)
  t.equal(bodyOf(first), value, 'the same value on every call')
  t.not(bodyOf(reloaded), value, 'another build of the same version is built again')
  t.same(builds, [first, reloaded])
})

t.test('a missing model is answered: 404, or 503 with the extra members a probe adds; no model at all is SERVER_NOT_READY', async (t) => {
  const served = { name: 'iris', version: '1' } as unknown as ServedModel
  const serving = {
    find: (name: string, version: string | undefined) => {
      if (name === 'cars') throw notReady('cars', 'no artifact')
      if (name !== 'iris' || (version ?? '1') !== '1') throw new Error(`unknown ${name}`)
      return served
    },
  } as unknown as ModelServing
  t.equal(find(serving, 'iris', undefined), served)
  t.throws(() => find(serving, 'cars', undefined, { ready: false }), {
    status: 503,
    code: 'MODEL_NOT_READY',
    message: 'Model cars is not ready: no artifact',
    extra: { error: 'Model cars is not ready: no artifact', ready: false },
  })
  t.throws(() => find(serving, 'wine', undefined), /unknown wine/, 'what is not a lookup error goes on as it was')
  t.match(notFound('iris', '3'), {
    status: 404,
    code: 'MODEL_NOT_FOUND',
    message: 'Model iris with version 3 not found',
    extra: { error: 'Model iris with version 3 not found' },
  })
  t.match(SERVER_NOT_READY, {
    status: 503,
    code: 'SERVER_NOT_READY',
    message: 'No model is ready to serve',
    extra: { error: 'No model is ready to serve', ready: false },
  })
  t.ok(SERVER_NOT_READY instanceof HttpError)
})
