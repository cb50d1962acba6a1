// What drift is computed from, exported as counters, so that Prometheus can compute PSI over every
// instance of a fleet (ops/prometheus/rules/drift-fleet.yml) where no one instance sees enough rows
// (lib/README.md §10). For each served version with a reference, created at 0 when the version is
// published (the registry's `onPublish`), before its first row, so every bin is in the first scrape
// and `increase()` over any range sees all of them: svc_drift_bin_total, svc_drift_prediction_bin_total,
// svc_drift_reference_share, svc_drift_prediction_reference_share and svc_drift_out_of_range_total
// (their labels and meaning: lib/telemetry/contract/metrics.ts). A missing value is counted in no
// series: a row holding one is refused before it is predicted, so no counter of them could move.
//
// `build` is the build's sha256 as `model_loaded` logs it (`buildId`). A version rebuilt with
// another reference bins by other edges: while a fleet serves both builds (an instance restarted on
// the new one, the others on the old), their rows must not be pooled, and the fleet rules keep
// `build` in every aggregation.
//
// Bins are psi.ts's (`binOf` over `compileBins`), `bin` their index from "0": a numerical feature's
// reference edges with open outer bins, a categorical one's levels and then the unseen-level bin.
// Reference shares are as the reference states them, unfloored (the unseen bin's is 0); the rules
// floor both sides at PROPORTION_FLOOR as psi.ts does. The first four are the bin series,
// `hasBinSeries: false` (SVC_DRIFT_BIN_SERIES) leaves them out; the out-of-range counters, two per
// feature, are always kept. A bin's count and its reference share have the same labels, and share
// one frozen label object and its text: a model holds each label set once. The out-of-range series
// exist for numerical features whose reference records the training range (min and max).
//
// hot path: `record` runs inside every successful prediction. Per row and feature it bins the value
// (a binary search over at most a few dozen edges) and adds 1 to a slot of a typed array, found by
// index: nothing is allocated, per row or per call. The labels of every slot, and their text, are
// made once, at publish, and read with the numbers at each scrape. For iris (four features and the
// answer) that is about 55 ns a row at batch 64, most of it binning (`npm run bench`, in process,
// Node 20).
import type { Registry } from 'prom-client'
import { buildId, type ServedModel } from '../models/registry/registry.js'
import type { FeatureReference, Reference } from '../models/runtime.js'
import { predictionInput } from '../models/profile.js'
import { createVersionFamily, type SeriesPolicy } from '../models/registry/version-series.js'
import { counterValueSeries, gaugeSeries, registerSeries, withLabel, type Labels, type SeriesValue } from '../telemetry/metrics/cells.js'
import { labelPair, labelText, labelTextWith } from '../telemetry/metrics/label-text.js'
import type { Logger } from '../telemetry/logger.js'
import { binOf, compileBins, f64At, type FeatureBins } from './psi.js'

/** The seed's advice for one metric: fewer label combinations than this. */
export const SERIES_LIMIT = 1000

export const BIN_METRICS = [
  'svc_drift_bin_total',
  'svc_drift_prediction_bin_total',
  'svc_drift_reference_share',
  'svc_drift_prediction_reference_share',
  'svc_drift_out_of_range_total',
] as const
export type BinMetric = (typeof BIN_METRICS)[number]

/** An element within an array's length (noUncheckedIndexedAccess types every read `| undefined`). */
const itemAt = <T>(items: ArrayLike<T>, i: number): T => items[i] as T

export type BinCounters = Readonly<{
  /** The builds now served (the registry's `onPublish`): makes the series of new ones, drops those of the rest. */
  track(served: readonly ServedModel[]): void
  /**
   * hot path: counts the first `rows` rows of a successful prediction's `features` (row-major, one
   * value per input) and its `answers` (a class index or a value per row, undefined when none).
   */
  record(served: ServedModel, features: Float64Array, rows: number, answers: ArrayLike<number> | undefined): void
  /** Series per metric over the builds tracked now. */
  seriesCounts(): Readonly<Record<BinMetric, number>>
}>

