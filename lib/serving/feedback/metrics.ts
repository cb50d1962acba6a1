// The feedback series (lib/README.md §10), made at 0 once a version is served with feedback on and
// kept until its tokens expire (SVC_FEEDBACK_MAX_AGE_S after it stopped being served), since labels
// for it keep arriving after it is released. The families (labels and meaning) are declared in
// lib/telemetry/contract/metrics.ts; the confusion counter covers every pair of classes.
//
// A version's series follow its builds: a hot reload can rebuild a version (another sha256, other
// classes, another reference quality) while labels for the old build's tokens still arrive. Each
// build counts into the version's one set of series by class name, the cells of a class it adds
// made at 0 at its publish; the reference quality is the build last published's.
//
// `correct` ("true" where actual = predicted) is there because PromQL cannot compare two labels:
// accuracy and per-class recall and precision select the diagonal with it. Above
// MAX_CONFUSION_CLASSES classes a version keeps 2·C series instead of C²: `predicted` is the class
// when right and OTHER_CLASS when wrong, so accuracy and recall hold and precision is not available.
//
// The signed error (bias) is not a series of its own: a signed sum falls, and Prometheus's increase()
// reads a fall as a counter reset. Bias is (2·overestimate − absolute error) / rows.
//
// The per-model delay histogram goes with the model's last version.
import type { Registry } from 'prom-client'
import {
  counterCell,
  gaugeCell,
  counterSeries,
  gaugeSeries,
  histogramCell,
  histogramSeries,
  registerSeries,
  sumCell,
  summarySeries,
  type CounterCell,
  type GaugeCell,
  type HistogramCell,
  type SumCell,
} from '../../telemetry/metrics/cells.js'

export const FEEDBACK_REFUSALS = ['invalid_token', 'expired', 'invalid_truth', 'unknown_version', 'duplicate'] as const
export type FeedbackRefusal = (typeof FEEDBACK_REFUSALS)[number]

/**
 * A second to about two months: labels come seconds (a click) to weeks (a return, a chargeback)
 * later. Below a minute too, or histogram_quantile interpolates within 0–60 s: labels 5 s late read
 * 30 s at P50 and 57 s at P95.
 */
export const DELAY_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 3600, 14_400, 43_200, 86_400, 259_200, 604_800, 1_209_600, 2_592_000, 5_184_000] as const

/** Past this many classes a version's confusion series are 2·C, not C² (1 024 series at 32). */
export const MAX_CONFUSION_CLASSES = 32
/** `predicted` of a wrong answer above MAX_CONFUSION_CLASSES: angle brackets, so no class name can be it. */
export const OTHER_CLASS = '<other>'

/** What one build's labels count into: its version's cells, found by the build's own class indices. */
export type VersionFeedback = Readonly<{
  rows: CounterCell
  /** Classifiers: the cell of (actual, predicted) by the build's class index; regressors: undefined. */
  confusion: ((actual: number, predicted: number) => CounterCell) | undefined
  errors: Readonly<{ absolute: SumCell; squared: SumCell; overestimate: SumCell }> | undefined
}>

export type FeedbackMetrics = Readonly<{
  /**
   * A build of a version as it is published: makes the version's series at 0 (once), adds the cells
   * of the build's classes the version lacks, and sets the version's reference quality to the
   * build's. Every publish calls it, so what a version exports follows the build it serves.
   */
  track(model: string, version: string, classes: readonly string[] | undefined, quality: Readonly<Record<string, number>>): VersionFeedback
  /** Removes a version's series (its tokens have expired). */
  drop(model: string, version: string): void
  /** The delay histogram of a model. */
  delay(model: string): HistogramCell
  refused: Readonly<Record<FeedbackRefusal, CounterCell>>
}>

type Families = Readonly<{
  rows: Map<string, CounterCell>
  /** A version's confusion cells by `actual\0predicted`: every class any of its builds had, in the order first published. */
  confusion: Map<string, Map<string, CounterCell>>
  absolute: Map<string, SumCell>
  squared: Map<string, SumCell>
  overestimate: Map<string, SumCell>
  quality: Map<string, GaugeCell[]>
}>

/** Every cell of `map`, one version's at a time: an array of every version's lived through a render's young collections. */
const flat = <T>(map: Map<string, { values(): Iterable<T> }>): { values(): Iterable<T> } => ({
  *values() {
    for (const cells of map.values()) yield* cells.values()
  },
})

/**
 * The cells a build's (actual, predicted) class indices count in, C² of them (2·C above
 * MAX_CONFUSION_CLASSES), taken from the version's cells by class name and made there at 0 when new:
 * a rebuild that adds or reorders classes counts each label under its names, in the same series.
 */
const confusionCells = (cells: Map<string, CounterCell>, labels: Readonly<{ model: string; version: string }>, classes: readonly string[]): CounterCell[] => {
  const built: CounterCell[] = []
  const isCollapsed = classes.length > MAX_CONFUSION_CLASSES
  for (const actual of classes) {
    const predictions = isCollapsed ? [actual, OTHER_CLASS] : classes
    for (const predicted of predictions) {
      const key = `${actual}\0${predicted}`
      let cell = cells.get(key)
      if (cell === undefined) cells.set(key, (cell = counterCell({ ...labels, actual, predicted, correct: String(actual === predicted) })))
      built.push(cell)
    }
  }
  return built
}

