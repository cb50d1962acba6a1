// The hot-reload job in the process: cronScheduler runs the tick on node-cron (lib/core/schedule/cron.ts) until
// stopped. The plans it is given are tested in registry-schedule.test.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { readConfig } from '../../../lib/config/config.js'
import { cronPlan, cronScheduler, isReloadInterval, MAX_RELOAD_INTERVAL_S } from '../../../lib/models/registry/reload-schedule.js'

t.test('cronScheduler ticks on the expression until stopped', async (t) => {
  let ticks = 0
  const stop = cronScheduler('* * * * * *', () => void ticks++)
  t.teardown(stop)
  // Waits for a tick rather than counting them in a fixed time: a loaded machine may miss a second,
  // and node-cron does not make one up. 15 s for one tick only says the job runs at all.
  const deadline = Date.now() + 15_000
  while (ticks < 1 && Date.now() < deadline) await sleep(20)
  t.ok(ticks >= 1, `${ticks} ticks`)
  stop()
  const stopped = ticks
  // A sleep only overshoots: at least one more second boundary passes in it.
  await sleep(1200)
  t.equal(ticks, stopped, 'no tick after stop')
})

t.test('the longest interval is the one the configuration accepts: a day, run at midnight', async (t) => {
  t.equal(readConfig({ SVC_MODEL_RELOAD_INTERVAL_S: String(MAX_RELOAD_INTERVAL_S) }).models.reloadIntervalS, MAX_RELOAD_INTERVAL_S)
  t.throws(() => readConfig({ SVC_MODEL_RELOAD_INTERVAL_S: String(MAX_RELOAD_INTERVAL_S + 1) }), { name: 'ConfigError' })
  t.ok(isReloadInterval(MAX_RELOAD_INTERVAL_S))
  t.notOk(isReloadInterval(MAX_RELOAD_INTERVAL_S + 1))
  t.same(cronPlan(MAX_RELOAD_INTERVAL_S), { every: 1, expression: '0 0 0 * * *' }, 'a day of seconds: every tick of the daily job')
})
