import t from 'tap'
import { HttpError } from '../../../lib/core/http/errors.js'
import { problem, problemType } from '../../../lib/core/http/problem-body.js'
import { toProblemReply } from '../../../lib/core/http/problem.js'

t.test('a problem takes its title from the status and its type from the code', async (t) => {
  t.same(problem(404, 'MODEL_NOT_FOUND', 'Model x not found'), {
    type: 'urn:svc:problem:model-not-found',
    title: 'Not Found',
    status: 404,
    detail: 'Model x not found',
  })
  t.equal(problemType('A_B_C'), 'urn:svc:problem:a-b-c')
})

t.test('a status without a standard reason phrase gets a generic title', async (t) => {
  t.equal(problem(599, 'ODD', 'x').title, 'Error')
})

t.test('an HttpError keeps its extra members and headers; anything else is an opaque 500', async (t) => {
  const reply = toProblemReply(new HttpError(503, 'NOT_READY', 'starting', { extra: { error: 'not ready' }, headers: { 'retry-after': '1' } }))
  t.same(reply, {
    kind: 'problem',
    status: 503,
    headers: { 'retry-after': '1' },
    problem: { type: 'urn:svc:problem:not-ready', title: 'Service Unavailable', status: 503, detail: 'starting', error: 'not ready' },
  })
  const boom = new Error('internal path /srv/x')
  const internal = toProblemReply(boom)
  t.equal(internal.status, 500)
  t.equal(internal.error, boom)
  t.notMatch(JSON.stringify(internal.problem), /srv/)
})

t.test('throw undefined is still a failure the layers can count and log', async (t) => {
  const reply = toProblemReply(undefined)
  t.equal(reply.status, 500)
  t.type(reply.error, TypeError)
  t.match(reply.error, { message: 'an endpoint threw undefined' })
  t.equal(toProblemReply(null).error, null, 'any other value is kept as thrown')
})
