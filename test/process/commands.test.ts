// The command table run in-process, from svc's arguments to its exit status: every command found by
// its name, help and version, a word that is no command, and a command's failure reported as a
// status, never thrown. Serving itself runs in child processes (integration/cli.test.ts).
import t from 'tap'
import { COMMANDS, runSvc, SERVE, USAGE } from '../../lib/process/commands.js'
import { VERSION } from '../../lib/config/version.js'
import { LOADGEN_USAGE } from '../../lib/tools/loadgen/loadgen.js'
import { PROFILE_USAGE } from '../../lib/tools/profile/command.js'
import { PUSH_USAGE } from '../../lib/tools/push/command.js'
import { SIGN_USAGE } from '../../lib/tools/sign/command.js'
import { closedPort } from '../fixtures/tcp.js'

const svc = async (...argv: readonly string[]) => {
  let stdout = ''
  let stderr = ''
  const code = await runSvc(argv, { env: {}, stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) })
  return { code, stdout, stderr }
}

const printed = (stdout: string) => ({ code: 0, stdout, stderr: '' })

t.test('svc --help, -h, help and help --help print the usage; --version, -v and -V the version; --help wins', async (t) => {
  for (const argv of [['--help'], ['-h'], ['help'], ['help', '--help'], ['help', 'help'], ['--port', '1', '-h', '--version']])
    t.same(await svc(...argv), printed(USAGE), argv.join(' '))
  for (const argv of [['--version'], ['-v'], ['-V']]) t.same(await svc(...argv), printed(`${VERSION}\n`), argv.join(' '))
  t.equal(SERVE.usage, USAGE)
})

t.test('each command is found by its name, and svc help NAME prints what svc NAME --help does', async (t) => {
  t.same(
    COMMANDS.map(({ name, usage }) => [name, usage]),
    [
      ['loadgen', LOADGEN_USAGE],
      ['profile', PROFILE_USAGE],
      ['push', PUSH_USAGE],
      ['sign', SIGN_USAGE],
      ['help', USAGE],
    ],
  )
  for (const { name, usage } of COMMANDS.filter(({ name }) => name !== 'help')) {
    t.same(await svc('help', name), printed(usage), `help ${name}`)
    t.same(await svc(name, '--help'), printed(usage), `${name} --help`)
    t.same(await svc(name, '-h'), printed(usage), `${name} -h`)
  }
})

t.test('a word that is no command, first or after help: the nearest command, and exit 2', async (t) => {
  t.same(await svc('profil', '--input', 'x.csv'), {
    code: 2,
    stdout: '',
    stderr: 'svc: profil is not a command; did you mean svc profile?\nsvc --help lists the commands.\n',
  })
  t.same(await svc('help', 'serve'), { code: 2, stdout: '', stderr: 'svc: serve is not a command\nsvc --help lists the commands.\n' })
})

t.test('svc loadgen reports its failures as exit statuses: 2 for the command line, 1 for a service it cannot reach', async (t) => {
  t.same(await svc('loadgen', '--bogus'), { code: 2, stdout: '', stderr: "svc loadgen: Unknown option '--bogus'\nsvc loadgen --help lists the options.\n" })
  const url = `http://127.0.0.1:${await closedPort()}`
  t.same(await svc('loadgen', '--model', 'iris', '--url', url), { code: 1, stdout: '', stderr: 'svc loadgen: fetch failed\n' })
})

t.test('svc profile, svc push and svc sign report theirs the same way', async (t) => {
  t.same(await svc('profile'), { code: 2, stdout: '', stderr: 'svc profile: --input is required\nsvc profile --help lists the options.\n' })
  t.same(await svc('push'), {
    code: 2,
    stdout: '',
    stderr: "svc push: name the version's directory: svc push DIR --model NAME --version V\nsvc push --help lists the options.\n",
  })
  t.same(await svc('sign'), { code: 2, stdout: '', stderr: 'svc sign: name at least one model.json to sign\nsvc sign --help lists the options.\n' })
})
