// Feedback tokens (lib/serving/feedback/), for the benchmark: the labels its feedback variants send,
// and the in-process figures. Everything is built as the service builds it: the shipped iris loaded
// from the default store, its build published to createFeedback under the run's secret, so a token
// minted here is checked by a server started with the same SVC_FEEDBACK_SECRET.
//
// - The bodies of `POST /api/v1/feedback`: `count` bodies of 64 labels, every token distinct (one
//   batch-64 answer's tokens each, so one nonce per body), truths turning through the classes.
// - In process, CPU µs: `mintTokens` for 1 and 64 rows (what serving.ts's `members` calls per
//   answer), `readToken` per token, a whole `score` of 64 labels, all accepted and all duplicates,
//   and the reference the token's design replaced: one HMAC-SHA256 of a token's bytes per row.
import { createHmac } from 'node:crypto'
import { Registry } from 'prom-client'
import { createFeedback, type Feedback } from '../../lib/serving/feedback/feedback.js'
import { createFeedbackMetrics } from '../../lib/serving/feedback/metrics.js'
import { mintTokens, readToken } from '../../lib/serving/feedback/token.js'
import { createFeedbackVersions } from '../../lib/serving/feedback/versions.js'
import { encodeRows } from '../../lib/models/inference/features.js'
import { createModelRegistry, type ServedModel } from '../../lib/models/registry/registry.js'
import type { ClassPrediction } from '../../lib/models/runtime.js'
import { createStore } from '../../lib/models/store/open.js'
import { readConfig } from '../../lib/config/config.js'
import { createLogger } from '../../lib/telemetry/logger.js'

/** The run's fleet secret (at least 16 bytes). */
export const FEEDBACK_SECRET = 'svc-bench-feedback-secret-0123456789'
export const LABELS_PER_REQUEST = 64
const ROW = { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 }

const silent = createLogger({ name: 'bench', level: 'error', format: 'json', write: () => {} })

type Served = Readonly<{ served: ServedModel; feedback: Feedback; labels: Uint32Array; classes: readonly string[] }>

/** The shipped iris as the service serves it with feedback on; `seen` is SVC_FEEDBACK_SEEN. */
const servedIris = async (seen: number): Promise<Served> => {
  const config = readConfig({ SVC_FEEDBACK_SECRET: FEEDBACK_SECRET, SVC_FEEDBACK_SEEN: String(seen) })
  const registry = createModelRegistry({ store: createStore(config.models.store), logger: silent, metrics: new Registry(), reloadIntervalS: 0 })
  await registry.load()
  const served = registry.resolve('iris')
  if (served === undefined || served.model.task !== 'classification') throw new Error('the shipped iris did not load')
  const feedback = createFeedback({ config: config.models.feedback as NonNullable<typeof config.models.feedback>, metrics: new Registry() })
  feedback.publish([served])
  const rows = encodeRows(
    served.model.inputs,
    Array.from({ length: LABELS_PER_REQUEST }, () => ROW),
  )
  const { labels } = served.predictor.predict(rows, LABELS_PER_REQUEST) as ClassPrediction
  return { served, feedback, labels, classes: served.model.classes }
}

/** One label item per token, the truths turning through the classes (so every confusion cell moves). */
type Item = Readonly<{ token: string; truth: string }>
const itemsOf = (tokens: readonly string[], classes: readonly string[]): Item[] =>
  tokens.map((token, i) => ({ token, truth: classes[i % classes.length] as string }))

const tokensOf = ({ served, feedback, labels }: Served): string[] =>
  JSON.parse(feedback.tokens(served, { labels, probabilities: new Float64Array(0) }, LABELS_PER_REQUEST) as string) as string[]

/** `count` bodies of `POST /api/v1/feedback`, 64 labels each, every token distinct. */
export const feedbackBodies = async (count: number): Promise<string[]> => {
  const iris = await servedIris(1)
  return Array.from({ length: count }, () => JSON.stringify({ feedback: itemsOf(tokensOf(iris), iris.classes) }))
}

export const cpuUs = (): number => {
  const { user, system } = process.cpuUsage()
  return user + system
}

/** CPU µs per call of `call`: a warm-up, then calls in thousands until a quarter-second of CPU time; the median of 5 such samples. */
export const perCallUs = (call: () => void): number => {
  for (let i = 0; i < 20_000; i++) call()
  const samples: number[] = []
  for (let s = 0; s < 5; s++) {
    const start = cpuUs()
    let calls = 0
    while (cpuUs() - start < 250_000) {
      for (let i = 0; i < 1000; i++) call()
      calls += 1000
    }
    samples.push((cpuUs() - start) / calls)
  }
  return samples.sort((a, b) => a - b)[2] as number
}

export type FeedbackUs = Readonly<{
  /** `mintTokens` for one row and for 64, per call. */
  mint1: number
  mint64: number
  /** `readToken` of one token of iris 1 (its tag checked under the build's key). */
  read: number
  /** `score` of 64 labels: every one accepted (seen set of 100 000, more tokens in turn), and every one a duplicate. */
  scoreAccepted: number
  scoreDuplicate: number
  /** One HMAC-SHA256 of a token's bytes (a fresh Hmac, as a per-row HMAC would need). */
  hmac: number
}>

/** The in-process figures, CPU µs. */
export const inProcessFeedbackUs = async (): Promise<FeedbackUs> => {
  const seen = 100_000
  const iris = await servedIris(seen)
  const versions = createFeedbackVersions({ current: Buffer.from(FEEDBACK_SECRET), previous: undefined }, 2_592_000, createFeedbackMetrics(new Registry()))
  versions.publish([iris.served], 0)
  const key = versions.keyOf(iris.served)
  if (key === undefined) throw new Error('no key for the shipped iris')
  const nowS = Math.floor(Date.now() / 1000)
  let sink = 0
  const mint = (rows: number): number => perCallUs(() => (sink += mintTokens(key, iris.labels, rows, nowS).length))
  const tokens = JSON.parse(mintTokens(key, iris.labels, LABELS_PER_REQUEST, nowS)) as string[]
  let next = 0
  const read = perCallUs(() => {
    const claims = readToken(tokens[next++ & 63] as string, versions.ring)
    sink += typeof claims === 'string' ? 1 : claims.answer
  })
  // More distinct labels than the seen set holds, in turn: each is forgotten before it comes round again.
  const batches = Array.from({ length: Math.ceil((seen * 2) / LABELS_PER_REQUEST) }, () => itemsOf(tokensOf(iris), iris.classes))
  let batch = 0
  const scoreAccepted = perCallUs(() => (sink += iris.feedback.score(batches[batch++ % batches.length] as Item[]).accepted))
  const scoreDuplicate = perCallUs(() => (sink += iris.feedback.score(batches[0] as Item[]).refused.length))
  const bytes = Buffer.from(tokens[0] as string, 'base64url')
  const hmacKey = Buffer.alloc(32, 7)
  const hmac = perCallUs(() => (sink += (createHmac('sha256', hmacKey).update(bytes).digest()[0] as number) & 1))
  if (sink < 0) throw new Error('unreachable: the sink only grows')
  return { mint1: mint(1), mint64: mint(LABELS_PER_REQUEST), read, scoreAccepted, scoreDuplicate, hmac }
}
