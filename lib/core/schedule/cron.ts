// node-cron, wrapped once for svc's two jobs: drift checks (SVC_DRIFT_SCHEDULE) and model hot
// reload (SVC_MODEL_RELOAD_INTERVAL_S). Imports nothing of svc, so the configuration can check an
// expression without importing the jobs.
//
// Every job runs in UTC, so a daylight-saving change never stretches or shortens a period. Its timer
// does not hold the process open (shutdown stops the job anyway), and a tick the event loop was too
// busy to run is not made up, without node-cron's missed-run warning: both callers guard their own
// overlap, so node-cron's warnings would only be noise.
import { schedule, validate } from 'node-cron'

/** node-cron's own check: 5 fields, or 6 with seconds first; ranges, lists, steps and names. */
export const isCronExpression = (expression: string): boolean => validate(expression)

/** Starts calling `tick` on the cron `expression`; returns what stops it. `name` identifies the job to node-cron. */
export const scheduleCron = (name: string, expression: string, tick: () => void): (() => void) => {
  const task = schedule(expression, tick, { name, timezone: 'UTC', unref: true, suppressMissedWarning: true })
  return () => void task.destroy()
}
