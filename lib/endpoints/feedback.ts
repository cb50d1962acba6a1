// POST /api/v1/feedback (lib/README.md §10): labels for answered rows, each with the token its answer
// carried, scored on whichever instance receives them. 200 `{accepted, refused: [{index, reason}]}`
// whatever each item's fate (`invalid_truth` with `expected`: the classes, or "number"); a malformed body is a 400 problem. With no SVC_FEEDBACK_SECRET the
// route answers 404 FEEDBACK_DISABLED, so a client learns at once that nothing is scored.
import { Type } from 'typebox'
import type { Ctx } from '../core/http/context.js'
import { HttpError } from '../core/http/errors.js'
import type { Handler, RouteDef } from '../core/pipeline.js'
import { json, named, problem, problemExample, schemasOf, stringEnum, type BodyOf, type RouteDoc } from '../core/route-doc.js'
import type { Feedback } from '../serving/feedback/feedback.js'
import { FEEDBACK_REFUSALS } from '../serving/feedback/metrics.js'
import { readFeedbackRequest } from '../serving/feedback/request.js'
import { toHttpError } from './problems.js'
import { readJsonNow } from './serving.js'

const PATH = '/api/v1/feedback'

const DISABLED = new HttpError(404, 'FEEDBACK_DISABLED', 'Feedback is off: SVC_FEEDBACK_SECRET is not set, so answers carry no tokens to label')

const FEEDBACK_REQUEST = named(
  'FeedbackRequest',
  Type.Object(
    {
      feedback: Type.Array(
        Type.Object(
          {
            token: Type.String({ description: 'A token from an answer: `feedback_tokens[i]` on /api/v1, `parameters.feedback_tokens[i]` on /v2' }),
            truth: Type.Union([Type.String(), Type.Number()], { description: "What was true for that row: a class name, or a regressor's finite number" }),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, description: 'One to SVC_MAX_BATCH labels' },
      ),
    },
    { additionalProperties: false },
  ),
)

const FEEDBACK_RESULT = named(
  'FeedbackResult',
  Type.Object({
    accepted: Type.Integer({ minimum: 0, description: 'Labels scored' }),
    refused: Type.Array(
      Type.Object({
        index: Type.Integer({ minimum: 0, description: 'The item, counting from 0' }),
        reason: stringEnum(FEEDBACK_REFUSALS, {
          description:
            'invalid_token: not a token of this fleet (format, signature, another secret); expired: older than SVC_FEEDBACK_MAX_AGE_S; ' +
            "invalid_truth: not one of the version's classes, or not a finite number for a regressor; unknown_version: a build this " +
            'instance has not served since it started; duplicate: scored on this instance already',
        }),
        expected: Type.Optional(
          Type.Union([Type.Array(Type.String()), Type.Literal('number')], {
            description: 'invalid_truth only: what a truth of the token\'s version must be, one of its class names, or "number" for a regressor',
          }),
        ),
      }),
    ),
  }),
)
type FeedbackResultBody = BodyOf<typeof FEEDBACK_RESULT.schema>

const NOT_A_TOKEN = 'feedback[0].token: expected the string an answer carried in feedback_tokens'
const TOKEN_EXAMPLE = 'AWsJceHlOIDouxeQMQAAAARpcmlzATHbVmUejBEAAPuMgxReUZrD3DGEEA'

export const FEEDBACK_DOC: RouteDoc = {
  operationId: 'sendFeedback',
  summary: 'Label answered rows',
  description:
    'Each item is the token an answer carried for a row and what turned out to be true for it. Scored on any instance sharing SVC_FEEDBACK_SECRET; ' +
    'counted in the svc_model_feedback_* series. Send each label once: a resend is only recognised by the instance that scored it, until it restarts.',
  tags: ['models'],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: FEEDBACK_REQUEST.ref, example: { feedback: [{ token: TOKEN_EXAMPLE, truth: 'setosa' }] } } },
  },
  responses: {
    '200': json('What was scored, and why the rest was refused', FEEDBACK_RESULT.ref, {
      example: {
        accepted: 1,
        refused: [
          { index: 1, reason: 'expired' },
          { index: 2, reason: 'invalid_truth', expected: ['setosa', 'versicolor', 'virginica'] },
        ],
      } satisfies FeedbackResultBody,
    }),
    '400': problem('The body is not a feedback request', {
      request: problemExample('Not a feedback request', 400, 'INVALID_REQUEST', NOT_A_TOKEN, PATH, { error: NOT_A_TOKEN }),
    }),
    '404': problem('Feedback is off', { disabled: problemExample('No SVC_FEEDBACK_SECRET', 404, DISABLED.code, DISABLED.message, PATH) }),
  },
  schemas: schemasOf([FEEDBACK_REQUEST, FEEDBACK_RESULT]),
}

const scoreBody =
  (feedback: Feedback, maxBatch: number) =>
  (body: unknown): { kind: 'json'; status: 200; body: FeedbackResultBody } => {
    let items: ReturnType<typeof readFeedbackRequest>
    try {
      items = readFeedbackRequest(body, maxBatch)
    } catch (error: unknown) {
      throw toHttpError(error)
    }
    return { kind: 'json', status: 200, body: feedback.score(items) }
  }

const sendFeedback = (feedback: Feedback | undefined, maxBatch: number): Handler => {
  if (feedback === undefined) {
    return () => {
      throw DISABLED
    }
  }
  const score = scoreBody(feedback, maxBatch)
  // The route declares body: 'json', so the body is read before the pipeline; one of another type is refused 415 unread.
  return (ctx: Ctx) => score(readJsonNow(ctx))
}

/** The feedback route, with or without feedback on (its document is the same: 404 says it is off). */
export const feedbackRoutes = (feedback: Feedback | undefined, maxBatch: number): RouteDef[] => [
  { method: 'POST', path: PATH, auth: 'api', body: 'json', handler: sendFeedback(feedback, maxBatch), doc: FEEDBACK_DOC },
]
