// package.json and .gitignore as the tools read them: npm's install-script policy, what `npm test`
// prints (and what .ci/run parses out of it, and the slowest files), and packed tarballs kept out of git.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { shebangNodeFlags } from '../fixtures/shebang.js'
import { ROOT } from '../fixtures/spawn.js'

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts: Record<string, boolean>
  tap: Record<string, unknown>
  scripts: Record<string, string>
}
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> }

const run = (command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) =>
  new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(command, args, { ...options, timeout: 100_000 }, (error, stdout) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout }))
  })

t.test('allowScripts decides on every install script in the lockfile, and denies each: none is needed', async (t) => {
  const withScripts = Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length))
  t.ok(withScripts.length > 0, withScripts.join(', '))
  t.same(
    withScripts.filter((name) => !(name in manifest.allowScripts)),
    [],
    'npm ci warns of any left out',
  )
  // ops/README.md installs the package with --ignore-scripts, where package.json's allowScripts is not
  // read: a script allowed here would need that command changed too.
  t.same(
    Object.entries(manifest.allowScripts).filter(([, allowed]) => allowed !== false),
    [],
  )
})

t.test('npm start runs the CLI with the Node flags of its #! line, as the installed svc runs', async (t) => {
  const script = readFileSync(join(ROOT, 'bin/svc.ts'), 'utf8')
  t.equal(manifest.scripts['start'], ['node', ...shebangNodeFlags(script), 'dist/bin/svc.js'].join(' '))
  // One word after env: BusyBox's env, and coreutils' before 8.30, have no -S and take the rest of
  // the line as one program name.
  t.equal(script.split('\n', 1)[0], '#!/usr/bin/env node', 'a #! line every env takes')
})

t.test("the #! line's Node flags, read as env and the kernel read them", async (t) => {
  for (const [line, flags] of [
    ['#!/usr/bin/env node\n', []],
    ['#!/usr/bin/env node\r\n// CRLF\n', []],
    ['#!/usr/bin/env -S node --no-memory-reducer --stack-size=2000\n', ['--no-memory-reducer', '--stack-size=2000']],
    ['#! /usr/bin/env  -S  node  --a\n', ['--a']],
    ['#!/usr/local/bin/node --a\n', ['--a']],
    ['#!/bin/sh\nnode --a\n', []],
    ['// no #! line\n#!/usr/bin/env -S node --a\n', []],
    ['', []],
  ] as const) {
    t.same(shebangNodeFlags(line), flags, JSON.stringify(line))
  }
})

t.test('a packed tarball is ignored by git', async (t) => {
  t.equal((await run('git', ['check-ignore', '--quiet', 'svc-1.0.0.tgz'], { cwd: ROOT })).code, 0)
  t.equal((await run('git', ['check-ignore', '--quiet', 'lib/svc-1.0.0.tgz'], { cwd: ROOT })).code, 0, 'wherever it is')
})

t.test("npm test prints tap's summary, then the slowest files; --reporter=tap, as .ci/run asks, the closing line .ci/run reads", async (t) => {
  // npm test's script (test/run.js) in a project of its own, with this package's tap configuration
  // and its type-stripping hooks: a run inside this one must not touch this run's .tap/ directory.
  // Two projects, since the files a run lists are those whose results it wrote in its .tap/.
  const project = async (files: Readonly<Record<string, string>>): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-tap-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
    await mkdir(join(dir, 'test'))
    for (const file of ['run.js', 'strip-types.js']) await copyFile(join(ROOT, 'test', file), join(dir, 'test', file))
    const tap = { ...manifest.tap, 'allow-incomplete-coverage': true }
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'reporter-check', type: 'module', tap }))
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
    return dir
  }
  const one = "import t from 'tap'\nt.test('passes', async (t) => t.pass('yes'))\nt.test('skipped', async (t) => t.skip('not here'))\n"
  const slow = "import t from 'tap'\nawait new Promise((resolve) => setTimeout(resolve, 1500))\nt.pass('slept')\n"
  const fails = "import t from 'tap'\nt.fail('no')\n"
  // This process's TAP_* variables and NODE_OPTIONS would tie the inner tap to this run.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(_?tap|npm_|node_options$|node_v8_coverage$)/i.test(name)))
  const npmTest = async (files: Readonly<Record<string, string>>, ...args: string[]) =>
    run(process.execPath, ['test/run.js', '--disable-coverage', ...args, ...Object.keys(files)], { cwd: await project(files), env })
  t.equal(manifest.scripts['test'], 'node test/run.js')
  const [summary, full] = await Promise.all([
    npmTest({ 'one.test.ts': one, 'slow.test.ts': slow }),
    npmTest({ 'one.test.ts': one, 'fails.test.ts': fails }, '--reporter=tap'),
  ])
  t.equal(summary.code, 0, summary.stdout)
  t.match(summary.stdout, /Asserts: {2}2 pass {2}0 fail/)
  t.notMatch(summary.stdout, /^\s*ok \d+ - /m, 'no test point of its own')
  const slowest = summary.stdout.slice(summary.stdout.indexOf('slowest test files'))
  t.match(
    slowest,
    /^slowest test files \(2 of 2; [\d.]+ s summed over all files\):\n +[\d.]+ s +[\d.]+ % {2}slow\.test\.ts\n +[\d.]+ s +[\d.]+ % {2}one\.test\.ts\n$/,
  )
  t.ok(Number(/([\d.]+) s/.exec(slowest.split('\n')[1] ?? '')?.[1]) >= 1.5, 'the slow file, with the time it slept')
  t.equal(full.code, 1, "a failing file: tap's exit status")
  t.match(full.stdout, /^ +ok 1 - yes$/m, 'every test point')
  // .ci/run: grep -E '^# \{ total: ' | tail -n 1, then sed -nE 's/.*pass: ([0-9]+).*/\1/p' and the same for fail.
  const closing = full.stdout.split('\n').filter((line) => /^# \{ total: /.test(line))
  t.match(closing.at(-1), /^# \{ total: 3, pass: 1, fail: 1, skip: 1 \}$/)
  t.match(full.stdout, /^slowest test files \(2 of 2; /m, 'after the closing line, the slowest files of a failed run too')
})
