// Dependencies point one way (lib/README.md §13): no import cycle anywhere in lib/ or bin/, and the
// folders keep to their layer. A failure names the modules, so the fix starts from the message.
import t from 'tap'
import { findCycles, readImportGraph, type ImportGraph } from '../fixtures/import-graph.js'

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
  t.ok(graph.get('bin/svc.ts')?.includes('lib/process/start.ts'), 'bin/svc.ts imports lib/process/start.ts')
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
 * What a folder must not import, lowest layers first. The contract modules (lib/core/pipeline.ts,
 * lib/core/http/, lib/process/config/, lib/core/net/) sit below everything; telemetry below the layers; the layers
 * and domain folders below the endpoints; lib/app.ts wires them and only bin/ and lib/process/start.ts
 * import it.
 */
const FORBIDDEN: ReadonlyArray<readonly [string, RegExp]> = [
  ['lib/config', /^lib\/(?!config\/|config\.ts$|package-root\.ts$|cron\.ts$)/],
  ['lib/net', /^lib\/(?!net\/)/],
  ['lib/core/pipeline.ts', /^lib\/(?!core\/pipeline\.ts$|core\/http\/|core\/route-doc\.ts$)/],
  ['lib/http', /^lib\/(?!http\/|pipeline\.ts$)/],
  ['lib/telemetry', /^lib\/(layers|endpoints|models|drift|rates|health|pages|openapi|loadgen|profile)\/|^lib\/(app|server|router|start)\.ts$/],
  ['lib/layers', /^lib\/(endpoints|models|drift|rates|health|pages|openapi|loadgen|profile)\/|^lib\/(app|server|router|start)\.ts$/],
  ['lib/core/server/', /^lib\/(layers|endpoints|models|drift|rates|health|pages|openapi|loadgen|profile)\/|^lib\/(app|router|start|shutdown)\.ts$/],
  ['lib/endpoints', /^lib\/(server|layers)\/|^lib\/(app|server|router|start|shutdown)\.ts$/],
  ['lib/models', /^lib\/(server|layers|endpoints|drift|health|pages|openapi)\/|^lib\/profile\/(?!profile\.ts$)|^lib\/(app|server|router|start|shutdown)\.ts$/],
  ['lib/drift', /^lib\/(server|layers|endpoints|health|pages|openapi)\/|^lib\/(app|server|router|start|shutdown)\.ts$/],
  ['lib/profile', /^lib\/(server|layers|endpoints|health|pages|openapi|loadgen)\/|^lib\/(app|server|router|start|shutdown)\.ts$/],
  // The profile format is read by the model runtimes: it may lean on nothing but the model types.
  ['lib/models/profile.ts', /^lib\/(?!models\/runtime\.ts$)/],
  ['lib/', /^lib\/(app|start)\.ts$/],
]

t.test('every folder imports only from its own layer or below', async (t) => {
  const wrong: string[] = []
  for (const [module, targets] of graph) {
    for (const [scope, forbidden] of FORBIDDEN) {
      if (!module.startsWith(scope) || module === 'lib/app.ts' || module === 'lib/process/start.ts') continue
      for (const target of targets) if (forbidden.test(target)) wrong.push(`${module} → ${target}`)
    }
  }
  t.same(wrong, [])
})