/** The cell at an index the caller has computed within `cells` (noUncheckedIndexedAccess types every read `| undefined`). */
const cellAt = (cells: readonly CounterCell[], i: number): CounterCell => cells[i] as CounterCell

/** The cell a (actual, predicted) pair counts in, by class index. */
const confusionOf = (cells: readonly CounterCell[], classes: number): ((actual: number, predicted: number) => CounterCell) =>
  classes > MAX_CONFUSION_CLASSES
    ? (actual, predicted) => cellAt(cells, actual * 2 + (actual === predicted ? 0 : 1))
    : (actual, predicted) => cellAt(cells, actual * classes + predicted)

/** The refusal counters at 0, one a reason. */
const refusalCells = (): Readonly<Record<FeedbackRefusal, CounterCell>> => ({
  invalid_token: counterCell({ reason: 'invalid_token' }),
  expired: counterCell({ reason: 'expired' }),
  invalid_truth: counterCell({ reason: 'invalid_truth' }),
  unknown_version: counterCell({ reason: 'unknown_version' }),
  duplicate: counterCell({ reason: 'duplicate' }),
})

/** Registers the feedback families, each render reading the cells `families` and `delays` hold then. */
const registerFamilies = (
  registry: Registry,
  families: Families,
  delays: Map<string, HistogramCell>,
  refused: Readonly<Record<FeedbackRefusal, CounterCell>>,
): void => {
  // /metrics lists the series in FEEDBACK_REFUSALS' order.
  const refusedCells = new Map<FeedbackRefusal, CounterCell>(FEEDBACK_REFUSALS.map((reason) => [reason, refused[reason]]))
  registerSeries(registry, [
    counterSeries('svc_model_feedback_rows_total', 'Labels scored against the answers of a model version.', families.rows),
    counterSeries(
      'svc_model_feedback_confusion_total',
      'Labels scored against a classifier version, by actual and predicted class; correct is "true" on the diagonal.',
      flat(families.confusion),
    ),
    summarySeries('svc_model_feedback_absolute_error', "Sum of |prediction − truth| over a regressor version's labels.", families.absolute),
    summarySeries('svc_model_feedback_squared_error', "Sum of (prediction − truth)² over a regressor version's labels.", families.squared),
    summarySeries('svc_model_feedback_overestimate', "Sum of max(prediction − truth, 0) over a regressor version's labels.", families.overestimate),
    histogramSeries('svc_model_feedback_delay_seconds', 'Time from a prediction to its label being scored, in seconds.', delays),
    counterSeries('svc_feedback_refused_total', 'Feedback items refused, by reason.', refusedCells),
    gaugeSeries('svc_model_reference_quality', 'Quality of a model version measured on labelled held-out rows, by metric.', function* () {
      for (const { labels, text, value } of flat(families.quality).values()) yield { labels, labelText: text, value }
    }),
  ])
}

export const createFeedbackMetrics = (registry: Registry): FeedbackMetrics => {
  const families: Families = {
    rows: new Map(),
    confusion: new Map(),
    absolute: new Map(),
    squared: new Map(),
    overestimate: new Map(),
    quality: new Map(),
  }
  const delays = new Map<string, HistogramCell>()
  const refused = refusalCells()
  /** Each tracked version's rows, and its error sums once a regressor build was published. */
  const tracked = new Map<string, { rows: CounterCell; errors: VersionFeedback['errors'] }>()
  registerFamilies(registry, families, delays, refused)

  /** The version's series at 0, made once. */
  const versionOf = (key: string, labels: Readonly<{ model: string; version: string }>): { rows: CounterCell; errors: VersionFeedback['errors'] } => {
    let known = tracked.get(key)
    if (known !== undefined) return known
    const rows = counterCell(labels)
    families.rows.set(key, rows)
    tracked.set(key, (known = { rows, errors: undefined }))
    return known
  }

  const track = (model: string, version: string, classes: readonly string[] | undefined, quality: Readonly<Record<string, number>>): VersionFeedback => {
    const key = `${model}/${version}`
    const labels = { model, version }
    const known = versionOf(key, labels)
    families.quality.set(
      key,
      Object.entries(quality).map(([metric, value]) => gaugeCell({ model, version, metric }, value)),
    )
    if (!delays.has(model)) delays.set(model, histogramCell({ model }, DELAY_BUCKETS))
    if (classes === undefined) {
      if (known.errors === undefined) {
        const errors = Object.freeze({ absolute: sumCell(labels), squared: sumCell(labels), overestimate: sumCell(labels) })
        families.absolute.set(key, errors.absolute)
        families.squared.set(key, errors.squared)
        families.overestimate.set(key, errors.overestimate)
        known.errors = errors
      }
      return Object.freeze({ rows: known.rows, confusion: undefined, errors: known.errors })
    }
    let cells = families.confusion.get(key)
    if (cells === undefined) families.confusion.set(key, (cells = new Map()))
    return Object.freeze({ rows: known.rows, confusion: confusionOf(confusionCells(cells, labels, classes), classes.length), errors: undefined })
  }

  const drop = (model: string, version: string): void => {
    const key = `${model}/${version}`
    if (!tracked.delete(key)) return
    for (const family of Object.values(families)) family.delete(key)
    if (![...tracked.keys()].some((other) => other.startsWith(`${model}/`))) delays.delete(model)
  }

  return {
    track,
    drop,
    delay: (model) => delays.get(model) as HistogramCell,
    refused,
  }
}
