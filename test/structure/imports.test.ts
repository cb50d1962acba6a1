// Dependencies point one way (lib/README.md §13): no import cycle anywhere in lib/ or bin/, and every
// unit of code has a rank and imports only below it. A failure names the modules and their ranks, so
// the fix starts from the message.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { findCycles, rankOf, rankViolations, readImportGraph, ROOT, type ImportGraph, type Ranks } from '../fixtures/import-graph.js'

const graph = readImportGraph(['lib', 'bin'])

t.test('the cycle finder reports a cycle through every module on it, and none in a tree', async (t) => {
  const cyclic: ImportGraph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts', 'd.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', []],
    ['e.ts', ['e.ts']],
  ])
  t.same(findCycles(cyclic), [
    ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
    ['e.ts', 'e.ts'],
  ])
  t.same(
    findCycles(
      new Map([
        ['a.ts', ['b.ts', 'c.ts']],
        ['b.ts', ['c.ts']],
        ['c.ts', []],
      ]),
    ),
    [],
  )
})

t.test('the graph is read from the source: it holds every module and the imports between them', async (t) => {
  t.ok(graph.size > 50, `${graph.size} modules`)
  t.ok(graph.get('bin/svc.ts')?.includes('lib/process/commands.ts'), 'bin/svc.ts imports lib/process/commands.ts')
  for (const [module, targets] of graph) for (const target of targets) t.ok(graph.has(target), `${module} imports ${target}, a module that exists`)
})

t.test('no import cycle anywhere in lib/ or bin/', async (t) => {
  const cycles = findCycles(graph)
  t.same(
    cycles.map((cycle) => cycle.join(' → ')),
    [],
  )
})

/**
 * The rank map, bottom first: a unit imports only units of a lower rank, never one of its own rank
 * (equals are independent) and never above. Every folder and top-level module of lib/ is here, so a
 * new one fails until it is given a rank. Read from the imports as they are; where a folder's parts
 * sit at different heights, the parts are ranked (lib/core/, lib/process/, lib/models/).
 */
const RANKS: Ranks = [
  // The core's leaves: they import nothing of svc's (json.ts and args.ts only the leaves).
  ['lib/core/result.ts', 'lib/core/errors.ts', 'lib/core/utf8.ts', 'lib/core/freeze.ts', 'lib/core/lifecycle.ts', 'lib/core/ring.ts'],
  ['lib/core/json.ts', 'lib/core/args.ts'],
  // Ctx, HttpError, the problem body; then the route declaration, the pipeline's types and fold.
  ['lib/core/http/'],
  ['lib/core/route-doc.ts'],
  ['lib/core/pipeline.ts'],
  // toProblemReply and guard answer with the pipeline's Reply, so they sit above it.
  ['lib/core/http/problem.ts'],
  ['lib/core/net/', 'lib/core/router.ts'],
  // The process's facts: read by configuration, telemetry, the model store and the CLI tools.
  ['lib/process/package-root.ts', 'lib/process/cron.ts'],
  ['lib/process/config/', 'lib/process/version.ts'],
  ['lib/process/credentials.ts'],
  ['lib/telemetry/'],
  // The server logs and counts what it refuses, so it sits above telemetry, beside the layers.
  ['lib/core/server/', 'lib/layers/'],
  // The model types and platform names, then the profile format the runtimes read, then what builds on them.
  ['lib/models/runtime.ts', 'lib/models/platform.ts'],
  ['lib/models/profile.ts'],
  ['lib/models/artifact.ts', 'lib/models/store/', 'lib/models/inference/'],
  ['lib/models/kernel/', 'lib/models/onnx/'],
  ['lib/models/registry/'],
  // Shadow copies: predicted with the registry's builds, after the reply. Feedback: tokens signed and
  // labels scored for the registry's builds.
  ['lib/models/shadow/', 'lib/models/feedback/', 'lib/models/payload/'],
  // The domains: each reads models or telemetry, none another.
  ['lib/drift/', 'lib/rates/', 'lib/health/', 'lib/insights/'],
  // A prediction, one call: the registry's builds, shadow copies, feedback, the payload log and the drift window.
  ['lib/models/serving/'],
  ['lib/pages/'],
  // What the service and its commands offer: /openapi.json (served as pages serve text), the
  // endpoints, `svc profile` and `svc loadgen`.
  ['lib/openapi/', 'lib/endpoints/', 'lib/tools/'],
  // The wiring: shutdown stops what app.ts built, start.ts runs it, commands.ts and bin/ are the command line.
  ['lib/process/shutdown.ts'],
  ['lib/app.ts'],
  ['lib/process/start.ts'],
  // The command table: serving (start.ts) and the tools, each declared once; bin/ runs it.
  ['lib/process/commands.ts'],
  ['bin/'],
]

t.test('the rank checker flags an unranked module, an import up and one between equals, and nothing else', async (t) => {
  const ranks: Ranks = [['lib/a/', 'lib/b.ts'], ['lib/a/high.ts'], ['lib/c/']]
  t.same(rankOf(ranks, 'lib/a/x.ts'), { unit: 'lib/a/', rank: 0 })
  t.same(rankOf(ranks, 'lib/a/high.ts'), { unit: 'lib/a/high.ts', rank: 1 }, 'the longest unit holding a module wins')
  t.equal(rankOf(ranks, 'lib/b.tsx'), undefined, 'a module unit holds that module only')
  const graph: ImportGraph = new Map([
    ['lib/a/x.ts', ['lib/a/y.ts', 'lib/a/high.ts', 'lib/b.ts']],
    ['lib/a/y.ts', ['lib/a/x.ts']],
    ['lib/a/high.ts', ['lib/a/x.ts']],
    ['lib/b.ts', []],
    ['lib/c/z.ts', ['lib/a/high.ts', 'lib/b.ts', 'lib/d.ts']],
    ['lib/d.ts', []],
  ])
  t.same(rankViolations(graph, ranks), [
    'lib/a/x.ts → lib/a/high.ts: rank 0 (lib/a/) imports rank 1 (lib/a/high.ts), above it',
    'lib/a/x.ts → lib/b.ts: rank 0 (lib/a/) imports rank 0 (lib/b.ts), its equal: units of one rank do not import each other',
    'lib/d.ts: no rank (add its folder or the module to the rank map)',
  ])
})

t.test('every folder and top-level module of lib/, and every module of lib/ and bin/, has a rank', async (t) => {
  const units = RANKS.flat()
  t.same(
    units.filter((unit, i) => units.indexOf(unit) !== i),
    [],
    'each unit is ranked once',
  )
  const entries = readdirSync(join(ROOT, 'lib'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
    .map((entry) => (entry.isDirectory() ? `lib/${entry.name}/` : `lib/${entry.name}`))
  t.ok(entries.length > 10, entries.join(' '))
  t.same(
    entries.filter((entry) => !units.some((unit) => unit.startsWith(entry))),
    [],
    'no folder or module of lib/ left out of the rank map',
  )
  t.same(
    [...graph.keys()].filter((module) => rankOf(RANKS, module) === undefined),
    [],
  )
})

t.test('every import points to a lower rank, never up and never to an equal', async (t) => {
  t.same(rankViolations(graph, RANKS), [])
})
