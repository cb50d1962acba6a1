// POST /api/v1/feedback on the service's server over a loopback socket, with a stand-in scorer: the
// items it is handed, its result answered as is, a malformed body or a batch too large refused as
// a 400 problem, and the route answering 404 FEEDBACK_DISABLED when feedback is off.
import t from 'tap'
import type { Feedback } from '../../lib/serving/feedback/feedback.js'
import type { FeedbackItem } from '../../lib/serving/feedback/score.js'
import { FEEDBACK_DOC, feedbackRoutes } from '../../lib/endpoints/feedback.js'
import { startServer } from '../fixtures/raw-http.js'

const scored: Array<readonly FeedbackItem[]> = []
const SCORER: Feedback = {
  publish: () => {},
  tokens: () => undefined,
  score: (items) => {
    scored.push(items)
    return { accepted: items.length - 1, refused: [{ index: 0, reason: 'expired' }] }
  },
}

const post = (base: string, body: string, type = 'application/json') =>
  fetch(`${base}/api/v1/feedback`, { method: 'POST', headers: { 'content-type': type }, body })

t.test('the items go to the scorer, and its result is the answer', async (t) => {
  const { base } = await startServer(t, { routes: feedbackRoutes(SCORER, 3) })
  scored.length = 0
  const res = await post(
    base,
    JSON.stringify({
      feedback: [
        { token: 'a', truth: 'setosa' },
        { token: 'b', truth: 2.5 },
      ],
    }),
  )
  t.equal(res.status, 200)
  t.same(await res.json(), { accepted: 1, refused: [{ index: 0, reason: 'expired' }] })
  t.same(scored, [
    [
      { token: 'a', truth: 'setosa' },
      { token: 'b', truth: 2.5 },
    ],
  ])
})

t.test('a body that is not a feedback request is a 400 problem, and nothing is scored', async (t) => {
  const { base } = await startServer(t, { routes: feedbackRoutes(SCORER, 1) })
  scored.length = 0
  const wrong = await post(base, JSON.stringify({ feedback: [{ token: 1, truth: 'x' }] }))
  t.equal(wrong.status, 400)
  t.equal(wrong.headers.get('content-type'), 'application/problem+json')
  t.match(await wrong.json(), {
    type: 'urn:svc:problem:invalid-request',
    detail: 'feedback[0].token: expected the string an answer carried in feedback_tokens',
  })
  const many = await post(base, JSON.stringify({ feedback: [1, 2] }))
  t.equal(many.status, 400)
  t.match(await many.json(), { type: 'urn:svc:problem:batch-too-large' })
  const broken = await post(base, '{"feedback":')
  t.equal(broken.status, 400)
  t.same(scored, [])
})

t.test('a batch with bad items is one 400 naming each of them, and nothing of it is scored', async (t) => {
  const { base } = await startServer(t, { routes: feedbackRoutes(SCORER, 3) })
  scored.length = 0
  const res = await post(base, JSON.stringify({ feedback: [{ token: 'a', truth: 'x' }, { token: 'b' }, { truth: 1 }] }))
  t.equal(res.status, 400)
  t.match(await res.json(), {
    type: 'urn:svc:problem:invalid-request',
    detail:
      "feedback[1].truth: missing; expected the class name, or a regressor's number; feedback[2].token: expected the string an answer carried in feedback_tokens",
  })
  t.same(scored, [])
})

t.test('with feedback off, the route answers 404 FEEDBACK_DISABLED', async (t) => {
  const { base } = await startServer(t, { routes: feedbackRoutes(undefined, 3) })
  const res = await post(base, JSON.stringify({ feedback: [{ token: 'a', truth: 'x' }] }))
  t.equal(res.status, 404)
  t.match(await res.json(), { type: 'urn:svc:problem:feedback-disabled', detail: /SVC_FEEDBACK_SECRET is not set/ })
})

t.test('one POST route, whose document lists the answers it gives', async (t) => {
  t.match(feedbackRoutes(undefined, 3), [{ method: 'POST', path: '/api/v1/feedback', auth: 'api', body: 'json' }])
  t.same(Object.keys(FEEDBACK_DOC.responses), ['200', '400', '404'])
})
