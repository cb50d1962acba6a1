// svc --help, written from the declarations: every flag and variable in it with its default, in
// the columns of the hand-written help it replaced.
import t from 'tap'
import { COMMANDS, USAGE, unknownCommand } from '../../lib/process/commands.js'
import { formatUsage, type UsageListing } from '../../lib/config/usage.js'
import { VARIABLES, type Variable } from '../../lib/config/variables.js'

const DECLARED: ReadonlyArray<readonly [string, Variable<unknown>]> = Object.entries(VARIABLES)
const lines = USAGE.split('\n')
const NOTHING_ELSE: UsageListing = { serve: { left: '', help: '' }, commands: [], options: [] }

t.test('USAGE opens with how svc serves and runs a command, and closes with the exit codes', async (t) => {
  t.match(USAGE, /^Usage: svc \[options\] {12}serve, as the options and environment variables below set it\n {7}svc COMMAND \[options\] {4}run a command\n\n/)
  t.match(USAGE, /\n\nExit codes: 0 stopped cleanly, 1 start-up or runtime failure, 2 invalid configuration or an unknown command\.\n$/)
})

t.test('every command on one line, with what it needs, before the options', async (t) => {
  const from = lines.indexOf("Commands (svc help COMMAND, or svc COMMAND --help, for a command's options):")
  t.same(lines.slice(from + 1, from + 7), [
    '  loadgen --model NAME    prediction traffic for a running svc: real rows replayed, optionally shifted',
    "  profile --input FILE    the drift reference profile of a model's training rows",
    "  push DIR --model NAME   upload a model version's files to a model store and list it in its manifest",
    '  sign FILE…              write the sha256 into model artifacts edited by hand; --check verifies only',
    "  help [COMMAND]          print this help, or a command's, and exit",
    '',
  ])
  t.same(
    COMMANDS.map(({ name }) => name),
    ['loadgen', 'profile', 'push', 'sign', 'help'],
  )
  t.ok(from > 0 && from < lines.indexOf('Options (each overrides the environment variable in brackets):'))
})

t.test('a word that is no command: the nearest command when it is a slip away, and where the commands are listed', async (t) => {
  t.equal(unknownCommand('profil'), 'svc: profil is not a command; did you mean svc profile?\nsvc --help lists the commands.\n')
  t.equal(unknownCommand('laodgen'), 'svc: laodgen is not a command; did you mean svc loadgen?\nsvc --help lists the commands.\n')
  t.equal(unknownCommand('hepl'), 'svc: hepl is not a command; did you mean svc help?\nsvc --help lists the commands.\n')
  t.equal(unknownCommand('serve'), 'svc: serve is not a command\nsvc --help lists the commands.\n', 'nothing near')
})

t.test('each flag is listed with the variable it overrides and its default', async (t) => {
  t.ok(lines.includes('  --host H                listen address [HOST] (default 127.0.0.1)'))
  t.ok(lines.includes('  --env dev|stage|prod    deployment environment [SVC_ENVIRONMENT] (default dev)'))
  t.ok(lines.includes('  --log-level L           DEBUG, INFO, WARNING or ERROR [LOG_LEVEL] (default INFO)'))
  t.ok(lines.includes('  -h, --help              print this help and exit'))
  t.ok(lines.includes('  -v, -V, --version       print the version and exit'))
  for (const [name, { flag }] of DECLARED) {
    if (flag !== undefined)
      t.ok(
        lines.some((line) => line.startsWith(`  --${flag.name} ${flag.arg} `) && line.includes(`[${name}]`)),
        name,
      )
  }
})

t.test('every other variable is listed once under "Environment only", in the order declared', async (t) => {
  const envOnly = lines.slice(lines.indexOf('Environment only:') + 1)
  const listed = envOnly.flatMap((line) => /^ {2}([A-Z][A-Z0-9_]*) /.exec(line)?.[1] ?? [])
  t.same(
    listed,
    DECLARED.filter(([, { flag }]) => flag === undefined).map(([name]) => name),
  )
  t.ok(envOnly.includes('  SVC_DB_PORT             its port (default 5432)'))
  t.ok(envOnly.includes('  SVC_DB_HOST             PostgreSQL checked by the probes'), 'no default, none shown')
  t.ok(envOnly.includes('  SVC_DRIFT_SCHEDULE      when drift checks run, a cron expression in UTC (default "* * * * *")'), 'a default with spaces is quoted')
  t.ok(envOnly.includes("  OTEL_TRACES_SAMPLER_ARG the traceidratio samplers' ratio, 0 to 1; 0.01 under high traffic (default 1)"), 'one space at least')
  t.ok(
    envOnly.some((line) => line.startsWith('  SVC_MAX_EVENT_LOOP_DELAY_MS  event-loop lag')),
    'a longer name is followed by two spaces',
  )
})

t.test('long help wraps at a word into the help column, and a default is never split', async (t) => {
  t.ok(
    USAGE.includes(
      '  SVC_SHUTDOWN_DELAY_MS   after a signal, keep accepting this long while /ready answers 503\n                          (default 5000 in prod and stage, 0 in dev)\n',
    ),
  )
  for (const line of lines) t.ok(line.length < 110, line.slice(0, 30))
  const wrapped = formatUsage({ SOME_VARIABLE: { help: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '), default: '1' } }, NOTHING_ELSE)
  const entry = wrapped.split('\n').filter((line) => line.includes('word') || line.includes('(default'))
  t.ok(entry.length >= 3, 'three lines or more')
  for (const line of entry.slice(1)) t.match(line, /^ {26}\S/, 'continued in column 26')
  t.match(entry.at(-1), /word39 \(default 1\)$/)
})
