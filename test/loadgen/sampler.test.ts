import t from 'tap'
import { mulberry32 } from '../../lib/loadgen/random.js'
import { createSampler, type DescribedInput } from '../../lib/loadgen/sampler.js'

const INPUTS: readonly DescribedInput[] = [
  { name: 'width', type: 'numerical', reference: { edges: [1, 2], proportions: [0.2, 0.5, 0.3] }, standardisation: { mean: 1.5, scale: 0.5 } },
  { name: 'flat', type: 'numerical', reference: { edges: [], proportions: [1] }, standardisation: { mean: 10, scale: 2 } },
  { name: 'colour', type: 'categorical', reference: { levels: ['red', 'green', 'blue'], proportions: [0.6, 0.4, 0] } },
]
const N = 20_000

const draws = (shift: number, shifted: string[]): Array<Record<string, number | string>> => {
  const draw = createSampler({ inputs: INPUTS, shift, shifted: new Set(shifted), random: mulberry32(5) })
  return Array.from({ length: N }, draw)
}
const share = (values: unknown[], test: (value: any) => boolean): number => values.filter(test).length / values.length

t.test('unshifted draws fill the reference bins in the reference shares', async (t) => {
  const rows = draws(0, ['width'])
  const width = rows.map((row) => row['width'] as number)
  t.ok(Math.abs(share(width, (v) => v < 1) - 0.2) < 0.01)
  t.ok(Math.abs(share(width, (v) => v >= 1 && v < 2) - 0.5) < 0.01)
  t.ok(Math.abs(share(width, (v) => v >= 2) - 0.3) < 0.01)
  t.ok(
    width.every((v) => v >= 0.5 && v < 2.5),
    'the open bins reach one standard deviation past the edges',
  )
  const flat = rows.map((row) => row['flat'] as number)
  const mean = flat.reduce((a, b) => a + b, 0) / N
  const sd = Math.sqrt(flat.reduce((a, b) => a + (b - mean) ** 2, 0) / N)
  t.ok(Math.abs(mean - 10) < 0.05 && Math.abs(sd - 2) < 0.05, `a single bin: mean ${mean.toFixed(3)}, sd ${sd.toFixed(3)}`)
  const colours = rows.map((row) => row['colour'])
  t.ok(Math.abs(share(colours, (v) => v === 'red') - 0.6) < 0.01)
  t.equal(
    share(colours, (v) => v === 'blue'),
    0,
    'a level with share 0 is never drawn',
  )
})

t.test('a shift moves only the chosen numerical inputs, by standard deviations', async (t) => {
  const plain = draws(0, [])
  const moved = draws(2, ['width'])
  t.equal((moved[7]!['width'] as number) - (plain[7]!['width'] as number), 1, '2 sd of 0.5')
  t.equal(moved[7]!['flat'], plain[7]!['flat'], 'not chosen, not moved')
  t.equal(moved[7]!['colour'], plain[7]!['colour'])
})

t.test('rounding that leaves the shares short of 1 falls into the last bin', async (t) => {
  const inputs: DescribedInput[] = [{ name: 'c', type: 'categorical', reference: { levels: ['a', 'b'], proportions: [0.5, 0.4] } }]
  const draw = createSampler({ inputs, shift: 0, shifted: new Set(), random: () => 0.95 })
  t.same(draw(), { c: 'b' })
})

t.test('refuses to shift what it cannot', async (t) => {
  const make = (shifted: string[]) => () => createSampler({ inputs: INPUTS, shift: 1, shifted: new Set(shifted), random: Math.random })
  t.throws(make(['colour']), /colour is categorical; only numerical inputs can be shifted/)
  t.throws(make(['height']), /the model has no input height; its inputs are width, flat, colour/)
})
