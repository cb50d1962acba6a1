// `svc profile`'s warning for bins too many for the rows: drift monitoring would then take sampling
// noise for drift (lib/drift/false-alarm.ts). A profile does not know the settings it will be scored
// with, so the chance is taken at the service's defaults: a check of SVC_DRIFT_MIN_SAMPLES live rows,
// the fewest one scores and so the noisiest, against SVC_DRIFT_MODERATE.
import { VARIABLES } from '../../config/variables.js'
import { falseAlarmChance, fewestRowsBelow, mostBinsBelow } from '../../drift/false-alarm.js'
import type { FeatureReference, Reference } from '../../models/runtime.js'

/** A column's chance of a false alarm above which the profile is warned about. */
export const FALSE_ALARM_LIMIT = 0.01
const LIVE_ROWS = Number(VARIABLES.SVC_DRIFT_MIN_SAMPLES.default)
const THRESHOLD = Number(VARIABLES.SVC_DRIFT_MODERATE.default)

/** Most bins a column gets without --bins: deciles, when the rows afford them. */
export const MOST_DEFAULT_BINS = 10

/**
 * The bins a numerical column gets without --bins: the most, up to MOST_DEFAULT_BINS, whose chance
 * of a false alarm stays under FALSE_ALARM_LIMIT for `rows` reference rows, so the default never
 * warns where fewer bins would do (10 on iris's 150 rows: 24.1 % per column; 4: 0.3 %). Under 77
 * rows not even 2 bins do: 2, and the warning says how many rows would.
 */
export const defaultBins = (rows: number): number =>
  mostBinsBelow({ referenceRows: rows, liveRows: LIVE_ROWS, threshold: THRESHOLD }, FALSE_ALARM_LIMIT, MOST_DEFAULT_BINS) ?? 2

const percent = (chance: number): string => `${(100 * chance).toPrecision(3)} %`

/**
 * The warning, in lines for stderr, when a numerical column of `reference` (or a regressor's
 * answers) has a false-alarm chance above 1 %, with the most bins up to `maxBins` that stay below
 * it; '' when no column does.
 */
export const binsWarning = (reference: Reference, maxBins: number): string => {
  const inputs = { referenceRows: reference.rows, liveRows: LIVE_ROWS, threshold: THRESHOLD }
  const columns: FeatureReference[] = [...reference.features]
  if (reference.predictions !== undefined) columns.push({ ...reference.predictions, name: `${reference.predictions.name} (the answers)` })
  const namesByBins = new Map<number, string[]>()
  for (const column of columns) {
    const bins = column.proportions.length
    // A constant column has one bin: its PSI is always 0.
    if (column.type !== 'numerical' || bins < 2 || falseAlarmChance(inputs, bins) <= FALSE_ALARM_LIMIT) continue
    namesByBins.set(bins, [...(namesByBins.get(bins) ?? []), column.name])
  }
  if (namesByBins.size === 0) return ''
  const lines = [...namesByBins]
    .sort(([a], [b]) => b - a)
    .map(([bins, names]) => `  ${percent(falseAlarmChance(inputs, bins))} for ${names.join(', ')} (${bins} bins)\n`)
  const most = mostBinsBelow(inputs, FALSE_ALARM_LIMIT, maxBins)
  // At 500 live rows, 2 bins fall below 1 % from 77 reference rows: fewestRowsBelow finds a number.
  const advice =
    most === undefined
      ? `even --bins 2 leaves ${percent(falseAlarmChance(inputs, 2))}: profile ${fewestRowsBelow(inputs, 2, FALSE_ALARM_LIMIT) as number} rows or more`
      : `--bins ${most} keeps that chance under 1 % per column`
  return [
    `svc profile: warning: too many bins for ${reference.rows} rows: with no drift at all, a drift check of ${LIVE_ROWS} live rows`,
    ` (SVC_DRIFT_MIN_SAMPLES's default) would score PSI ${THRESHOLD} (moderate drift) or more by chance alone, per column:\n`,
    ...lines,
    `svc profile: ${advice}.\n`,
  ].join('')
}
