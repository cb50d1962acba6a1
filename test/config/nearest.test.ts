import t from 'tap'
import { editDistance, nearest } from '../../lib/config/nearest.js'

t.test('edit distance: insertions, deletions, substitutions, and a swap of neighbours as one', async (t) => {
  for (const [a, b, distance] of [
    ['', '', 0],
    ['', 'help', 4],
    ['help', '', 4],
    ['profile', 'profile', 0],
    ['profil', 'profile', 1],
    ['profiles', 'profile', 1],
    ['prafile', 'profile', 1],
    ['laodgen', 'loadgen', 1],
    ['lodagen', 'loadgen', 1],
    ['ab', 'ba', 1],
    ['ca', 'abc', 3],
    ['kitten', 'sitting', 3],
    ['serve', 'help', 4],
  ] as const) {
    t.equal(editDistance(a, b), distance, `${a} → ${b}`)
    t.equal(editDistance(b, a), distance, `${b} → ${a}`)
  }
})

t.test('the nearest name within a third of its length, the first of a tie, or none', async (t) => {
  const names = ['loadgen', 'profile', 'help']
  t.equal(nearest('profil', names), 'profile')
  t.equal(nearest('laodgen', names), 'loadgen')
  t.equal(nearest('lodgn', names), 'loadgen', 'two edits in seven letters')
  t.equal(nearest('hlp', names), 'help', 'one in four')
  t.equal(nearest('hl', names), undefined, 'two in four is not a slip')
  t.equal(nearest('serve', names), undefined)
  t.equal(nearest('cat', ['bat', 'car']), 'bat', 'a tie goes to the first name')
  t.equal(nearest('cart', ['bat', 'car']), 'car', 'the nearer wins, wherever it is listed')
})
