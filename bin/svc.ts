#!/usr/bin/env node
// svc: a command (loadgen, profile, sign, help), help or version, else serve (lib/process/start.ts).
//   0 stopped cleanly · 1 start-up or runtime failure · 2 invalid configuration or an unknown command
//   128+n when a second signal n cuts a graceful shutdown short
import { errorMessage } from '../lib/core/errors.js'
import { USAGE } from '../lib/process/config/config.js'
import { type CommandName, unknownCommand } from '../lib/process/config/usage.js'
import { LoadgenUsageError } from '../lib/tools/loadgen/errors.js'
import { isCleanRun, LOADGEN_USAGE, parseLoadgenArgs, runLoadgen } from '../lib/tools/loadgen/loadgen.js'
import { PROFILE_USAGE, runProfileCommand } from '../lib/tools/profile/command.js'
import { ProfileInputError } from '../lib/tools/profile/errors.js'
import { runSignCommand, SIGN_USAGE } from '../lib/tools/sign/command.js'
import { start } from '../lib/process/start.js'
import { VERSION } from '../lib/process/version.js'

/** What `svc help COMMAND` prints: the command's own --help. */
const USAGE_OF: Readonly<Record<CommandName, string>> = { loadgen: LOADGEN_USAGE, profile: PROFILE_USAGE, sign: SIGN_USAGE, help: USAGE }

const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text)
/** Where profile and sign write. */
const STDIO = { stdout: write(process.stdout), stderr: write(process.stderr) }

/** `svc loadgen …`: 0 when every request succeeded (and every label was accepted), 1 otherwise, 2 for a bad command line or rows file. */
const loadgen = async (argv: readonly string[]): Promise<void> => {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(LOADGEN_USAGE)
  const write = (line: string): void => void process.stdout.write(`${line}\n`)
  try {
    const summary = await runLoadgen(parseLoadgenArgs(argv), write)
    process.exitCode = isCleanRun(summary) ? 0 : 1
  } catch (error: unknown) {
    const isUsage = error instanceof LoadgenUsageError
    process.stderr.write(`svc loadgen: ${errorMessage(error)}\n${isUsage ? 'svc loadgen --help lists the options.\n' : ''}`)
    process.exitCode = isUsage || error instanceof ProfileInputError ? 2 : 1
  }
}

/** A first argument that is no option and no command: the nearest command, when one is near, and exit 2. */
const unknown = (word: string): void => {
  process.stderr.write(unknownCommand(word))
  process.exitCode = 2
}

/** `svc help [COMMAND]`: svc's usage, or the command's. */
const help = ([name]: readonly string[]): void => {
  if (name === undefined || name.startsWith('-')) return void process.stdout.write(USAGE)
  if (Object.hasOwn(USAGE_OF, name)) return void process.stdout.write(USAGE_OF[name as CommandName])
  unknown(name)
}

const main = async (argv: readonly string[]): Promise<void> => {
  const [first, ...rest] = argv
  if (first === 'loadgen') return loadgen(rest)
  if (first === 'profile') return void (process.exitCode = await runProfileCommand(rest, STDIO))
  if (first === 'sign') return void (process.exitCode = await runSignCommand(rest, STDIO))
  if (first === 'help') return help(rest)
  if (first !== undefined && !first.startsWith('-')) return unknown(first)
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(USAGE)
  if (argv.includes('--version') || argv.includes('-V') || argv.includes('-v')) return void process.stdout.write(`${VERSION}\n`)
  await start({ argv, env: process.env })
}

await main(process.argv.slice(2))
