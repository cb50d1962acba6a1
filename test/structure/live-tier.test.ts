// The live tier: tests that run what a deployment runs, for real (a Prometheus scraping live
// instances, Alertmanager, HAProxy in front of two instances; later an object store), with the
// checks of ops/. They are the suite's slowest files. The tier is the directory test/ops/ and
// nothing else: `npm run test:live` (and `npm run ops:check`) runs it alone, without coverage;
// `npm run test:unit` leaves it out; `npm test` runs it with the rest, and .ci/run runs `npm test`
// once, on Node 24 (.nvmrc). A new live test goes in test/ops/ as `<what it checks>.test.ts`, finds
// its server with `findTool` (test/fixtures/tools.ts: skipped without the Debian package, a failure
// under CI=true) and is in the tier with no list to edit. This file holds the rule.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { readImportGraph, ROOT } from '../fixtures/import-graph.js'

/** A test starts a deployment's server itself (by its Debian tool's name) or through the fixture that does. */
const STARTS_SERVER = /\bfindTool\(t, '(?:prometheus|prometheus-alertmanager|haproxy)'/
const SERVER_FIXTURES = ['test/fixtures/prometheus.ts', 'test/fixtures/alertmanager.ts', 'test/fixtures/haproxy.ts']

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; tap: { include: string[] } }
const graph = readImportGraph(['test'])
const testFiles = [...graph.keys()].filter((file) => file.endsWith('.test.ts'))

/** Whether a test file runs a live server. */
const isLive = (file: string): boolean =>
  STARTS_SERVER.test(readFileSync(join(ROOT, file), 'utf8')) || (graph.get(file) ?? []).some((module) => SERVER_FIXTURES.includes(module))

t.test('every test that starts a Prometheus, an Alertmanager or an HAProxy is in test/ops/', async (t) => {
  t.same(
    testFiles.filter((file) => isLive(file) && !file.startsWith('test/ops/')),
    [],
  )
})

t.test('the check finds what it is for: by findTool, by a fixture, and not a tool that only checks a file', async (t) => {
  t.ok(isLive('test/ops/scrape.test.ts'), 'a real Prometheus, by findTool')
  t.ok(isLive('test/ops/haproxy.test.ts'), 'a real HAProxy before two instances')
  t.ok(isLive('test/ops/inhibition.test.ts'), 'a real Alertmanager, through its fixture')
  t.notOk(isLive('test/integration/metrics.test.ts'), 'promtool check metrics starts no server')
  t.notOk(isLive('test/core/router.test.ts'))
})

t.test('the tier is the directory: test:live runs it, test:unit leaves it out, npm test runs it too', async (t) => {
  t.equal(manifest.scripts['test:live'], 'tap --disable-coverage --allow-incomplete-coverage test/ops')
  t.equal(manifest.scripts['ops:check'], 'npm run -s test:live --')
  t.match(manifest.scripts['test:unit'], / --exclude='test\/ops\/\*\*'/)
  t.same(manifest.tap.include, ['test/**/*.test.ts'], 'npm test: every test file, test/ops/ among them')
  t.ok(readdirSync(join(ROOT, 'test/ops')).filter((name) => name.endsWith('.test.ts')).length > 10)
})

t.test('.ci/run runs the suite once, live tier included, on the Node line of .nvmrc', async (t) => {
  const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8')
  const suites = ci.split('\n').filter((line) => /^run_suite /.test(line))
  t.equal(suites.length, 1, suites.join('\n'))
  t.match(suites[0], / npm test -- --reporter=tap$/)
  t.match(ci, /npm exec --yes --package="node@\$nvmrc"/, 'Node from the npm registry when the machine has another')
  t.equal(readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim(), '24')
})
