// When hot reload runs: every SVC_MODEL_RELOAD_INTERVAL_S seconds, on a cron job (lib/core/schedule/cron.ts).
//
// A cron field repeats evenly only with a step that divides its range: `*/7 * * * * *` fires at
// :00, :07 … :56 and then :00 again, 4 s later. So the job runs on the coarsest even schedule
// whose period divides the interval (seconds dividing 60, minutes dividing 60, hours dividing 24,
// or daily) and a pass starts on every `every`-th tick: 90 s is `*/30 * * * * *` with every = 3,
// 7 s is every second with every = 7. Intervals that are themselves such a period are one tick.
// A tick the event loop was too busy to run is not made up, so a blocked loop delays later
// passes by as much; a hot reload can afford that. The job runs in UTC, so a daylight-saving
// change never stretches or shortens an hourly period.
import { isReloadInterval, MAX_RELOAD_INTERVAL_S, RELOAD_INTERVAL_RANGE } from '../../config/reload-interval.js'
import { scheduleCron } from '../../core/schedule/cron.js'

export { isReloadInterval, MAX_RELOAD_INTERVAL_S }

export type CronPlan = Readonly<{ expression: string; every: number }>

/** Starts calling `tick` on the cron `expression`; returns what stops it. */
export type Scheduler = (expression: string, tick: () => void) => () => void

const DIVISORS_OF_60 = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30] as const
const DIVISORS_OF_24 = [1, 2, 3, 4, 6, 8, 12] as const

/** Every evenly repeating period a six-field expression can state, shortest first. */
const PERIODS: readonly CronPlan[] = [
  ...DIVISORS_OF_60.map((s) => ({ every: s, expression: `*/${s} * * * * *` })),
  ...DIVISORS_OF_60.map((m) => ({ every: 60 * m, expression: `0 */${m} * * * *` })),
  ...DIVISORS_OF_24.map((h) => ({ every: 3600 * h, expression: `0 0 */${h} * * *` })),
  { every: MAX_RELOAD_INTERVAL_S, expression: '0 0 0 * * *' },
]

/** The job for a pass every `intervalS` seconds: its expression, and how many of its ticks make a pass. */
export const cronPlan = (intervalS: number): CronPlan => {
  if (!isReloadInterval(intervalS)) throw new RangeError(`the reload interval must be ${RELOAD_INTERVAL_RANGE}, is ${intervalS}`)
  // The last period dividing the interval; 1 s divides every interval, so there is always one.
  const period = PERIODS.findLast((plan) => intervalS % plan.every === 0) as CronPlan
  return { expression: period.expression, every: intervalS / period.every }
}

/** The job in the process (lib/core/schedule/cron.ts). The tick is synchronous and cheap; reload passes guard their own overlap. */
export const cronScheduler: Scheduler = (expression, tick) => scheduleCron('svc-model-reload', expression, tick)
