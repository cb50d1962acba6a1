// The one node-cron wrapper: which expressions it accepts, and a job that ticks until stopped.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { isCronExpression, scheduleCron } from '../lib/cron.js'

t.test('expressions are node-cron’s: five fields or six with seconds; anything else is refused', async (t) => {
  for (const ok of ['* * * * *', '*/5 * * * * *', '0 3 * * mon-fri', '0,30 * * * *']) t.ok(isCronExpression(ok), ok)
  for (const bad of ['', 'every minute', '61 * * * *', '* * * *', '* * * * * * *']) t.notOk(isCronExpression(bad), JSON.stringify(bad))
})

t.test('a job ticks on its schedule until the function it returned stops it', async (t) => {
  let ticks = 0
  const stop = scheduleCron('svc-test', '* * * * * *', () => void ticks++)
  t.teardown(stop)
  await sleep(2300)
  t.ok(ticks >= 2 && ticks <= 3, `${ticks} ticks in 2.3 s of one a second`)
  stop()
  const stopped = ticks
  await sleep(1200)
  t.equal(ticks, stopped, 'no tick after stop')
})
