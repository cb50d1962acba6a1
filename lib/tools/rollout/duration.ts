// Durations as Prometheus writes them (`30s`, `5m`, `1h30m`, `1ms`), the form a rollout plan's
// intervals take so they read like the rules' own ranges: units from years to milliseconds, each at
// most once, largest first, with Prometheus's lengths (a year is 365 days, a week 7). Times are
// milliseconds in memory; only the plan file holds the text. A leaf: imports nothing.

const UNITS = [
  ['y', 365 * 24 * 3_600_000],
  ['w', 7 * 24 * 3_600_000],
  ['d', 24 * 3_600_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
] as const

// Prometheus's own pattern (common/model's ParseDuration): every unit optional, in this order. `5m`
// and `5ms` are told apart by backtracking: `m` alone cannot be followed by `s` without digits.
const DURATION = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/

/** How a plan's message describes what it accepts. */
export const DURATION_FORM = 'a duration as Prometheus writes it (30s, 5m, 2h, 1h30m)'

/**
 * Milliseconds from a duration as Prometheus writes it; undefined for any other text (an empty one,
 * a space, a decimal, units out of order, `0` without a unit, a total past 2^53 ms), so the caller
 * names the field.
 */
export const parseDuration = (text: string): number | undefined => {
  const match = text === '' ? null : DURATION.exec(text)
  if (match === null) return undefined
  let ms = 0
  UNITS.forEach(([, length], i) => {
    const digits = match[i + 1]
    if (digits !== undefined) ms += Number(digits) * length
  })
  return Number.isSafeInteger(ms) ? ms : undefined
}

/** The shortest text `parseDuration` reads back as `ms` (a non-negative integer): `5m`, `1h30m`, `0s`, as Prometheus prints. */
export const formatDuration = (ms: number): string => {
  let rest = ms
  let text = ''
  for (const [unit, length] of UNITS) {
    const count = Math.floor(rest / length)
    if (count > 0) text += `${count}${unit}`
    rest -= count * length
  }
  return text === '' ? '0s' : text
}
