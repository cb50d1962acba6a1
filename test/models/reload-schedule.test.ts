// The hot-reload job in the process: cronScheduler runs the tick on node-cron (lib/cron.ts) until
// stopped. The plans it is given are tested in registry-schedule.test.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { cronScheduler, MAX_RELOAD_INTERVAL_S } from '../../lib/models/reload-schedule.js'

t.test('cronScheduler ticks on the expression until stopped', async (t) => {
  let ticks = 0
  const stop = cronScheduler('* * * * * *', () => void ticks++)
  t.teardown(stop)
  await sleep(1300)
  t.ok(ticks >= 1, `${ticks} ticks`)
  stop()
  const stopped = ticks
  await sleep(1200)
  t.equal(ticks, stopped, 'no tick after stop')
})

t.test('the longest interval is the one the configuration accepts: a day', async (t) => {
  t.equal(MAX_RELOAD_INTERVAL_S, 86_400)
})