export type BinCountersOptions = Readonly<{
  metrics: Registry
  logger: Logger
  /** Export the four bin series; false keeps only the out-of-range counters. */
  hasBinSeries: boolean
}>

/** One slot's labels and their exposition text (label-text.ts), made with the build's counts. */
type SlotLabels = Readonly<{ labels: Labels; text: string }>

/** Numbers in a typed array, and the labels of each slot that is a series (undefined: not one). */
type Slots = Readonly<{ values: Float64Array; labels: readonly (Labels | undefined)[]; texts: readonly (string | undefined)[] }>

/** One build's counters, fixed at creation; every array of numbers is indexed as its `labels`. */
type BuildCounts = Readonly<{
  /** The bins of every input, in input order. */
  inputBins: readonly FeatureBins[]
  /** Where each input's bins start in `inputs`; empty without the bin series. */
  offsets: Int32Array
  inputs: Slots
  /** The answers' bins; undefined when the reference does not profile them, or without the bin series. */
  answerBins: FeatureBins | undefined
  answers: Slots
  /** Per input, the training range; ±Infinity (nothing out of range) when not recorded or categorical. */
  min: Float64Array
  max: Float64Array
  below: Slots
  above: Slots
  inputShares: readonly SeriesValue[]
  answerShares: readonly SeriesValue[]
}>

const slots = (labels: readonly (SlotLabels | undefined)[]): Slots => ({
  values: new Float64Array(labels.length),
  labels: labels.map((l) => l?.labels),
  texts: labels.map((l) => l?.text),
})

/** `labels` and `name`="value" after them, frozen, with their text made from `text`, the text of `labels`. */
const slotLabels = (labels: Labels, text: string, name: string, value: string): SlotLabels => ({
  labels: Object.freeze(withLabel(labels, name, value)),
  text: labelTextWith(text, labelPair(name, value)),
})

/** A feature's reference shares per bin as stated, the unseen level's 0 included. */
const statedShares = (reference: FeatureReference): readonly number[] =>
  reference.type === 'numerical' ? reference.proportions : [...reference.proportions, 0]

const binLabels = (labels: Labels, text: string, bins: FeatureBins): SlotLabels[] =>
  Array.from(bins.reference, (_, bin) => slotLabels(labels, text, 'bin', String(bin)))

/** The reference's share of each bin, under the bin counter's own labels. */
const shares = (labels: readonly SlotLabels[], reference: FeatureReference): SeriesValue[] =>
  statedShares(reference).map((value, bin) => {
    const slot = itemAt(labels, bin)
    return { labels: slot.labels, labelText: slot.text, value }
  })

const countsOf = (served: ServedModel, reference: Reference, hasBinSeries: boolean): BuildCounts => {
  const { name: model, version, model: description } = served
  const build = buildId(description)
  const inputBins = compileBins(description.inputs, reference.features)
  const inputLabels = inputBins.map(({ name: feature }): Labels => ({ model, version, build, feature }))
  // One text per input, shared by its bins' and its sides' texts.
  const inputTexts = inputLabels.map(labelText)
  const answers = reference.predictions
  const answerInput = predictionInput(description)
  const answerBins = hasBinSeries && answers !== undefined ? itemAt(compileBins([answerInput], [answers]), 0) : undefined
  const answerLabels = { model, version, build, output: answerInput.name }
  const ranges = reference.features.map((feature) =>
    feature.type === 'numerical' && feature.min !== undefined && feature.max !== undefined ? ([feature.min, feature.max] as const) : undefined,
  )
  const side = (which: 'below' | 'above') =>
    slots(ranges.map((range, j) => (range === undefined ? undefined : slotLabels(itemAt(inputLabels, j), itemAt(inputTexts, j), 'side', which))))
  const perInput = hasBinSeries ? inputBins.map((bins, j) => binLabels(itemAt(inputLabels, j), itemAt(inputTexts, j), bins)) : []
  const perAnswer = answerBins === undefined ? [] : binLabels(answerLabels, labelText(answerLabels), answerBins)
  const offsets = new Int32Array(perInput.length)
  let offset = 0
  perInput.forEach((labels, j) => {
    offsets[j] = offset
    offset += labels.length
  })
  return {
    inputBins,
    offsets,
    inputs: slots(perInput.flat()),
    answerBins,
    answers: slots(perAnswer),
    min: Float64Array.from(ranges, (range) => range?.[0] ?? Number.NEGATIVE_INFINITY),
    max: Float64Array.from(ranges, (range) => range?.[1] ?? Number.POSITIVE_INFINITY),
    below: side('below'),
    above: side('above'),
    inputShares: hasBinSeries ? reference.features.flatMap((feature, j) => shares(itemAt(perInput, j), feature)) : [],
    answerShares: answerBins === undefined || answers === undefined ? [] : shares(perAnswer, answers),
  }
}

