// `npm test`: tap over the whole suite, with the arguments given (`npm test -- --reporter=tap`), then
// where the time went: the slowest test files of this run, each file's own time as tap timed it
// (the `# time=` that closes its results in .tap/test-results/). Exits as tap exits.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RESULTS = join(ROOT, '.tap', 'test-results')
const SHOWN = 15

/** Every file under dir, or none when there is no such directory. */
const filesUnder = (dir) => {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).flatMap((entry) => (entry.isFile() ? [join(entry.parentPath, entry.name)] : []))
  } catch {
    return []
  }
}

/** Test files whose results this run wrote (at or after `since`, in ms), with their times in ms. */
export const timings = (since, dir = RESULTS) =>
  filesUnder(dir).flatMap((path) => {
    if (statSync(path).mtimeMs < since) return []
    const times = [...readFileSync(path, 'utf8').matchAll(/^# time=([\d.]+)ms$/gm)]
    const last = times.at(-1)
    return last === undefined ? [] : [{ file: relative(dir, path).replace(/\.tap$/, ''), ms: Number(last[1]) }]
  })

/** The closing report: the slowest files first, and the sum over all. */
export const report = (entries, shown = SHOWN) => {
  if (entries.length === 0) return ''
  const sorted = [...entries].sort((a, b) => b.ms - a.ms)
  const total = sorted.reduce((sum, { ms }) => sum + ms, 0)
  const seconds = (ms) => (ms / 1000).toFixed(1).padStart(7)
  const lines = sorted.slice(0, shown).map(({ file, ms }) => `${seconds(ms)} s  ${((100 * ms) / total).toFixed(1).padStart(4)} %  ${file}`)
  return [
    `slowest test files (${Math.min(shown, sorted.length)} of ${sorted.length}; ${(total / 1000).toFixed(1)} s summed over all files):`,
    ...lines,
    '',
  ].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now()
  const tap = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), ...process.argv.slice(2)], { stdio: 'inherit' })
  process.stdout.write(`\n${report(timings(started))}`)
  process.exitCode = tap.status ?? 1
}
