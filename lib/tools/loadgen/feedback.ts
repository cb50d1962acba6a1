// `svc loadgen --feedback`: the labels of the rows answered, sent back to the fleet. Each answer's
// `feedback_tokens` are paired, in row order, with the truths of the rows the request carried (with
// the noise of the version that answered, its `model_version`: labels.ts), and go to the instance
// after the one that answered (instance k's to k + 1 mod n; with one instance, back to itself): a
// label scored where its prediction was not made is what fleet feedback is for. Labels wait in one
// queue per instance and are POSTed to /api/v1/feedback FEEDBACK_BATCH at a time, as a queue fills;
// what is left is sent when the run's predictions are all answered.
import { isObject } from '../../core/json.js'
import { failureStatus } from './errors.js'
import type { Truth } from './labels.js'

/** Labels per feedback request: well under SVC_MAX_BATCH's default (1000), and what `npm run bench` prices. */
export const FEEDBACK_BATCH = 64

/** What became of the labels of a run. */
export type FeedbackTally = {
  /** Labels sent, in `requests` requests. */
  labels: number
  requests: number
  accepted: number
  /** Labels refused, by the reason the service gave. */
  refused: Record<string, number>
  /** Labels whose request got no 200 answer. */
  failed: number
  /** Rows answered without a token (feedback is off on the instance that answered): no label sent. */
  untokened: number
  /** The feedback requests' answers, by status. */
  byStatus: Record<string, number>
}

export type FeedbackSender = Readonly<{
  /**
   * Instance `k` answered `rows` rows with `body` (a 200's JSON text): their labels, the truths
   * `truthsOf` gives for the version that answered, are queued for the next instance.
   */
  answered(k: number, body: string, rows: number, truthsOf: (version: string) => readonly Truth[]): void
  /** Sends every queued label and resolves once every feedback request is answered. */
  flush(): Promise<void>
  tally: Readonly<FeedbackTally>
}>

type Label = Readonly<{ token: string; truth: Truth }>

/** What a 200 from /api/v1/feedback says: how many labels it accepted, and why it refused each other one. */
type FeedbackAnswer = Readonly<{ accepted: number; refused: readonly Readonly<{ reason: string }>[] }>

const isFeedbackAnswer = (answer: unknown): answer is FeedbackAnswer =>
  isObject(answer) &&
  typeof answer['accepted'] === 'number' &&
  Array.isArray(answer['refused']) &&
  answer['refused'].every((refusal) => isObject(refusal) && typeof refusal['reason'] === 'string')

/** An element within an array's length (noUncheckedIndexedAccess types every read `| undefined`). */
const itemAt = <T>(items: readonly T[], i: number): T => items[i] as T

/** The answer's tokens, one a row, and the version that answered; undefined when it carries no tokens. */
const tokensOf = (body: string, rows: number): Readonly<{ tokens: readonly string[]; version: string }> | undefined => {
  const answer: unknown = JSON.parse(body)
  if (!isObject(answer)) return undefined
  const tokens = answer['feedback_tokens']
  const version = answer['model_version']
  return Array.isArray(tokens) && tokens.length === rows && tokens.every((token) => typeof token === 'string') && typeof version === 'string'
    ? { tokens, version }
    : undefined
}

/** One feedback request; what its answer says, counted in `tally`. */
const post = async (target: URL, labels: readonly Label[], options: SendOptions, tally: FeedbackTally): Promise<void> => {
  let status: string
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: options.headers,
      body: JSON.stringify({ feedback: labels }),
      signal: AbortSignal.timeout(options.timeoutMs),
    })
    status = String(response.status)
    if (response.ok) {
      const answer: unknown = await response.json()
      if (isFeedbackAnswer(answer)) {
        tally.accepted += answer.accepted
        for (const { reason } of answer.refused) tally.refused[reason] = (tally.refused[reason] ?? 0) + 1
      }
    } else {
      await response.arrayBuffer()
      tally.failed += labels.length
    }
  } catch (error: unknown) {
    status = failureStatus(error)
    tally.failed += labels.length
  }
  tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1
}

/** How each feedback request is sent: its headers (content-type and any --header or --token) and time limit. */
export type SendOptions = Readonly<{ headers: Readonly<Record<string, string>>; timeoutMs: number }>

/** A sender to the instances at `bases` (each ending in a slash), in --url order. */
export const createFeedbackSender = (bases: readonly URL[], options: SendOptions): FeedbackSender => {
  const targets = bases.map((base) => new URL('api/v1/feedback', base))
  const queues: Label[][] = targets.map(() => [])
  const pending = new Set<Promise<void>>()
  const tally: FeedbackTally = { labels: 0, requests: 0, accepted: 0, refused: {}, failed: 0, untokened: 0, byStatus: {} }
  const send = (k: number): void => {
    const labels = itemAt(queues, k).splice(0)
    tally.labels += labels.length
    tally.requests++
    const request = post(itemAt(targets, k), labels, options, tally).finally(() => pending.delete(request))
    pending.add(request)
  }
  return {
    answered: (k, body, rows, truthsOf) => {
      const answer = tokensOf(body, rows)
      if (answer === undefined) {
        tally.untokened += rows
        return
      }
      const { tokens, version } = answer
      const truths = truthsOf(version)
      const to = (k + 1) % queues.length
      const queue = itemAt(queues, to)
      tokens.forEach((token, i) => {
        queue.push({ token, truth: itemAt(truths, i) })
        if (queue.length === FEEDBACK_BATCH) send(to)
      })
    },
    flush: async () => {
      queues.forEach((queue, k) => {
        if (queue.length > 0) send(k)
      })
      await Promise.all(pending)
    },
    tally,
  }
}
