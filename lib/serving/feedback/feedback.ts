// Model quality from labels (lib/README.md §10), wired once at start-up when SVC_FEEDBACK_SECRET is
// set: the builds whose labels are scored (versions.ts), the tokens answers carry (token.ts), the
// labels scored (score.ts) and their series (metrics.ts). Absent, nothing here is built and answers
// are byte-identical to those of a service without it.
import type { Registry } from 'prom-client'
import type { FeedbackConfig } from '../../config/config.js'
import type { ServedModel } from '../../models/registry/registry.js'
import type { Prediction } from '../../models/runtime.js'
import { createFeedbackMetrics } from './metrics.js'
import { createFeedbackScorer, type AcceptedLabel, type FeedbackItem, type FeedbackResult } from './score.js'
import { createSeenSet } from './seen.js'
import { mintTokens } from './token.js'
import { createFeedbackVersions } from './versions.js'

export type Feedback = Readonly<{
  /** Each publish's served builds (the registry's onPublish). */
  publish(served: readonly ServedModel[]): void
  /** hot path: the JSON array text of one token per row of `served`'s answer, or undefined for a version without a key. */
  tokens(served: ServedModel, prediction: Prediction, rows: number): string | undefined
  /** Scores a batch of labels now. */
  score(items: readonly FeedbackItem[]): FeedbackResult
}>

export type FeedbackOptions = Readonly<{
  config: FeedbackConfig
  metrics: Registry
  /** Milliseconds since the epoch; tests bring their own clock. */
  now?: () => number
  /** Each accepted label (the payload log's `svc.label` events); undefined when the log is off. */
  onLabel?: ((label: AcceptedLabel) => void) | undefined
}>

export const createFeedback = ({ config, metrics, now = Date.now, onLabel }: FeedbackOptions): Feedback => {
  const secrets = {
    current: Buffer.from(config.secret, 'utf8'),
    previous: config.previousSecret === undefined ? undefined : Buffer.from(config.previousSecret, 'utf8'),
  }
  const series = createFeedbackMetrics(metrics)
  const versions = createFeedbackVersions(secrets, config.maxAgeS, series)
  const scorer = createFeedbackScorer({ versions, seen: createSeenSet(config.seen), maxAgeS: config.maxAgeS, refused: series.refused, onLabel })
  const seconds = (): number => Math.floor(now() / 1000)
  return {
    publish: (served) => versions.publish(served, seconds()),
    tokens: (served, prediction, rows) => {
      const key = versions.keyOf(served)
      if (key === undefined) return undefined
      const answers = 'labels' in prediction ? prediction.labels : prediction.values
      return mintTokens(key, answers, rows, seconds())
    },
    score: (items) => scorer.score(items, seconds()),
  }
}