/**
 * Every slot of `pick` over `builds` that is a series, as a scrape reports it: one version's slots
 * (all its features' bins, or its answers') at a time, read in one step (a row between two turns of
 * the render shows in all of a version's bins or none), never one array of every model's bins,
 * which lived through the young collections of a render under load and was promoted at every scrape.
 */
function* read(builds: readonly BuildCounts[], pick: (build: BuildCounts) => readonly Slots[]): Generator<SeriesValue> {
  for (const build of builds) {
    for (const { values: numbers, labels, texts } of pick(build)) {
      const values: SeriesValue[] = []
      numbers.forEach((value, i) => {
        const l = labels[i]
        if (l !== undefined) values.push({ labels: l, labelText: texts[i], value })
      })
      yield* values
    }
  }
}

/** Registers the series over the builds `tracked` returns at each scrape; the four bin series only when `hasBinSeries`. */
const registerBinSeries = (metrics: Registry, hasBinSeries: boolean, tracked: () => readonly BuildCounts[]): void => {
  const counter = (name: string, help: string, pick: (build: BuildCounts) => readonly Slots[]) =>
    counterValueSeries(
      name,
      help,
      () => read(tracked(), pick),
      () => {
        for (const build of tracked()) for (const { values } of pick(build)) values.fill(0)
      },
    )
  const bins = hasBinSeries
    ? [
        counter('svc_drift_bin_total', "Rows whose value of a feature fell in a bin of the feature's drift reference.", (b) => [b.inputs]),
        counter('svc_drift_prediction_bin_total', "Answers that fell in a bin of the drift reference's predictions.", (b) => [b.answers]),
        gaugeSeries('svc_drift_reference_share', "The drift reference's share of rows in a bin of a feature (unfloored).", function* () {
          for (const b of tracked()) yield* b.inputShares
        }),
        gaugeSeries('svc_drift_prediction_reference_share', "The drift reference's share of answers in a bin (unfloored).", function* () {
          for (const b of tracked()) yield* b.answerShares
        }),
      ]
    : []
  registerSeries(metrics, [
    ...bins,
    counter('svc_drift_out_of_range_total', 'Values of a numerical feature outside its training range: below the minimum or above the maximum.', (b) => [
      b.below,
      b.above,
    ]),
  ])
}

/** Series per metric over `tracked`. */
const countSeries = (tracked: readonly BuildCounts[]): Record<BinMetric, number> => {
  // In BIN_METRICS' order, which the cardinality warning keeps.
  const total: Record<BinMetric, number> = {
    svc_drift_bin_total: 0,
    svc_drift_prediction_bin_total: 0,
    svc_drift_reference_share: 0,
    svc_drift_prediction_reference_share: 0,
    svc_drift_out_of_range_total: 0,
  }
  const defined = (s: Slots): number => s.labels.filter((l) => l !== undefined).length
  for (const build of tracked) {
    total.svc_drift_bin_total += build.inputs.labels.length
    total.svc_drift_reference_share += build.inputShares.length
    total.svc_drift_prediction_bin_total += build.answers.labels.length
    total.svc_drift_prediction_reference_share += build.answerShares.length
    total.svc_drift_out_of_range_total += defined(build.below) + defined(build.above)
  }
  return total
}

