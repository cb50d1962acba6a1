// svc's command line, each command declared once: its name, what it takes and its line in
// `svc --help`, its own usage (`svc NAME --help`, `svc help NAME`), and its run, from its arguments
// to its exit status. Without a command svc serves (start.ts). bin/svc.ts runs `runSvc`, no more.
//   0 stopped cleanly, or the command did what was asked · 1 a start-up, runtime or command failure
//   2 invalid configuration, a bad command line or input, or an unknown command
//   128+n when a second signal n cuts a graceful shutdown short
import { runLoadgenCommand } from '../tools/loadgen/command.js'
import { LOADGEN_USAGE } from '../tools/loadgen/loadgen.js'
import { PROFILE_USAGE, runProfileCommand } from '../tools/profile/command.js'
import { PUSH_USAGE, runPushCommand } from '../tools/push/command.js'
import { runSignCommand, SIGN_USAGE } from '../tools/sign/command.js'
import type { Env } from '../config/config.js'
import { nearest } from '../config/nearest.js'
import { formatUsage } from '../config/usage.js'
import { VARIABLES } from '../config/variables.js'
import { start } from './start.js'
import { VERSION } from '../config/version.js'

/** What a command reads and writes beside its arguments. */
export type CommandIo = Readonly<{ env: Env; stdout: (text: string) => void; stderr: (text: string) => void }>

export type Command = Readonly<{
  /** The word after `svc`. */
  name: string
  /** What it takes, beside its name in `svc --help`. */
  args: string
  /** Its line in `svc --help`. */
  help: string
  /** What `svc NAME --help` and `svc help NAME` print. */
  usage: string
  /** From the arguments after the name to the exit status; a failure is a status, not a throw. */
  run: (argv: readonly string[], io: CommandIo) => number | Promise<number>
}>

/** An option of svc without a command that sets no variable: it prints its text, and svc exits 0. */
export type InfoOption = Readonly<{ flags: readonly string[]; help: string; text: () => string }>

/** In this order: with both, --help wins. */
export const INFO_OPTIONS: readonly InfoOption[] = [
  { flags: ['-h', '--help'], help: 'print this help and exit', text: () => USAGE },
  { flags: ['-v', '-V', '--version'], help: 'print the version and exit', text: () => `${VERSION}\n` },
]

/** `svc [options]`: what an option above asks for, else serve until a signal stops it. */
const serve = async (argv: readonly string[], io: CommandIo): Promise<number> => {
  const option = INFO_OPTIONS.find(({ flags }) => flags.some((flag) => argv.includes(flag)))
  if (option !== undefined) {
    io.stdout(option.text())
    return 0
  }
  await start({ argv, env: io.env })
  // A start that failed has set its status (2 or 1); a service that started runs on, and its shutdown sets its own.
  return Number(process.exitCode ?? 0)
}

/** Without a command: svc's own name stands where a command's would. */
export const SERVE: Omit<Command, 'name'> = {
  args: '[options]',
  help: 'serve, as the options and environment variables below set it',
  get usage() {
    return USAGE
  },
  run: serve,
}

/** The command a word names, or undefined after saying on stderr what the nearest is. */
const named = (word: string, io: CommandIo): Command | undefined => {
  const command = COMMANDS.find(({ name }) => name === word)
  if (command === undefined) io.stderr(unknownCommand(word))
  return command
}

/** `svc help [COMMAND]`: svc's usage, or the command's. */
const help = ([name]: readonly string[], io: CommandIo): number => {
  if (name === undefined || name.startsWith('-')) {
    io.stdout(USAGE)
    return 0
  }
  const command = named(name, io)
  if (command === undefined) return 2
  io.stdout(command.usage)
  return 0
}

/** svc's commands, in the order --help lists them. */
export const COMMANDS: readonly Command[] = [
  {
    name: 'loadgen',
    args: '--model NAME',
    help: 'prediction traffic for a running svc: real rows replayed, optionally shifted',
    usage: LOADGEN_USAGE,
    run: runLoadgenCommand,
  },
  { name: 'profile', args: '--input FILE', help: "the drift reference profile of a model's training rows", usage: PROFILE_USAGE, run: runProfileCommand },
  {
    name: 'push',
    args: 'DIR --model NAME',
    help: "upload a model version's files to a model store and list it in its manifest",
    usage: PUSH_USAGE,
    run: runPushCommand,
  },
  { name: 'sign', args: 'FILE…', help: 'write the sha256 into model artifacts edited by hand; --check verifies only', usage: SIGN_USAGE, run: runSignCommand },
  {
    name: 'help',
    args: '[COMMAND]',
    help: "print this help, or a command's, and exit",
    // svc's usage lists this table, so it is read once the table is built.
    get usage() {
      return USAGE
    },
    run: help,
  },
]

/** `svc --help`: the commands above, then the flags and variables of ./config/variables.ts with their defaults. */
export const USAGE = formatUsage(VARIABLES, {
  serve: { left: SERVE.args, help: SERVE.help },
  commands: COMMANDS.map(({ name, args, help }) => ({ left: `${name} ${args}`, help })),
  options: INFO_OPTIONS.map(({ flags, help }) => ({ left: flags.join(', '), help })),
})

/** What svc says, on stderr, to a first argument that is neither an option nor a command. */
export const unknownCommand = (word: string): string => {
  const near = nearest(
    word,
    COMMANDS.map(({ name }) => name),
  )
  return `svc: ${word} is not a command${near === undefined ? '' : `; did you mean svc ${near}?`}\nsvc --help lists the commands.\n`
}

/** svc's arguments to its exit status: the run of the command the first names, or without one SERVE's. */
export const runSvc = (argv: readonly string[], io: CommandIo): number | Promise<number> => {
  const [first, ...rest] = argv
  if (first === undefined || first.startsWith('-')) return SERVE.run(argv, io)
  return named(first, io)?.run(rest, io) ?? 2
}
