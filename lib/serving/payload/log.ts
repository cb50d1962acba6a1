// The payload log as the endpoints see it (lib/README.md §10), built at start-up when SVC_PAYLOAD_LOG
// is set; undefined otherwise, so a prediction without it costs what it did before it existed.
//
// Sampling. A request is logged when its point is below the model's percent: the manifest's
// `log.percent`, else SVC_PAYLOAD_LOG_PERCENT. A request with a routing key (the one the canary's
// split reads) takes the point of `log:` + key, so one key is logged on every instance or on none,
// and, hashed apart from the split's own point, the logged share is not the canary's share; one
// without draws Math.random().
//
// A logged prediction is queued by a hook the server runs once the reply is written, and only when
// the reply written is the endpoint's (a reply the server had to replace is no answer to log). The
// event is built later still, in the writer's drain turn (writer.ts).
import type { Ctx } from '../../core/http/context.js'
import { keyPoint, prefixState } from '../../models/registry/rollout.js'
import type { AcceptedLabel } from '../feedback/score.js'
import type { PayloadEvents, PredictionCapture } from './events.js'
import type { PayloadWriter } from './writer.js'

export type { PredictionCapture, Role } from './events.js'

export type PayloadLog = Readonly<{
  /** hot path: whether a request with routing key `key` is logged, to a model whose manifest sets `modelPercent` (undefined: none). */
  isSampled(modelPercent: number | undefined, key: string | undefined): boolean
  /** Queues `capture`'s event once `ctx`'s reply is written, unless the server wrote another reply. */
  prediction(ctx: Ctx, capture: PredictionCapture): void
  /** Queues an accepted label's event. */
  label(capture: AcceptedLabel): void
}>

export type PayloadLogOptions = Readonly<{
  writer: PayloadWriter
  events: PayloadEvents
  /** SVC_PAYLOAD_LOG_PERCENT: the share of requests logged, 0 to 100. */
  percent: number
  /** Milliseconds since the epoch; tests bring their own clock. */
  now?: () => number
}>

/** FNV-1a's state after `log:`: a key's point from it is that of `log:` + key, with no string built per request. */
const LOG_STATE = prefixState('log:')

/** Whether a request falls in the logged `percent`: by its key's `log:` point when it has one, else at random. */
export const isLogged = (percent: number, key: string | undefined): boolean =>
  percent >= 100 || (key === undefined ? Math.random() * 100 : keyPoint(key, LOG_STATE)) < percent

/**
 * What a queued event keeps alive besides its arrays and token text: the closure, the capture, its
 * strings (ids, names); a round figure, well above what they take.
 */
export const EVENT_OVERHEAD_BYTES = 512

/** What a queued prediction holds until its event is built: its features, its answers' arrays, its tokens' text (a byte a character, as V8 keeps ASCII). */
export const heldBytes = ({ features, prediction, tokens }: PredictionCapture): number =>
  EVENT_OVERHEAD_BYTES +
  features.byteLength +
  ('values' in prediction ? prediction.values.byteLength : prediction.labels.byteLength + prediction.probabilities.byteLength) +
  (tokens?.length ?? 0)

export const createPayloadLog = ({ writer, events, percent, now = Date.now }: PayloadLogOptions): PayloadLog => ({
  isSampled: (modelPercent, key) => isLogged(modelPercent ?? percent, key),
  prediction: (ctx, capture) =>
    ctx.whenWritten((_, error) => {
      if (error !== undefined) return
      const timeMs = now()
      writer.enqueue(() => events.prediction(capture, timeMs), heldBytes(capture))
    }),
  label: (capture) => {
    const timeMs = now()
    writer.enqueue(() => events.label(capture, timeMs), EVENT_OVERHEAD_BYTES + capture.token.length)
  },
})
