// The reload job's plan: the coarsest evenly repeating cron schedule whose period divides the
// interval, and the ticks of it that make a pass; checked against node-cron's own next runs.
import t from 'tap'
import { createTask, validate } from 'node-cron'
import { cronPlan, isReloadInterval, MAX_RELOAD_INTERVAL_S } from '../../../lib/models/registry/reload-schedule.js'

const CASES: ReadonlyArray<readonly [intervalS: number, expression: string, every: number]> = [
  [1, '*/1 * * * * *', 1],
  [7, '*/1 * * * * *', 7],
  [10, '*/10 * * * * *', 1],
  [30, '*/30 * * * * *', 1],
  [45, '*/15 * * * * *', 3],
  [60, '0 */1 * * * *', 1],
  [90, '*/30 * * * * *', 3],
  [120, '0 */2 * * * *', 1],
  [300, '0 */5 * * * *', 1],
  [3600, '0 0 */1 * * *', 1],
  [5400, '0 */30 * * * *', 3],
  [7200, '0 0 */2 * * *', 1],
  [43_200, '0 0 */12 * * *', 1],
  [64_800, '0 0 */6 * * *', 3],
  [86_399, '*/1 * * * * *', 86_399],
  [86_400, '0 0 0 * * *', 1],
]

t.test('cronPlan picks the coarsest even schedule dividing the interval', async (t) => {
  for (const [intervalS, expression, every] of CASES) t.same(cronPlan(intervalS), { expression, every }, `${intervalS} s`)
})

t.test('every interval from 1 s to a day gets a plan whose ticks add up to it', async (t) => {
  let checked = 0
  for (let intervalS = 1; intervalS <= MAX_RELOAD_INTERVAL_S; intervalS++) {
    const { expression, every } = cronPlan(intervalS)
    // The period each form of expression states, as the next test checks against node-cron.
    const step = /^\*\/(\d+) /.exec(expression)
    const minutes = /^0 \*\/(\d+) /.exec(expression)
    const hours = /^0 0 \*\/(\d+) /.exec(expression)
    const period = step ? Number(step[1]) : minutes ? 60 * Number(minutes[1]) : hours ? 3600 * Number(hours[1]) : 86_400
    if (period * every !== intervalS || !Number.isInteger(every)) t.fail(`${intervalS} s: ${expression} × ${every}`)
    checked++
  }
  t.equal(checked, MAX_RELOAD_INTERVAL_S)
})

t.test('node-cron accepts each expression and fires it at evenly spaced times, in UTC', async (t) => {
  const expressions = new Set<string>()
  for (let intervalS = 1; intervalS <= MAX_RELOAD_INTERVAL_S; intervalS++) expressions.add(cronPlan(intervalS).expression)
  t.equal(expressions.size, 30, 'eleven second steps, eleven minute steps, seven hour steps and daily')
  for (const expression of expressions) {
    t.ok(validate(expression), expression)
    const task = createTask(expression, () => {}, { timezone: 'UTC' })
    const runs = task.getNextRuns(30).map((date) => date.getTime())
    await task.destroy()
    const gaps = new Set(runs.slice(1).map((time, i) => time - (runs[i] as number)))
    t.equal(gaps.size, 1, `${expression} repeats evenly`)
    const [gap] = gaps
    const step = /\*\/(\d+)/.exec(expression)
    const field = expression.indexOf('*/') === 0 ? 1000 : expression.startsWith('0 */') ? 60_000 : 3_600_000
    t.equal(gap, step ? Number(step[1]) * field : 86_400_000, `${expression} period`)
  }
})

t.test('intervals outside 1 s to a day, or not whole seconds, are refused', async (t) => {
  for (const bad of [0, -1, 0.5, 1.5, 86_401, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.equal(isReloadInterval(bad), false, String(bad))
    t.throws(() => cronPlan(bad), { name: 'RangeError', message: `the reload interval must be a whole number of seconds from 1 to 86400, is ${bad}` })
  }
  t.equal(isReloadInterval(1), true)
  t.equal(isReloadInterval(86_400), true)
})
