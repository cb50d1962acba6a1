// What drift is computed from, exported as counters, so that Prometheus can compute PSI over every
// instance of a fleet (ops/prometheus/rules/drift-fleet.yml) where no one instance sees enough rows
// (lib/README.md §10). For each served version with a reference, created at 0 when the version is
// published (the registry's `onPublish`), before its first row, so every bin is in the first scrape
// and `increase()` over any range sees all of them:
//
//   svc_drift_bin_total{model,version,feature,bin}              rows whose value fell in the bin
//   svc_drift_prediction_bin_total{model,version,output,bin}    answers that fell in the bin
//   svc_drift_reference_share{model,version,feature,bin}        the reference's share of the bin
//   svc_drift_prediction_reference_share{model,version,output,bin}
//   svc_drift_missing_total{model,version,feature}              missing values, binned nowhere
//   svc_drift_out_of_range_total{model,version,feature,side}    values below the training minimum
//                                                               or above the maximum
//
// Bins are psi.ts's (`binOf` over `compileBins`), `bin` their index from "0": a numerical feature's
// reference edges with open outer bins, a categorical one's levels and then the unseen-level bin.
// Reference shares are as the reference states them, unfloored (the unseen bin's is 0); the rules
// floor both sides at PROPORTION_FLOOR as psi.ts does. The first four are the bin series,
// `hasBinSeries: false` (SVC_DRIFT_BIN_SERIES) leaves them out; the last two are one series per
// feature (two for the range) and always kept. The out-of-range series exist for numerical features
// whose reference records the training range (min and max).
//
// hot path: `record` runs inside every successful prediction. Per row and feature it bins the value
// (a binary search over at most a few dozen edges) and adds 1 to a cell found by index: nothing is
// allocated, per row or per call.
import type { Registry } from 'prom-client'
import type { ServedModel } from '../models/registry.js'
import type { FeatureReference, Reference } from '../models/runtime.js'
import { predictionInput } from '../profile/profile.js'
import { counterCell, counterSeries, gaugeSeries, registerSeries, type CounterCell, type Labels } from '../telemetry/cells.js'
import type { Logger } from '../telemetry/logger.js'
import { binOf, compileBins, type FeatureBins } from './psi.js'

/** The seed's advice for one metric: fewer label combinations than this. */
export const SERIES_LIMIT = 1000

export const BIN_METRICS = [
  'svc_drift_bin_total',
  'svc_drift_prediction_bin_total',
  'svc_drift_reference_share',
  'svc_drift_prediction_reference_share',
  'svc_drift_missing_total',
  'svc_drift_out_of_range_total',
] as const
export type BinMetric = (typeof BIN_METRICS)[number]

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
  /** Export the four bin series; false keeps only the missing and out-of-range counters. */
  hasBinSeries: boolean
}>

type Share = Readonly<{ labels: Labels; value: number }>

/** One build's counters. Arrays indexed by input column; fixed at creation. */
type BuildCounts = Readonly<{
  /** The bins of every input, in input order. */
  inputBins: readonly FeatureBins[]
  /** Per input, a cell per bin; empty without the bin series. */
  inputCells: readonly (readonly CounterCell[])[]
  /** The answers' bins and a cell per bin; undefined when the reference does not profile them, or without the bin series. */
  answerBins: FeatureBins | undefined
  answerCells: readonly CounterCell[]
  missing: readonly CounterCell[]
  /** Per input, the training range; ±Infinity (nothing out of range) when not recorded or categorical. */
  min: Float64Array
  max: Float64Array
  below: readonly (CounterCell | undefined)[]
  above: readonly (CounterCell | undefined)[]
  inputShares: readonly Share[]
  answerShares: readonly Share[]
}>

/** A feature's reference shares per bin as stated, the unseen level's 0 included. */
const statedShares = (reference: FeatureReference): readonly number[] =>
  reference.type === 'numerical' ? reference.proportions : [...reference.proportions, 0]

const binCells = (labels: Labels, bins: FeatureBins): CounterCell[] => Array.from(bins.reference, (_, bin) => counterCell({ ...labels, bin: String(bin) }))

const shares = (labels: Labels, reference: FeatureReference): Share[] =>
  statedShares(reference).map((value, bin) => ({ labels: Object.freeze({ ...labels, bin: String(bin) }), value }))

const countsOf = (served: ServedModel, reference: Reference, hasBinSeries: boolean): BuildCounts => {
  const { name: model, version, model: description } = served
  const inputBins = compileBins(description.inputs, reference.features)
  const labelsOf = (feature: string): Labels => ({ model, version, feature })
  const answers = reference.predictions
  const answerInput = predictionInput(description)
  const answerBins = hasBinSeries && answers !== undefined ? (compileBins([answerInput], [answers])[0] as FeatureBins) : undefined
  const answerLabels = { model, version, output: answerInput.name }
  const ranges = reference.features.map((feature) =>
    feature.type === 'numerical' && feature.min !== undefined && feature.max !== undefined ? ([feature.min, feature.max] as const) : undefined,
  )
  const side = (which: 'below' | 'above') =>
    ranges.map((range, j) => (range === undefined ? undefined : counterCell({ ...labelsOf((inputBins[j] as FeatureBins).name), side: which })))
  return {
    inputBins,
    inputCells: hasBinSeries ? inputBins.map((bins) => binCells(labelsOf(bins.name), bins)) : [],
    answerBins,
    answerCells: answerBins === undefined ? [] : binCells(answerLabels, answerBins),
    missing: inputBins.map((bins) => counterCell(labelsOf(bins.name))),
    min: Float64Array.from(ranges, (range) => range?.[0] ?? Number.NEGATIVE_INFINITY),
    max: Float64Array.from(ranges, (range) => range?.[1] ?? Number.POSITIVE_INFINITY),
    below: side('below'),
    above: side('above'),
    inputShares: hasBinSeries ? reference.features.flatMap((feature, j) => shares(labelsOf((inputBins[j] as FeatureBins).name), feature)) : [],
    answerShares: answerBins === undefined || answers === undefined ? [] : shares(answerLabels, answers),
  }
}

