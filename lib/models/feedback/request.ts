// The body of POST /api/v1/feedback: `{"feedback": [{"token": "…", "truth": …}, …]}`, one to
// SVC_MAX_BATCH items. What the body itself gets wrong is a RequestError (a 400 problem naming the
// member); a truth of the wrong type is the item's own refusal (`invalid_truth`, score.ts), since only
// the version its token names says what a truth must be.
import { isObject } from '../../core/json.js'
import { RequestError } from '../inference/request-error.js'
import type { FeedbackItem } from './score.js'

const MEMBERS = new Set(['token', 'truth'])

const invalid = (message: string): RequestError => new RequestError('INVALID_REQUEST', message)

const readItem = (item: unknown, i: number): FeedbackItem => {
  if (!isObject(item)) throw invalid(`feedback[${i}]: expected an object { token, truth }`)
  for (const member of Object.keys(item)) if (!MEMBERS.has(member)) throw invalid(`feedback[${i}].${member}: unknown member; expected token and truth`)
  const { token, truth } = item
  if (typeof token !== 'string') throw invalid(`feedback[${i}].token: expected the string an answer carried in feedback_tokens`)
  if (!('truth' in item)) throw invalid(`feedback[${i}].truth: missing; expected the class name, or a regressor's number`)
  return { token, truth }
}

/** The items of a feedback body, or a RequestError naming what is wrong. */
export const readFeedbackRequest = (body: unknown, maxBatch: number): readonly FeedbackItem[] => {
  if (!isObject(body)) throw invalid('expected a JSON object { "feedback": [ { "token", "truth" }, … ] }')
  for (const member of Object.keys(body)) if (member !== 'feedback') throw invalid(`${member}: unknown member; expected feedback`)
  const { feedback } = body
  if (!Array.isArray(feedback) || feedback.length === 0) throw invalid('feedback: expected a non-empty array of { token, truth }')
  if (feedback.length > maxBatch) throw new RequestError('BATCH_TOO_LARGE', `feedback: ${feedback.length} items, more than SVC_MAX_BATCH (${maxBatch})`)
  return feedback.map(readItem)
}
