// The body of POST /api/v1/feedback: `{"feedback": [{"token": "…", "truth": …}, …]}`, one to
// SVC_MAX_BATCH items. What the body itself gets wrong is a RequestError (a 400 problem naming the
// member; for the items, every bad one, and nothing of the batch is scored); a truth of the wrong
// type is the item's own refusal (`invalid_truth`, score.ts), since only the version its token
// names says what a truth must be.
import { isObject } from '../../core/json.js'
import { RequestError } from '../../models/inference/request-error.js'
import type { FeedbackItem } from './score.js'

const MEMBERS = new Set(['token', 'truth'])

const invalid = (message: string): RequestError => new RequestError('INVALID_REQUEST', message)

/** What is wrong with an item: the member (`.token`; empty for the item itself) and why. A mutable tuple, so Array.isArray tells it from a label. */
type Fault = [member: string, reason: string]

/** The label an item holds, or its fault. */
const readItem = (item: unknown): FeedbackItem | Fault => {
  if (!isObject(item)) return ['', 'expected an object { token, truth }']
  for (const member of Object.keys(item)) if (!MEMBERS.has(member)) return [`.${member}`, 'unknown member; expected token and truth']
  const token = item['token']
  if (typeof token !== 'string') return ['.token', 'expected the string an answer carried in feedback_tokens']
  if (!('truth' in item)) return ['.truth', "missing; expected the class name, or a regressor's number"]
  return { token, truth: item['truth'] }
}

/**
 * Every bad item of a batch in one message, those with the same fault together (`feedback[1].truth,
 * feedback[4].truth: missing; …`), so a client fixes them all at once; nothing of the batch is scored.
 */
const faultMessage = (faults: ReadonlyMap<string, readonly string[]>): string => {
  const parts: string[] = []
  for (const [reason, items] of faults) parts.push(`${items.join(', ')}: ${reason}`)
  return parts.join('; ')
}

/** The items of a feedback body, or a RequestError naming what is wrong: every bad item, when items are. */
export const readFeedbackRequest = (body: unknown, maxBatch: number): readonly FeedbackItem[] => {
  if (!isObject(body)) throw invalid('expected a JSON object { "feedback": [ { "token", "truth" }, … ] }')
  for (const member of Object.keys(body)) if (member !== 'feedback') throw invalid(`${member}: unknown member; expected feedback`)
  const { feedback } = body
  if (!Array.isArray(feedback) || feedback.length === 0) throw invalid('feedback: expected a non-empty array of { token, truth }')
  if (feedback.length > maxBatch) throw new RequestError('BATCH_TOO_LARGE', `feedback: ${feedback.length} items, more than SVC_MAX_BATCH (${maxBatch})`)
  const faults = new Map<string, string[]>()
  const items: FeedbackItem[] = []
  feedback.forEach((item: unknown, i) => {
    const read = readItem(item)
    if (!Array.isArray(read)) {
      items.push(read)
      return
    }
    const [member, reason] = read
    const named = faults.get(reason)
    if (named === undefined) faults.set(reason, [`feedback[${i}]${member}`])
    else named.push(`feedback[${i}]${member}`)
  })
  if (faults.size > 0) throw invalid(faultMessage(faults))
  return items
}
