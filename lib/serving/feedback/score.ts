// Scoring labels (POST /api/v1/feedback, lib/README.md §10): each item's token is checked, its truth
// compared with the answer the token carries, and the result counted in the version's series. An
// item refused is counted in svc_feedback_refused_total{reason} and nowhere else, and never
// remembered as seen, so a corrected resend is scored.
//
// Two passes: every item is checked first, changing nothing (a label sent twice in one batch is the
// second's `duplicate`); then the accepted ones are counted, and each remembered once counted. A
// check that throws leaves the batch unscored and nothing remembered, so a resend is scored.
//
// An accepted label is handed to `onLabel` (the payload log's `svc.label` event) when it is set.
//
// Order of the checks: the token (format and tag: `invalid_token`), its age (`expired`), the build
// it names (`unknown_version`), the truth (`invalid_truth`), then whether it was scored already here
// (`duplicate`).
import { observe } from '../../telemetry/metrics/cells.js'
import type { FeedbackRefusal } from './metrics.js'
import type { SeenSet } from './seen.js'
import { readToken, type TokenClaims } from './token.js'
import type { FeedbackVersions, KnownBuild } from './versions.js'

/** One label as the body carries it: the truth is checked here, its type included. */
export type FeedbackItem = Readonly<{ token: string; truth: unknown }>
/**
 * An item refused, by its index in the batch. `invalid_truth` says what a truth of the version its
 * token names must be: one of `expected`'s class names, or `"number"` (a regressor's finite number).
 */
export type Refused = Readonly<{ index: number; reason: FeedbackRefusal; expected?: readonly string[] | 'number' }>
export type FeedbackResult = Readonly<{ accepted: number; refused: readonly Refused[] }>

/** An accepted label, as the payload log writes it (its `svc.label` event): the token joins it to the answer that carried it. */
export type AcceptedLabel = Readonly<{
  token: string
  model: string
  version: string
  build: string
  truth: string | number
  /** The answer the token carries: a class name, or a regressor's value. */
  predicted: string | number
  delayS: number
}>

export type FeedbackScorer = Readonly<{
  /** Scores a batch of labels at `nowS` (whole seconds since the epoch). */
  score(items: readonly FeedbackItem[], nowS: number): FeedbackResult
}>

export type ScorerOptions = Readonly<{
  versions: FeedbackVersions
  seen: SeenSet
  /** SVC_FEEDBACK_MAX_AGE_S: a token older than this is `expired`. */
  maxAgeS: number
  refused: Readonly<Record<FeedbackRefusal, { value: number }>>
  /** Each accepted label; undefined when nothing takes them (no payload log). */
  onLabel?: ((label: AcceptedLabel) => void) | undefined
}>

/** The truth as the class index or value the answer is compared with, or undefined when the version cannot take it. */
const truthOf = (build: KnownBuild, truth: unknown): number | undefined => {
  if (build.classes === undefined) return typeof truth === 'number' && Number.isFinite(truth) ? truth : undefined
  if (typeof truth !== 'string') return undefined
  const index = build.classes.indexOf(truth)
  return index === -1 ? undefined : index
}

/** Counts one accepted label against its version. */
const count = (build: KnownBuild, claims: TokenClaims, truth: number): void => {
  const { feedback } = build
  feedback.rows.value++
  if (feedback.confusion !== undefined) {
    feedback.confusion(truth, claims.answer).value++
    return
  }
  const { absolute, squared, overestimate } = feedback.errors as NonNullable<KnownBuild['feedback']['errors']>
  const error = claims.answer - truth
  absolute.sum += Math.abs(error)
  absolute.count++
  squared.sum += error * error
  squared.count++
  overestimate.sum += Math.max(error, 0)
  overestimate.count++
}

/** An item that passed every check: the build and claims it is counted with, and its truth as a class index or value. */
type Checked = Readonly<{ item: FeedbackItem; build: KnownBuild; claims: TokenClaims; truth: number }>
/** An item whose token checks, with a truth its build cannot take. */
type BadTruth = Readonly<{ build: KnownBuild; truth: undefined }>

export const createFeedbackScorer = ({ versions, seen, maxAgeS, refused: refusedCells, onLabel }: ScorerOptions): FeedbackScorer => {
  /** The reason an item is refused, or the build and truth it is scored with; `batch` holds the ids accepted before it in its batch. */
  const check = (item: FeedbackItem, nowS: number, batch: ReadonlySet<number>): FeedbackRefusal | BadTruth | Checked => {
    const claims = readToken(item.token, versions.ring)
    if (claims === 'invalid_token') return claims
    if (nowS - claims.issuedS > maxAgeS) return 'expired'
    const build = versions.known(claims.model, claims.version, claims.build)
    // A token of a class index the version does not have can only come from another build with the same sha256 prefix.
    if (build === undefined || (build.classes !== undefined && claims.answer >= build.classes.length)) return 'unknown_version'
    const truth = truthOf(build, item.truth)
    if (truth === undefined) return { build, truth }
    if (seen.has(claims.id) || batch.has(claims.id)) return 'duplicate'
    return { item, build, claims, truth }
  }

  /** Counts an accepted item, then remembers it and hands it on. */
  const accept = ({ item, build, claims, truth }: Checked, nowS: number): void => {
    count(build, claims, truth)
    const delayS = Math.max(0, nowS - claims.issuedS)
    observe(build.delay, delayS, undefined)
    seen.add(claims.id)
    if (onLabel === undefined) return
    const { model, version, build: id, answer } = claims
    const predicted = build.classes === undefined ? answer : (build.classes[answer] as string)
    // The token as minted, which the prediction's event holds: base64url leaves the last character's low bits
    // unused, and a client's copy may have set them (a variant whose tag still checks).
    const token = Buffer.from(item.token, 'base64url').toString('base64url')
    onLabel({ token, model, version, build: id, truth: item.truth as string | number, predicted, delayS })
  }

  return {
    score: (items, nowS) => {
      const batch = new Set<number>()
      const checked = items.map((item) => {
        const verdict = check(item, nowS, batch)
        if (typeof verdict !== 'string' && verdict.truth !== undefined) batch.add(verdict.claims.id)
        return verdict
      })
      let accepted = 0
      const refused: Refused[] = []
      checked.forEach((verdict, index) => {
        if (typeof verdict === 'string') {
          refusedCells[verdict].value++
          refused.push({ index, reason: verdict })
          return
        }
        if (verdict.truth === undefined) {
          refusedCells.invalid_truth.value++
          refused.push({ index, reason: 'invalid_truth', expected: verdict.build.classes ?? 'number' })
          return
        }
        accept(verdict, nowS)
        accepted++
      })
      return { accepted, refused }
    },
  }
}
