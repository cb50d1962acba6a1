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
 * The rank map, bottom first, by folder: a folder imports only folders of a lower rank, never one of
 * its own rank (equals are independent) and never above; inside a folder imports are free, but
 * never around a cycle. Every folder and top-level module of lib/ is here, so a new one fails until
 * it is given a rank, and lib/app.ts is the one module ranked alone.
 */
const RANKS: Ranks = [
  // The request's contract and the leaves everything uses: Ctx, the pipeline, the router, errors.
  ['lib/core/'],
  // The process's facts: configuration, credentials, version, package root.
  ['lib/config/'],
  ['lib/telemetry/'],
  // The server logs and counts what it refuses; the layers wrap each route.
  ['lib/server/', 'lib/layers/'],
  ['lib/models/'],
  // The domains: each reads models or telemetry, none another.
  ['lib/drift/', 'lib/rates/', 'lib/health/', 'lib/insights/'],
  // A prediction as one call over models and their drift window, and what follows the reply:
  // shadow copies, feedback, the payload log.
  ['lib/serving/'],
  ['lib/pages/'],
  // What the service and its commands offer: /openapi.json, the endpoints, the CLI's tools.
  ['lib/openapi/', 'lib/endpoints/', 'lib/tools/'],
  ['lib/app.ts'],
  // Start, shutdown and the command table run the app; bin/ runs the table.
  ['lib/process/'],
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

t.test("the rank map lists lib/'s top-level folders, lib/app.ts and bin/, not modules within a folder", async (t) => {
  t.same(
    RANKS.flat().filter((unit) => !/^lib\/[^/]+\/$/.test(unit) && unit !== 'lib/app.ts' && unit !== 'bin/'),
    [],
  )
})

t.test("the imports between lib/'s top-level folders (app.ts counting as one) form no cycle", async (t) => {
  const folderOf = (module: string): string => module.split('/').slice(0, 2).join('/')
  const folders = new Map<string, string[]>()
  for (const [module, targets] of graph) {
    const from = folderOf(module)
    const edges = folders.get(from) ?? []
    for (const target of targets) if (folderOf(target) !== from && !edges.includes(folderOf(target))) edges.push(folderOf(target))
    folders.set(from, edges)
  }
  t.ok(folders.size > 10, [...folders.keys()].join(' '))
  t.same(findCycles(folders), [])
})

t.test('lib/models/ knows no HTTP: it imports nothing of lib/core/http/', async (t) => {
  const http = [...graph].flatMap(([module, targets]) =>
    module.startsWith('lib/models/') ? targets.filter((target) => target.startsWith('lib/core/http/')).map((target) => `${module} → ${target}`) : [],
  )
  t.same(http, [])
})
