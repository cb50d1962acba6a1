// The one table from the domains' errors to answers (lib/endpoints/problems.ts), down to the bytes
// of the problem body toProblemReply writes.
import t from 'tap'
import { HttpError } from '../../lib/core/http/errors.js'
import { toProblemReply } from '../../lib/core/http/problem.js'
import { rethrowAsHttp, toHttpError } from '../../lib/endpoints/problems.js'
import { RequestError } from '../../lib/models/inference/request-error.js'
import { UpstreamError } from '../../lib/rates/upstream-error.js'

const answered = (error: unknown) => {
  const mapped = toHttpError(error)
  if (!(mapped instanceof HttpError)) throw new Error('expected an HttpError')
  return { mapped, reply: toProblemReply(mapped) }
}

t.test('a request error is a 400 with its code, the detail again as `error`, and the input at fault', async (t) => {
  const cause = new RequestError('INVALID_INPUT', 'input x: data[0] must be a finite number', 'x')
  const { mapped, reply } = answered(cause)
  t.equal(mapped.cause, cause, 'the domain error is the cause')
  t.equal(
    JSON.stringify(reply),
    JSON.stringify({
      kind: 'problem',
      status: 400,
      problem: {
        type: 'urn:svc:problem:invalid-input',
        title: 'Bad Request',
        status: 400,
        detail: 'input x: data[0] must be a finite number',
        error: 'input x: data[0] must be a finite number',
        input: 'x',
      },
    }),
  )
  for (const code of ['INVALID_REQUEST', 'INVALID_INPUT', 'BATCH_TOO_LARGE'] as const) {
    const { reply: each } = answered(new RequestError(code, 'why'))
    t.same([each.status, each.problem], [400, { type: each.problem.type, title: 'Bad Request', status: 400, detail: 'why', error: 'why' }], code)
    t.notOk('input' in each.problem, `${code} without an input names none`)
  }
})

t.test('an upstream error is a 502, or a 504 when every upstream timed out, with no extra member', async (t) => {
  const bad = answered(new UpstreamError('BAD_UPSTREAM', 'No upstream answered with a rate: coingecko answered HTTP 503')).reply
  t.same(bad, {
    kind: 'problem',
    status: 502,
    problem: {
      type: 'urn:svc:problem:bad-upstream',
      title: 'Bad Gateway',
      status: 502,
      detail: 'No upstream answered with a rate: coingecko answered HTTP 503',
    },
  })
  const slow = answered(new UpstreamError('UPSTREAM_TIMEOUT', 'x')).reply
  t.same([slow.status, slow.problem.type, slow.problem.title], [504, 'urn:svc:problem:upstream-timeout', 'Gateway Timeout'])
})

t.test('anything else goes through unchanged: an HttpError is an answer already, the rest answers 500', async (t) => {
  const http = new HttpError(404, 'MODEL_NOT_FOUND', 'Model x not found')
  const other = new TypeError('boom')
  t.equal(toHttpError(http), http)
  t.equal(toHttpError(other), other)
  t.equal(toHttpError(undefined), undefined)
  t.equal(toProblemReply(toHttpError(other)).status, 500)
})

t.test('rethrowAsHttp, for a rejection handler, throws what toHttpError makes of it', async (t) => {
  await t.rejects(Promise.reject(new UpstreamError('BAD_UPSTREAM', 'down')).then(undefined, rethrowAsHttp), {
    name: 'HttpError',
    status: 502,
    code: 'BAD_UPSTREAM',
  })
  const other = new Error('x')
  await t.rejects(Promise.reject(other).then(undefined, rethrowAsHttp), other)
})