/** Warns of every metric over the advised series count, unless the last warning named the same totals; returns what it warned of. */
const warnCardinality = (logger: Logger, counts: Readonly<Record<BinMetric, number>>, warned: string): string => {
  const over = Object.entries(counts).filter(([, series]) => series > SERIES_LIMIT)
  const key = JSON.stringify(over)
  if (key === warned) return warned
  for (const [metric, series] of over) {
    logger.warning('drift_series_high', {
      metric,
      series,
      limit: SERIES_LIMIT,
      advice: 'fewer bins or versions, or SVC_DRIFT_BIN_SERIES=false for the bin series',
    })
  }
  return key
}

/** Made at 0 by the publish that serves a build with a reference, out of what a scrape reads from the one that no longer does (version-series.ts). */
const BIN_SERIES: SeriesPolicy = Object.freeze({ keptS: 0 })

/** A build whose version has a drift reference: only those are counted. */
type Referenced = ServedModel & Readonly<{ model: Readonly<{ reference: Reference }> }>
const hasReference = (build: ServedModel): build is Referenced => build.model.reference !== undefined

export const createBinCounters = ({ metrics, logger, hasBinSeries }: BinCountersOptions): BinCounters => {
  // Every build ever tracked keeps its counts (a request may still hold a build a reload replaced);
  // only those in `tracked` are exported.
  const counts = new WeakMap<ServedModel, BuildCounts>()
  const family = createVersionFamily({
    policy: BIN_SERIES,
    keyOf: (build: Referenced) => build,
    make: (build: Referenced) => {
      let built = counts.get(build)
      if (built === undefined) counts.set(build, (built = countsOf(build, build.model.reference, hasBinSeries)))
      return built
    },
    drop: () => {},
  })
  let tracked: readonly BuildCounts[] = []
  let warned = ''
  registerBinSeries(metrics, hasBinSeries, () => tracked)

  return {
    track: (served) => {
      family.publish(served.filter(hasReference), 0)
      tracked = [...family.series().values()]
      warned = warnCardinality(logger, countSeries(tracked), warned)
    },
    // hot path: change with care.
    record: (served, features, rows, answers) => {
      const build = counts.get(served)
      if (build === undefined) return
      const { inputBins, offsets, min, max, answerBins } = build
      const binned = build.inputs.values
      const below = build.below.values
      const above = build.above.values
      const width = inputBins.length
      const isBinned = offsets.length > 0
      for (let r = 0; r < rows; r++) {
        const row = r * width
        for (let j = 0; j < width; j++) {
          const value = f64At(features, row + j)
          // Refused before a prediction, a missing value cannot arrive here; were one to, it is in no bin.
          if (Number.isNaN(value)) continue
          if (isBinned) {
            const slot = itemAt(offsets, j) + binOf(itemAt(inputBins, j), value)
            binned[slot] = f64At(binned, slot) + 1
          }
          if (value < f64At(min, j)) below[j] = f64At(below, j) + 1
          else if (value > f64At(max, j)) above[j] = f64At(above, j) + 1
        }
      }
      if (answerBins === undefined || answers === undefined) return
      const answered = build.answers.values
      for (let r = 0; r < rows; r++) {
        const answer = itemAt(answers, r)
        if (!Number.isNaN(answer)) {
          const slot = binOf(answerBins, answer)
          answered[slot] = f64At(answered, slot) + 1
        }
      }
    },
    seriesCounts: () => countSeries(tracked),
  }
}
