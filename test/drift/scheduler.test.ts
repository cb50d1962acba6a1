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

t.test('node-cron runs the check on its schedule until stopped', async (t) => {
  const { logger } = logged(t)
  let runs = 0
  const scheduler = createDriftScheduler({ expression: EVERY_SECOND, run: () => void runs++, logger })
  scheduler.start()
  scheduler.start()
  t.teardown(scheduler.stop)
  await sleep(2500)
  t.ok(runs >= 2 && runs <= 3, `ran ${runs} times in 2.5 s on a schedule of one a second (a second start() added no job)`)
  scheduler.stop()
  const stopped = runs
  await sleep(1200)
  t.equal(runs, stopped, 'nothing runs after stop()')
})

t.test('a slow run is never overlapped: ticks during it are skipped and logged', async (t) => {
  const { logger, events } = logged(t)
  let active = 0
  let most = 0
  let runs = 0
  const scheduler = createDriftScheduler({
    expression: EVERY_SECOND,
    run: async () => {
      runs++
      most = Math.max(most, ++active)
      await sleep(1600)
      active--
    },
    logger,
  })
  scheduler.start()
  t.teardown(scheduler.stop)
  await sleep(3500)
  scheduler.stop()
  t.equal(most, 1, 'never two runs at once')
  t.ok(runs >= 1 && runs <= 2, `${runs} runs`)
  t.ok(events('drift_check_skipped').length >= 1, 'the tick that found a run going was skipped')
  t.match(events('drift_check_skipped')[0], { level: 'warning', reason: 'the previous check is still running', schedule: EVERY_SECOND })
  await sleep(1700)
})

t.test('a failing run is logged and the schedule goes on', async (t) => {
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
  await sleep(3300)
  scheduler.stop()
  t.ok(runs >= 3, `ran ${runs} times despite two failures`)
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

// Which expressions are accepted is test/cron.test.ts's.
t.test('an expression node-cron refuses is refused at construction', async (t) => {
  const { logger } = logged(t)
  t.throws(() => createDriftScheduler({ expression: 'hourly', run: () => {}, logger }), /not a cron expression: "hourly"/)
})
