// Durations as Prometheus writes them: read to milliseconds, written back in the shortest form.
import t from 'tap'
import { formatDuration, parseDuration } from '../../../lib/tools/rollout/duration.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

t.test('every unit from years to milliseconds reads, alone and together, largest first', async (t) => {
  const cases: ReadonlyArray<readonly [string, number]> = [
    ['30s', 30 * SECOND],
    ['5m', 5 * MINUTE],
    ['2h', 2 * HOUR],
    ['1h30m', 90 * MINUTE],
    ['1ms', 1],
    ['5ms', 5],
    ['1m5ms', MINUTE + 5],
    ['1d', DAY],
    ['1w', 7 * DAY],
    ['1y', 365 * DAY],
    ['1y2w3d4h5m6s7ms', 365 * DAY + 14 * DAY + 3 * DAY + 4 * HOUR + 5 * MINUTE + 6 * SECOND + 7],
    ['0s', 0],
    ['90m', 90 * MINUTE],
    ['007s', 7 * SECOND],
  ]
  for (const [text, ms] of cases) t.equal(parseDuration(text), ms, text)
})

t.test('anything else reads as undefined, for the caller to name the field', async (t) => {
  for (const text of ['', '5', '0', '5 m', ' 5m', '5m ', '1.5h', '30m1h', '1h1h', '5M', '-5m', '5min', 'm', 'ms', '1s1m', `${2 ** 53}ms`, '300000000y']) {
    t.equal(parseDuration(text), undefined, JSON.stringify(text))
  }
  t.equal(parseDuration(`${2 ** 53 - 1}ms`), 2 ** 53 - 1, 'up to 2^53 − 1 ms')
})

t.test('a duration is written as Prometheus prints it, the largest units first', async (t) => {
  const cases: ReadonlyArray<readonly [number, string]> = [
    [0, '0s'],
    [1, '1ms'],
    [1500, '1s500ms'],
    [5 * MINUTE, '5m'],
    [90 * MINUTE, '1h30m'],
    [2 * HOUR, '2h'],
    [8 * DAY, '1w1d'],
    [366 * DAY + 1, '1y1d1ms'],
  ]
  for (const [ms, text] of cases) t.equal(formatDuration(ms), text, String(ms))
})

t.test('what is written reads back as the same milliseconds', async (t) => {
  const values = [0, 1, 999, 1000, 59_999, 60_000, 3_599_999, 86_400_000, 31_536_000_000 + 1, 2 ** 53 - 1]
  for (let i = 0; i < 200; i++) values.push(Math.floor(Math.random() * 2 ** 40))
  for (const ms of values) t.equal(parseDuration(formatDuration(ms)), ms, String(ms))
})
