import t, { type Test } from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { createDriftScheduler } from '../../lib/drift/scheduler.js'
import { createLogger } from '../../lib/telemetry/logger.js'

const EVERY_SECOND = '* * * * * *'

const logged = (_t: Test): { logger: ReturnType<typeof createLogger>; events: (event: string) => Array<Record<string, unknown>> } => {
  const raw: string[] = []
  const logger = createLogger({ name: 'svc', level: 'debug', format: 'json', write: (chunk) => void raw.push(chunk) })
  const events = (event: string): Array<Record<string, unknown>> =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['event'] === event)
  return { logger, events }
}

type Job = { name: string; expression: string; tick: () => void; isStopped: boolean }

/**
 * lib/drift/scheduler.ts with lib/core/schedule/cron.ts's jobs replaced by ones this test ticks by hand: what the
 * scheduler does on a tick is shown tick by tick, whatever the machine's load. test/core/schedule/cron.test.ts
 * shows node-cron ticking for real.
 */
const handCron = async (t: Test): Promise<{ createDriftScheduler: typeof createDriftScheduler; jobs: Job[] }> => {
  const jobs: Job[] = []
  const cron = await import('../../lib/core/schedule/cron.js')
  const mocked = await t.mockImport<typeof import('../../lib/drift/scheduler.js')>('../../lib/drift/scheduler.js', {
    '../../lib/core/schedule/cron.js': {
      ...cron,
      scheduleCron: (name: string, expression: string, tick: () => void) => {
        const job = { name, expression, tick, isStopped: false }
        jobs.push(job)
        return () => void (job.isStopped = true)
      },
    },
  })
  return { createDriftScheduler: mocked.createDriftScheduler, jobs }
}

/** A promise and the function that settles it. */
const deferred = (): { promise: Promise<void>; resolve: () => void } => {
  let resolve = (): void => {}
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

t.test('start() schedules one cron job on the expression, a second start() none; each tick runs the check; stop() ends the job', async (t) => {
  const { createDriftScheduler, jobs } = await handCron(t)
  const { logger } = logged(t)
  let runs = 0
  const scheduler = createDriftScheduler({ expression: EVERY_SECOND, run: () => void runs++, logger })
  scheduler.start()
  scheduler.start()
  t.teardown(scheduler.stop)
  t.match(jobs, [{ name: 'svc-drift-check', expression: EVERY_SECOND, isStopped: false }], 'one job, on the expression')
  const job = jobs[0] as Job
  job.tick()
  await scheduler.trigger() // the run the tick started has ended once a trigger resolves
  job.tick()
  t.equal(runs, 2, 'a run per tick')
  scheduler.stop()
  t.ok(job.isStopped, 'stop() ends the job')
  scheduler.start()
  t.equal(jobs.length, 2, 'and a start() after it schedules anew')
})

t.test('a slow run is never overlapped: ticks during it are skipped and logged', async (t) => {
  const { createDriftScheduler, jobs } = await handCron(t)
  const { logger, events } = logged(t)
  let active = 0
  let most = 0
  let runs = 0
  let slow = deferred()
  const scheduler = createDriftScheduler({
    expression: EVERY_SECOND,
    run: async () => {
      runs++
      most = Math.max(most, ++active)
      await slow.promise
      active--
    },
    logger,
  })
  scheduler.start()
  t.teardown(scheduler.stop)
  const job = jobs[0] as Job
  job.tick()
  job.tick()
  job.tick()
  t.equal(runs, 1, 'the ticks during the run started none')
  t.equal(events('drift_check_skipped').length, 2, 'each is logged')
  t.match(events('drift_check_skipped')[0], { level: 'warning', reason: 'the previous check is still running', schedule: EVERY_SECOND })
  slow.resolve()
  await scheduler.trigger() // joins the run going, and resolves once it has ended
  slow = deferred()
  job.tick()
  t.equal(runs, 2, 'the first tick after it starts the next run')
  t.equal(most, 1, 'never two runs at once')
  slow.resolve()
  await scheduler.trigger()
})

t.test('a failing run is logged and the schedule goes on', async (t) => {
  const { createDriftScheduler, jobs } = await handCron(t)
  const { logger, events } = logged(t)
  let runs = 0
  const scheduler = createDriftScheduler({
    expression: EVERY_SECOND,
    run: () => {
      runs++
      if (runs === 1) throw new Error('reference unreadable')
      return runs === 2 ? Promise.reject(new TypeError('late failure')) : undefined
    },
    logger,
  })
  scheduler.start()
  t.teardown(scheduler.stop)
  const job = jobs[0] as Job
  for (let i = 0; i < 3; i++) {
    job.tick()
    // Settles the run the tick started (a trigger joins it), so the next tick is not skipped.
    await scheduler.trigger()
  }
  t.equal(runs, 3, 'ran on every tick despite two failures')
  t.match(events('drift_check_failed'), [
    { level: 'error', type: 'Error', message: 'reference unreadable' },
    { type: 'TypeError', message: 'late failure' },
  ])
})

t.test('trigger runs a check now and shares a run already going', async (t) => {
  const { logger } = logged(t)
  let runs = 0
  const scheduler = createDriftScheduler({ expression: '0 0 1 1 *', run: () => sleep(50).then(() => void runs++), logger })
  const first = scheduler.trigger()
  t.equal(scheduler.trigger(), first, 'the same run')
  await first
  t.equal(runs, 1)
  await scheduler.trigger()
  t.equal(runs, 2)
  scheduler.stop()
})

// Which expressions are accepted is test/core/schedule/cron.test.ts's.
t.test('an expression node-cron refuses is refused at construction', async (t) => {
  const { logger } = logged(t)
  t.throws(() => createDriftScheduler({ expression: 'hourly', run: () => {}, logger }), /not a cron expression: "hourly"/)
})
