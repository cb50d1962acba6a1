// README's `svc profile` examples, run as written on rows like theirs: none warns about its bins.
// Without --bins a profile takes the most bins, up to 10, that its rows afford (bins-warning.ts),
// so 10 bins on iris's 150 rows (24.1 % per column) no longer warn; under 77 rows even 2 bins
// would alarm on noise, and the warning says how many rows would do.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseProfile } from '../../../lib/models/profile.js'
import { defaultBins } from '../../../lib/tools/profile/bins-warning.js'
import { runProfileCommand } from '../../../lib/tools/profile/command.js'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'
import { ARTIFACTS } from '../../fixtures/models.js'
import { tempTree } from '../../fixtures/model-store.js'

/** The shipped iris rows, species last: what README's train.csv, iris.csv and held-out.csv hold. */
const IRIS = readFileSync(new URL('iris/1/reference-rows.csv', ARTIFACTS), 'utf8')

const run = async (args: readonly string[]) => {
  const out: string[] = []
  const err: string[] = []
  const code = await runProfileCommand(args, { stdout: (text) => out.push(text), stderr: (text) => err.push(text) })
  return { code, stdout: out.join(''), stderr: err.join('') }
}

t.test("README's profile examples write their profile without a bins warning", async (t) => {
  const dir = await tempTree(t, {})
  const random = mulberry32(46)
  const people = Array.from({ length: 2000 }, (_, i) =>
    [i % 97 === 0 ? '' : String(18 + Math.floor(random() * 60)), `z${Math.floor(random() * 40)}`, String(Math.round(20_000 + random() * 80_000))].join(','),
  )
  for (const [name, text] of [
    ['train.csv', IRIS],
    ['iris.csv', IRIS],
    ['held-out.csv', IRIS],
    ['people.csv', `age,zip,income\n${people.join('\n')}\n`],
  ])
    writeFileSync(join(dir, name as string), text as string)
  const output = join(dir, 'profile.json')
  for (const args of [
    ['--input', join(dir, 'train.csv'), '--model', 'iris', '--output', output],
    ['--input', join(dir, 'iris.csv'), '--model', 'iris', '--bins', '3', '--output', output],
    ['--input', join(dir, 'held-out.csv'), '--model', 'iris', '--target', 'species', '--output', output],
    ['--input', join(dir, 'people.csv'), '--schema', 'age,zip:categorical,income', '--drop-missing', '--output', output],
  ]) {
    const { code, stderr } = await run(args)
    t.equal(code, 0, args.join(' '))
    t.match(stderr, /^svc profile: wrote /, 'the summary')
    t.notMatch(stderr, /warning/, `no warning: ${stderr}`)
  }
  const { code, stdout, stderr } = await run(['--input', join(dir, 'train.csv'), '--model', 'iris'])
  t.equal(code, 0)
  t.notMatch(stderr, /warning/)
  t.same(
    parseProfile(stdout).features.map((feature) => feature.proportions.length),
    [4, 4, 4, 4],
    "150 rows afford 4 bins a column: iris's",
  )
})

t.test('without --bins: the most bins up to 10 the rows afford, 2 and a warning under 77 rows', async (t) => {
  t.same([50, 77, 112, 113, 146, 147, 150, 178, 382, 383, 100_000].map(defaultBins), [2, 2, 2, 3, 3, 4, 4, 4, 9, 10, 10])
  const dir = await tempTree(t, {})
  const input = join(dir, 'few.csv')
  const random = mulberry32(7)
  writeFileSync(input, `x\n${Array.from({ length: 60 }, () => random()).join('\n')}\n`)
  const { code, stdout, stderr } = await run(['--input', input])
  t.equal(code, 0, 'a warning, not an error')
  t.same(
    parseProfile(stdout).features.map((feature) => feature.proportions.length),
    [2],
  )
  t.match(stderr, /svc profile: warning: too many bins for 60 rows: [\s\S]*svc profile: even --bins 2 leaves \d+\.\d+ %: profile \d+ rows or more\.\n$/)
})
