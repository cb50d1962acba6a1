// GET /openapi.json, in every configuration it can be built in, through the pinned Redocly CLI's
// `lint` with its recommended rules and no configuration of ours: no error and no warning. One run
// of the CLI lints them all (it takes about a second to start), on this machine only.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { packageRoot } from '../../lib/config/package-root.js'
import { CONFIGURATIONS, servedDocument } from '../fixtures/openapi.js'

const ROOT = packageRoot(new URL(import.meta.url))
/** The CLI as package.json pins it: what `npm ci` installs. */
const REDOCLY = join(ROOT, 'node_modules', '.bin', 'redocly')
const PINNED = '2.77.0'

/**
 * Redocly's own switches, read in @redocly/cli 2.77.0: REDOCLY_TELEMETRY=off (with it on, every run
 * looks up and posts to Redocly's telemetry host), REDOCLY_SUPPRESS_UPDATE_NOTICE (no version check).
 * The recommended rules are built in: nothing is fetched to lint.
 */
const OFFLINE = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' }

/** The environment without tap's: its loaders (NODE_OPTIONS) and coverage are for this test, not for the CLI. */
const ENV = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(?:NODE_OPTIONS|NODE_V8_COVERAGE)$|^_?TAP/.test(name))), ...OFFLINE }

type Problem = Readonly<{ ruleId: string; severity: string; message: string; location: ReadonlyArray<{ source: { ref: string }; pointer: string }> }>
type Report = Readonly<{ totals: { errors: number; warnings: number }; version: string; problems: Problem[] }>

type Run = Readonly<{ code: number | null; stdout: string; stderr: string }>

/** `redocly lint` over `files`, run from `cwd` so no configuration file of anyone's is found. */
const lint = (cwd: string, files: readonly string[]): Promise<Run> =>
  new Promise((resolve) =>
    execFile(
      process.execPath,
      [REDOCLY, 'lint', ...files, '--extends=recommended', '--format=json', '--max-problems=1000'],
      { cwd, env: ENV, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    ),
  )

/** With several files, the JSON format prints one report after another: `}{` between them. */
const reports = (stdout: string): Report[] => stdout.split(/(?<=^\})(?=\{)/m).map((text) => JSON.parse(text) as Report)

t.test('Redocly CLI, recommended rules: no error and no warning in any configuration of the document', async (t) => {
  const manifest = JSON.parse(await readFile(join(ROOT, 'node_modules', '@redocly', 'cli', 'package.json'), 'utf8')) as { version: string }
  t.equal(manifest.version, PINNED, 'the CLI package.json pins')
  const dir = await mkdtemp(join(tmpdir(), 'svc-redocly-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const files: string[] = []
  for (const [name, env] of CONFIGURATIONS) {
    const file = `${name}.json`
    await writeFile(join(dir, file), await servedDocument(t, env))
    files.push(file)
  }
  // A document that is wrong on purpose, in the same run: the rules run, and a problem is reported.
  const open = JSON.parse(await readFile(join(dir, 'open.json'), 'utf8')) as Record<string, unknown>
  await writeFile(join(dir, 'broken.json'), JSON.stringify({ ...open, servers: undefined }))

  const started = performance.now()
  const run = await lint(dir, [...files, 'broken.json'])
  t.comment(`redocly lint of ${files.length + 1} documents: ${Math.round(performance.now() - started)} ms`)
  const all = reports(run.stdout)
  t.equal(all.length, files.length + 1, `one report per document${run.stdout === '' ? `; stderr: ${run.stderr}` : ''}`)
  t.ok(
    all.every((report) => report.version === PINNED),
    `reports from Redocly CLI ${PINNED}`,
  )
  const problems = all.flatMap((report) => report.problems)
  const of = (file: string): string[] =>
    problems.filter((p) => p.location[0]?.source.ref.endsWith(file)).map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)
  for (const file of files) t.same(of(file), [], `${file}: no error, no warning`)
  t.same(of('broken.json'), ['error no-empty-servers #/openapi: Servers must be present.'], 'the broken one is caught')
  t.equal(run.code, 1, 'and the run fails for it')
})
