// lib/drift/reference.ts, the references every profile and artifact carries, against values worked
// out by hand. (That training still reproduces the shipped artifacts with it is
// test/models/artifact.retrain.test.ts.)
import t from 'tap'
import { categoricalReference, countedReference, numericalReference } from '../../lib/drift/reference.js'

t.test('equal-frequency edges: candidates at ⌊i·n/bins⌋ of the sorted values, shares under referenceBin, and the range', async (t) => {
  // n = 10, 4 bins: candidates at positions 2, 5, 7 of 1…10 are 3, 6, 8, each closing a bin of at
  // least 10 / 8 rows: [1, 2] [3, 4, 5] [6, 7] [8, 9, 10].
  t.same(numericalReference('x', [10, 1, 9, 2, 8, 3, 7, 4, 6, 5], 4), {
    name: 'x',
    type: 'numerical',
    edges: [3, 6, 8],
    proportions: [0.2, 0.3, 0.2, 0.3],
    min: 1,
    max: 10,
  })
  t.same(numericalReference('x', Float64Array.of(0.5, -1.5, 2.5, 1.5), 2), {
    name: 'x',
    type: 'numerical',
    edges: [1.5],
    proportions: [0.5, 0.5],
    min: -1.5,
    max: 2.5,
  })
})

t.test('ties merge bins: an edge that would close a bin of fewer than n / 2·bins rows is dropped', async (t) => {
  // n = 10, 5 bins, at least 1 row a bin: candidates 1 (pos. 2), 1 (pos. 4), 2 (pos. 6), 4 (pos. 8);
  // both 1s would close an empty bin.
  t.same(numericalReference('x', [1, 1, 1, 1, 1, 1, 2, 3, 4, 5], 5), {
    name: 'x',
    type: 'numerical',
    edges: [2, 4],
    proportions: [0.6, 0.2, 0.2],
    min: 1,
    max: 5,
  })
  t.same(numericalReference('flat', [5, 5, 5], 3), { name: 'flat', type: 'numerical', edges: [], proportions: [1], min: 5, max: 5 }, 'a constant: one bin')
  t.same(numericalReference('one', [7], 10), { name: 'one', type: 'numerical', edges: [], proportions: [1], min: 7, max: 7 }, 'a single value')
})

t.test('categorical shares follow the levels given, unseen levels at 0', async (t) => {
  t.same(categoricalReference('c', ['a', 'b', 'a', 'c'], ['c', 'b', 'a', 'z']), {
    name: 'c',
    type: 'categorical',
    levels: ['c', 'b', 'a', 'z'],
    proportions: [0.25, 0.25, 0.5, 0],
  })
  t.throws(() => categoricalReference('c', ['a', 'q'], ['a']), /^c has values outside its levels$/)
  t.same(countedReference('k', ['p', 'q'], Float64Array.of(1, 3)), { name: 'k', type: 'categorical', levels: ['p', 'q'], proportions: [0.25, 0.75] })
})
