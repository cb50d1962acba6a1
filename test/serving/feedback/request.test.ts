// The body of POST /api/v1/feedback: its items, or a RequestError naming the member at fault.
import t from 'tap'
import { readFeedbackRequest } from '../../../lib/serving/feedback/request.js'
import { RequestError } from '../../../lib/models/inference/request-error.js'

const refusal = (body: unknown, maxBatch = 4): RequestError => {
  try {
    readFeedbackRequest(body, maxBatch)
  } catch (error: unknown) {
    if (error instanceof RequestError) return error
    throw error
  }
  throw new Error('expected a refusal')
}

t.test('the items, truths of any type kept for score.ts to judge', async (t) => {
  t.same(
    readFeedbackRequest(
      {
        feedback: [
          { token: 'a', truth: 'setosa' },
          { token: 'b', truth: 3.5 },
          { token: 'c', truth: null },
        ],
      },
      3,
    ),
    [
      { token: 'a', truth: 'setosa' },
      { token: 'b', truth: 3.5 },
      { token: 'c', truth: null },
    ],
  )
})

t.test('what the body gets wrong is INVALID_REQUEST naming the member', async (t) => {
  const cases: [unknown, string][] = [
    [[], 'expected a JSON object { "feedback": [ { "token", "truth" }, … ] }'],
    [{ feedback: [] }, 'feedback: expected a non-empty array of { token, truth }'],
    [{ extra: 1 }, 'extra: unknown member; expected feedback'],
    [{ feedback: 'x' }, 'feedback: expected a non-empty array of { token, truth }'],
    [{ feedback: [1] }, 'feedback[0]: expected an object { token, truth }'],
    [{ feedback: [{ token: 'a', truth: 1, why: 'x' }] }, 'feedback[0].why: unknown member; expected token and truth'],
    [
      {
        feedback: [
          { token: 'a', truth: 1 },
          { token: 2, truth: 1 },
        ],
      },
      'feedback[1].token: expected the string an answer carried in feedback_tokens',
    ],
    [{ feedback: [{ token: 'a' }] }, "feedback[0].truth: missing; expected the class name, or a regressor's number"],
  ]
  for (const [body, message] of cases) {
    const error = refusal(body)
    t.equal(error.code, 'INVALID_REQUEST', message)
    t.equal(error.message, message)
  }
})

t.test('more items than SVC_MAX_BATCH is BATCH_TOO_LARGE', async (t) => {
  const error = refusal({ feedback: [1, 2, 3] }, 2)
  t.equal(error.code, 'BATCH_TOO_LARGE')
  t.equal(error.message, 'feedback: 3 items, more than SVC_MAX_BATCH (2)')
})

t.test('every bad item is named in the one refusal, those with the same fault together', async (t) => {
  const error = refusal(
    {
      feedback: [{ token: 'a', truth: 'setosa' }, { token: 'b' }, { token: 7, truth: 'setosa' }, 'c', { token: 'd' }, { token: 'e', truth: 1, note: 'x' }],
    },
    6,
  )
  t.equal(error.code, 'INVALID_REQUEST')
  t.equal(
    error.message,
    "feedback[1].truth, feedback[4].truth: missing; expected the class name, or a regressor's number; " +
      'feedback[2].token: expected the string an answer carried in feedback_tokens; ' +
      'feedback[3]: expected an object { token, truth }; ' +
      'feedback[5].note: unknown member; expected token and truth',
  )
})
