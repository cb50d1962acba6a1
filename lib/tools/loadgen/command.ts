// `svc loadgen …` from its arguments to its exit status, as `svc profile` and `svc sign` run: the
// run's lines on stdout, a failure in one line on stderr.
import { errorMessage } from '../../core/errors.js'
import { ProfileInputError } from '../profile/errors.js'
import { LoadgenUsageError } from './errors.js'
import { isCleanRun, LOADGEN_USAGE, parseLoadgenArgs, runLoadgen } from './loadgen.js'

export type LoadgenIo = Readonly<{ stdout: (text: string) => void; stderr: (text: string) => void }>

/** 0 when every request succeeded (and every label was accepted), 1 otherwise, 2 for a bad command line or rows file. */
export const runLoadgenCommand = async (argv: readonly string[], io: LoadgenIo): Promise<number> => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(LOADGEN_USAGE)
    return 0
  }
  try {
    return isCleanRun(await runLoadgen(parseLoadgenArgs(argv), (line) => io.stdout(`${line}\n`))) ? 0 : 1
  } catch (error: unknown) {
    const isUsage = error instanceof LoadgenUsageError
    io.stderr(`svc loadgen: ${errorMessage(error)}\n${isUsage ? 'svc loadgen --help lists the options.\n' : ''}`)
    return isUsage || error instanceof ProfileInputError ? 2 : 1
  }
}
