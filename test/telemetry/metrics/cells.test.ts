import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { counterCell, labelSet, withLabel } from '../../../lib/telemetry/metrics/cells.js'
import { ROOT } from '../../fixtures/spawn.js'

t.test('withLabel adds one label last and leaves the original alone; labelSet is a frozen copy', async (t) => {
  const labels = Object.freeze({ model: 'iris', version: '1' })
  const bucket = withLabel(labels, 'le', '0.5')
  t.same(Object.entries(bucket), [
    ['model', 'iris'],
    ['version', '1'],
    ['le', '0.5'],
  ])
  t.same(labels, { model: 'iris', version: '1' })
  const kept = labelSet(labels)
  t.not(kept, labels)
  t.ok(Object.isFrozen(kept))
  t.same(counterCell(labels).labels, labels)
})

// V8's own view of hidden classes needs --allow-natives-syntax, so it is asked in a child process
// (with tap's TypeScript loader). The label values are strings of the kinds a store gives: a
// literal, a slice of a longer text (a path), a concatenation and a JSON string, taken in turn.
const probe = `
import { counterCell, labelSet, withLabel } from ${JSON.stringify(`${ROOT}lib/telemetry/metrics/cells.ts`)}
const path = '/var/lib/svc/models/customer-eu-west-0000/1/model.json'
const kinds = [
  () => 'customer-eu-west-0000',
  (i) => path.slice(20, 41).replace('0000', String(i).padStart(4, '0')).slice(0),
  (i) => 'customer-eu-west-' + String(i).padStart(4, '0'),
  (i) => JSON.parse('"customer-eu-west-' + String(i).padStart(4, '0') + '"'),
]
const sets = Array.from({ length: 12 }, (_, i) => ({ model: kinds[i % 4](i), version: kinds[(i + 1) % 4](i), build: kinds[(i + 2) % 4](i) }))
const same = (objects) => objects.every((o) => %HaveSameMap(o, objects[0]))
console.log(JSON.stringify({
  labelSet: same(sets.map((l) => labelSet(l))),
  cell: same(sets.map((l) => counterCell(l).labels)),
  withLabel: same(sets.map((l) => Object.freeze(withLabel(l, 'bin', '0')))),
  spread: same(sets.map((l) => Object.freeze({ ...l, bin: '0' }))),
}))
`

t.test('label sets of the same names share one hidden class, whatever kind of string their values are', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [...process.execArgv, '--allow-natives-syntax', '--input-type=module', '-e', probe], {
    cwd: ROOT,
  })
  const shared = JSON.parse(stdout) as Record<string, boolean>
  t.same({ labelSet: shared['labelSet'], cell: shared['cell'], withLabel: shared['withLabel'] }, { labelSet: true, cell: true, withLabel: true })
  // What the copies are made this way for: on Node 20 a frozen spread copy gets a class of its own.
  if (process.versions.node.startsWith('20.')) t.equal(shared['spread'], false, 'Node 20 gives each frozen spread copy its own class')
})
