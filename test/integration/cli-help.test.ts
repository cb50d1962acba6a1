// bin/svc.ts explaining itself, as users run it in child processes: the commands in --help, each
// command's usage, the version, and a mistyped command.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { LOADGEN_USAGE } from '../../lib/tools/loadgen/loadgen.js'
import { PROFILE_USAGE } from '../../lib/tools/profile/command.js'
import { SIGN_USAGE } from '../../lib/tools/sign/command.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { type Child, ROOT, spawnTs } from '../fixtures/spawn.js'

const CLI = 'bin/svc.ts'

const escapeRegExp = (text: string): string => text.replace(/[[\]]/g, '\\$&')

// Each test runs its children in parallel: each pays the TypeScript loader's start-up.

t.test('--version and -v print the package version and exit 0 (-V: cli.test.ts)', async (t) => {
  const children = ['--version', '-v'].map((flag) => [flag, spawnTs(CLI, [flag])] as const)
  for (const [flag, child] of children) {
    t.same(await child.exited, { code: 0, signal: null }, flag)
    t.equal(child.stdout(), `${PACKAGE_VERSION}\n`, flag)
  }
})

t.test(
  '--help lists every command on a line, and svc help COMMAND prints what svc COMMAND --help does (profile/cli.test.ts, loadgen-cli.test.ts)',
  async (t) => {
    const runs = {
      help: spawnTs(CLI, ['--help']),
      helpCommand: spawnTs(CLI, ['help']),
      helpHelp: spawnTs(CLI, ['help', '--help']),
      helpProfile: spawnTs(CLI, ['help', 'profile']),
      helpLoadgen: spawnTs(CLI, ['help', 'loadgen']),
      helpSign: spawnTs(CLI, ['help', 'sign']),
    }
    for (const [name, child] of Object.entries(runs)) t.same(await child.exited, { code: 0, signal: null }, name)
    const usage = runs.help.stdout()
    for (const command of ['loadgen --model NAME', 'profile --input FILE', 'sign FILE…', 'help [COMMAND]'])
      t.match(usage, new RegExp(`\n  ${escapeRegExp(command)} +\\S[^\n]*\n`), command)
    t.equal(runs.helpCommand.stdout(), usage, 'svc help is svc --help')
    t.equal(runs.helpHelp.stdout(), usage, 'and so is svc help --help')
    t.equal(runs.helpProfile.stdout(), PROFILE_USAGE)
    t.equal(runs.helpLoadgen.stdout(), LOADGEN_USAGE)
    t.equal(runs.helpSign.stdout(), SIGN_USAGE)
  },
)

t.test('a mistyped command suggests the nearest one and exits 2, before any configuration is read', async (t) => {
  const runs = [
    [['profil', '--input', 'train.csv'], 'svc: profil is not a command; did you mean svc profile?\n'],
    [['laodgen', '--model', 'iris'], 'svc: laodgen is not a command; did you mean svc loadgen?\n'],
    [['help', 'profle'], 'svc: profle is not a command; did you mean svc profile?\n'],
  ] as const
  const children = runs.map(([args]) => spawnTs(CLI, args, { PORT: 'not a port' }))
  for (const [i, [args, message]] of runs.entries()) {
    const child = children[i] as Child
    t.same(await child.exited, { code: 2, signal: null }, args.join(' '))
    t.equal(child.stderr(), `${message}svc --help lists the commands.\n`)
    t.equal(child.stdout(), '')
  }
})

t.test("svc help loadgen (LOADGEN_USAGE, above) says what the summary's skipped count counts, as README.md's loadgen part does", async (t) => {
  const help = LOADGEN_USAGE.replace(/\s+/g, ' ')
  t.match(help, /A skipped request was due but never sent: --concurrency requests were already in flight/)
  t.match(help, /It is not retried later: the run sends fewer than rate × duration, and the exit status is 1\./)
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ')
  t.match(readme, /`skipped` counts requests due but never sent because `--concurrency` were in flight/)
})