export const createBinCounters = ({ metrics, logger, hasBinSeries }: BinCountersOptions): BinCounters => {
  // Every build ever tracked keeps its counts (a request may still hold a build a reload replaced);
  // only those in `tracked` are exported.
  const counts = new WeakMap<ServedModel, BuildCounts>()
  let tracked: readonly BuildCounts[] = []
  let warned = ''

  const cells = (pick: (build: BuildCounts) => Iterable<CounterCell | undefined>) => ({
    *values(): Iterable<CounterCell> {
      for (const build of tracked) for (const cell of pick(build)) if (cell !== undefined) yield cell
    },
  })
  const gauge = (pick: (build: BuildCounts) => readonly Share[]) => (): Share[] => tracked.flatMap(pick)
  const bins = hasBinSeries
    ? [
        counterSeries(
          'svc_drift_bin_total',
          "Rows whose value of a feature fell in a bin of the feature's drift reference.",
          cells((b) => b.inputCells.flat()),
        ),
        counterSeries(
          'svc_drift_prediction_bin_total',
          "Answers that fell in a bin of the drift reference's predictions.",
          cells((b) => b.answerCells),
        ),
        gaugeSeries(
          'svc_drift_reference_share',
          "The drift reference's share of rows in a bin of a feature (unfloored).",
          gauge((b) => b.inputShares),
        ),
        gaugeSeries(
          'svc_drift_prediction_reference_share',
          "The drift reference's share of answers in a bin (unfloored).",
          gauge((b) => b.answerShares),
        ),
      ]
    : []
  registerSeries(metrics, [
    ...bins,
    counterSeries(
      'svc_drift_missing_total',
      'Missing values of a feature in the rows predicted, counted in no bin.',
      cells((b) => b.missing),
    ),
    counterSeries(
      'svc_drift_out_of_range_total',
      'Values of a numerical feature outside its training range: below the minimum or above the maximum.',
      cells((b) => [...b.below, ...b.above]),
    ),
  ])

  const seriesCounts = (): Record<BinMetric, number> => {
    const total: Record<BinMetric, number> = Object.fromEntries(BIN_METRICS.map((metric) => [metric, 0])) as Record<BinMetric, number>
    for (const build of tracked) {
      total.svc_drift_bin_total += build.inputShares.length
      total.svc_drift_reference_share += build.inputShares.length
      total.svc_drift_prediction_bin_total += build.answerShares.length
      total.svc_drift_prediction_reference_share += build.answerShares.length
      total.svc_drift_missing_total += build.missing.length
      for (const cell of [...build.below, ...build.above]) if (cell !== undefined) total.svc_drift_out_of_range_total++
    }
    return total
  }

  /** Warns once per new total when a metric exceeds the advised series count. */
  const warnCardinality = (): void => {
    const over = Object.entries(seriesCounts()).filter(([, series]) => series > SERIES_LIMIT)
    const key = JSON.stringify(over)
    if (key === warned) return
    warned = key
    for (const [metric, series] of over) {
      logger.warning('drift_series_high', {
        metric,
        series,
        limit: SERIES_LIMIT,
        advice: 'fewer bins or versions, or SVC_DRIFT_BIN_SERIES=false for the bin series',
      })
    }
  }

  return {
    track: (served) => {
      const next: BuildCounts[] = []
      for (const build of served) {
        const { reference } = build.model
        if (reference === undefined) continue
        let built = counts.get(build)
        if (built === undefined) counts.set(build, (built = countsOf(build, reference, hasBinSeries)))
        next.push(built)
      }
      tracked = next
      warnCardinality()
    },
    record: (served, features, rows, answers) => {
      const build = counts.get(served)
      if (build === undefined) return
      const { inputBins, inputCells, missing, min, max, below, above, answerBins, answerCells } = build
      const width = inputBins.length
      const isBinned = inputCells.length > 0
      for (let r = 0; r < rows; r++) {
        const row = r * width
        for (let j = 0; j < width; j++) {
          const value = features[row + j] as number
          if (Number.isNaN(value)) {
            ;(missing[j] as CounterCell).value++
            continue
          }
          if (isBinned) ((inputCells[j] as readonly CounterCell[])[binOf(inputBins[j] as FeatureBins, value)] as CounterCell).value++
          if (value < (min[j] as number)) (below[j] as CounterCell).value++
          else if (value > (max[j] as number)) (above[j] as CounterCell).value++
        }
      }
      if (answerBins === undefined || answers === undefined) return
      for (let r = 0; r < rows; r++) {
        const answer = answers[r] as number
        if (!Number.isNaN(answer)) (answerCells[binOf(answerBins, answer)] as CounterCell).value++
      }
    },
    seriesCounts,
  }
}
