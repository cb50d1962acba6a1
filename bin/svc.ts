#!/usr/bin/env node
// svc: a subcommand (loadgen, profile), help or version, else serve (lib/start.ts).
//   0 stopped cleanly · 1 start-up or runtime failure · 2 invalid configuration
//   128+n when a second signal n cuts a graceful shutdown short
import { USAGE } from '../lib/config.js'
import { LoadgenUsageError } from '../lib/loadgen/errors.js'
import { LOADGEN_USAGE, parseLoadgenArgs, runLoadgen } from '../lib/loadgen/loadgen.js'
import { ProfileInputError } from '../lib/profile/errors.js'
import { runProfileCommand } from '../lib/profile/command.js'
import { start } from '../lib/start.js'
import { VERSION } from '../lib/version.js'

/** `svc loadgen …`: 0 when every request succeeded, 1 otherwise, 2 for a bad command line or rows file. */
const loadgen = async (argv: readonly string[]): Promise<void> => {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(LOADGEN_USAGE)
  const write = (line: string): void => void process.stdout.write(`${line}\n`)
  try {
    const summary = await runLoadgen(parseLoadgenArgs(argv), write)
    process.exitCode = summary.failed === 0 && summary.skipped === 0 ? 0 : 1
  } catch (error: unknown) {
    const isUsage = error instanceof LoadgenUsageError
    process.stderr.write(`svc loadgen: ${(error as Error).message}\n${isUsage ? 'svc loadgen --help lists the options.\n' : ''}`)
    process.exitCode = isUsage || error instanceof ProfileInputError ? 2 : 1
  }
}

const main = async (argv: readonly string[]): Promise<void> => {
  if (argv[0] === 'loadgen') return loadgen(argv.slice(1))
  if (argv[0] === 'profile') {
    const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text)
    process.exitCode = await runProfileCommand(argv.slice(1), { stdout: write(process.stdout), stderr: write(process.stderr) })
    return
  }
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(USAGE)
  if (argv.includes('--version') || argv.includes('-V')) return void process.stdout.write(`${VERSION}\n`)
  await start({ argv, env: process.env })
}

await main(process.argv.slice(2))
