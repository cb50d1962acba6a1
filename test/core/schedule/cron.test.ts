// The one node-cron wrapper: which expressions it accepts, and a job that ticks until stopped.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { isCronExpression, scheduleCron } from '../../../lib/core/schedule/cron.js'

t.test('expressions are node-cron’s: five fields or six with seconds; anything else is refused', async (t) => {
  for (const ok of ['* * * * *', '*/5 * * * * *', '0 3 * * mon-fri', '0,30 * * * *']) t.ok(isCronExpression(ok), ok)
  for (const bad of ['', 'every minute', '61 * * * *', '* * * *', '* * * * * * *']) t.notOk(isCronExpression(bad), JSON.stringify(bad))
})

t.test('a job ticks on its schedule, never more often, until the function it returned stops it', async (t) => {
  let ticks = 0
  const started = Date.now()
  const stop = scheduleCron('svc-test', '* * * * * *', () => void ticks++)
  t.teardown(stop)
  // Waits for the ticks rather than counting them in a fixed time: a loaded machine may miss a
  // second, and node-cron does not make one up. 15 s for 3 ticks only says the job runs at all.
  const deadline = Date.now() + 15_000
  while (ticks < 3 && Date.now() < deadline) await sleep(20)
  t.ok(ticks >= 3, `${ticks} ticks`)
  // A tick per second boundary passed since the job started, however late each ran, and one more
  // for a timer that fires a moment before its boundary: a second job on the same expression, or a
  // tick run twice, would have made 4 ticks by the second boundary.
  const boundaries = Math.floor(Date.now() / 1000) - Math.floor(started / 1000)
  t.ok(ticks <= boundaries + 1, `${ticks} ticks for ${boundaries} second boundaries`)
  stop()
  const stopped = ticks
  // A sleep only overshoots: at least one more boundary passes in it.
  await sleep(1200)
  t.equal(ticks, stopped, 'no tick after stop')
})
