// When drift checks run: a cron job (lib/core/schedule/cron.ts) on SVC_DRIFT_SCHEDULE (five fields, or six with
// seconds first), in UTC.
//
// A run never overlaps the previous one: a tick that finds a run still going is skipped and logged,
// not queued, so a slow check cannot pile up behind itself. A run that throws or rejects is logged
// and the schedule goes on. `stop` ends the job; a run already going finishes on its own.
import { isCronExpression, scheduleCron } from '../core/schedule/cron.js'
import { errorFields, type Logger } from '../telemetry/logger.js'

export type DriftScheduler = Readonly<{
  start(): void
  stop(): void
  /** Runs a check now unless one is running; resolves when the run this call started (or found) ends. */
  trigger(): Promise<void>
}>

export type DriftSchedulerOptions = Readonly<{
  /** A cron expression `isCronExpression` (lib/core/schedule/cron.ts) accepts. */
  expression: string
  run: () => void | Promise<void>
  logger: Logger
}>

export const createDriftScheduler = ({ expression, run, logger }: DriftSchedulerOptions): DriftScheduler => {
  if (!isCronExpression(expression)) throw new RangeError(`not a cron expression: ${JSON.stringify(expression)}`)
  let running: Promise<void> | undefined
  let stopTask: (() => void) | undefined

  const once = async (): Promise<void> => {
    try {
      await run()
    } catch (error: unknown) {
      logger.error('drift_check_failed', errorFields(error))
    }
  }
  const trigger = (): Promise<void> => (running ??= once().finally(() => (running = undefined)))

  const tick = (): void => {
    if (running !== undefined) {
      logger.warning('drift_check_skipped', { reason: 'the previous check is still running', schedule: expression })
      return
    }
    void trigger()
  }

  return {
    start: () => {
      if (stopTask !== undefined) return
      stopTask = scheduleCron('svc-drift-check', expression, tick)
    },
    stop: () => {
      stopTask?.()
      stopTask = undefined
    },
    trigger,
  }
}
