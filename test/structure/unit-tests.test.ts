// `npm run test:unit`, the inner loop, holds only tests that need nothing outside node: a test that
// starts PostgreSQL, Redis, Prometheus or another of Debian's tools, runs python3-onnx, or starts svc
// in a child process is left out by name in package.json, not by chance. The files checked are those
// tap itself lists with the script's --exclude options.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { type ImportGraph, readImportGraph, ROOT } from '../fixtures/import-graph.js'
import { UNTAPPED_ENV } from '../fixtures/spawn.js'

/** Fixtures whose use means a program outside node. */
const OUTSIDE: Readonly<Record<string, string>> = {
  'test/fixtures/tools.ts': "one of Debian's tools (findTool)",
  'test/fixtures/onnx-graphs.ts': 'python3-onnx',
  'test/fixtures/s3/moto.ts': "PATH's python3 with moto[server] and boto3",
}
/** A call that starts svc in a child process (test/fixtures/spawn.ts). */
const SPAWNS = /\bspawn(?:Ts|Built|Program)\(/

const script: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['test:unit']
const excludes = script.split(/\s+/).flatMap((arg) => (arg.startsWith('--exclude=') ? [arg.replaceAll("'", '')] : []))
const graph = readImportGraph(['test', 'lib'])

const reached = (graph: ImportGraph, module: string, seen = new Set<string>()): Set<string> => {
  for (const target of graph.get(module) ?? []) if (!seen.has(target)) reached(graph, target, seen.add(target))
  return seen
}

/** Why a test file needs more than node, one line per reason; none for a unit test. */
const needs = (file: string): string[] => {
  const modules = [file, ...reached(graph, file)]
  const outside = modules.flatMap((module) => (OUTSIDE[module] === undefined ? [] : [`${file} needs ${OUTSIDE[module]} (${module})`]))
  const spawning = modules.filter((module) => module.startsWith('test/') && module !== 'test/fixtures/spawn.ts')
  return [
    ...outside,
    ...spawning.flatMap((module) => (SPAWNS.test(readFileSync(join(ROOT, module), 'utf8')) ? [`${file} starts svc in a child process (${module})`] : [])),
  ]
}

const listed = (): Promise<string[]> =>
  new Promise((resolve, reject) =>
    execFile(join(ROOT, 'node_modules/.bin/tap'), ['list', ...excludes], { cwd: ROOT, env: UNTAPPED_ENV, timeout: 60_000 }, (error, stdout) =>
      error === null ? resolve(stdout.split('\n').filter(Boolean)) : reject(error),
    ),
  )

t.test('the script runs tap with types stripped and without coverage, leaving files out by --exclude only', async (t) => {
  t.match(script, /^tap --type-strip-only --disable-coverage( --exclude='[^' ]+')+$/)
  t.ok(excludes.length > 3, excludes.join(' '))
})

t.test('the check finds what it is for: a real server, python3-onnx, a child svc', async (t) => {
  t.match(needs('test/health/postgres.test.ts'), [/needs one of Debian's tools/])
  t.match(needs('test/models/onnx/runtime.test.ts'), [/needs python3-onnx/])
  t.match(needs('test/process/start.test.ts'), [/starts svc in a child process \(test\/process\/start\.test\.ts\)/])
  t.same(needs('test/process/commands.test.ts'), [])
})

t.test('no test that test:unit runs needs more than node; most tests are in it', async (t) => {
  const files = await listed()
  t.ok(files.length > 100, `${files.length} files`)
  t.ok(files.includes('test/structure/unit-tests.test.ts'), 'this one among them')
  t.same(files.flatMap(needs), [])
})
