// `svc push`: a model version's files uploaded from a directory to a model store and listed in its
// manifest (push.ts), into the directory or bucket named by --store or SVC_MODEL_STORE (store.ts).
//
//   svc push DIR --model NAME --version V [--store DIR|s3://BUCKET/PREFIX]
//
// Exit status: 0 pushed, or already there byte for byte; 1 a store failure, the version already
// pushed with other files, or a manifest that is invalid or kept changing; 2 a bad command line or a
// DIR that is no version svc serves.
import { parseArgs } from 'node:util'
import { argsProblem } from '../../core/args.js'
import { errorMessage } from '../../core/errors.js'
import type { Env } from '../../config/config.js'
import { PUSH_EXIT_STATUS, PushError } from './errors.js'
import { pushVersion, type PushIo } from './push.js'
import { openPushStore } from './store.js'

export type PushCommandIo = PushIo & Readonly<{ env: Env }>

export const PUSH_USAGE = `Usage: svc push DIR --model NAME --version V [--store DIR|s3://BUCKET/PREFIX]

Uploads a model version's files from DIR to a model store, then lists the version in the model's
manifest.json, so the service loads it on its next reload pass; the default version is left as it
is. DIR holds one model: model.json (svc's kernel), or model.onnx and, optionally, metadata.json and
profile.json. Before anything is written they are checked as svc checks them on load, a
model.json's name and version against --model and --version. model.json goes up signed, as svc sign
writes it (DIR's file is left as it is); beside the files goes checksums.json, their sha256, which
svc verifies on each load. DIR's other files are named on stderr and left behind.
  --model NAME     the model: NAME/ in the store
  --version V      the version: NAME/V/ in the store; letters, digits, ".", "_" and "-", starting
                   with a letter or digit, at most 64
  --store STORE    the store, as SVC_MODEL_STORE names it: a directory, a file:///path URL or
                   s3://bucket/prefix, reached with the S3 and AWS variables svc reads (default:
                   SVC_MODEL_STORE; never the artifacts shipped with svc). An http(s):// store is
                   read-only: push to the directory or bucket it publishes
A version is immutable: a file is written only where there is none. Pushing a version again with the
same files writes nothing and exits 0; with other bytes, or without a file the store holds for it,
it is refused before anything is written. The manifest is written only if unchanged since it was
read, so pushes racing each other all land: it is read and written again, up to 8 times.
Exit status: 0 pushed, or already there; 1 a store failure, the version already pushed with other
files, or a manifest that is invalid or kept changing; 2 a bad command line, or a DIR that is no
model version svc serves.
`

const OPTIONS = { model: { type: 'string' }, version: { type: 'string' }, store: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const

const usageError = (message: string): PushError => new PushError('INVALID_ARGUMENTS', message)

/** The parsed command line; PushError INVALID_ARGUMENTS for one parseArgs refuses. */
const parse = (argv: readonly string[]) => {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true })
  } catch (error: unknown) {
    throw usageError(argsProblem(error))
  }
}

/** `svc push …` from its arguments to its exit status. */
export const runPushCommand = async (argv: readonly string[], io: PushCommandIo): Promise<number> => {
  try {
    const { values, positionals } = parse(argv)
    if (values.help === true) {
      io.stdout(PUSH_USAGE)
      return 0
    }
    const [dir, ...more] = positionals
    if (dir === undefined) throw usageError("name the version's directory: svc push DIR --model NAME --version V")
    if (more.length > 0) throw usageError(`one DIR at a time, not ${positionals.join(', ')}`)
    if (values.model === undefined) throw usageError('--model is required')
    if (values.version === undefined) throw usageError('--version is required')
    await pushVersion(openPushStore(values.store, io.env), { dir, model: values.model, version: values.version }, io)
    return 0
  } catch (error: unknown) {
    const isUsage = error instanceof PushError && error.code === 'INVALID_ARGUMENTS'
    io.stderr(`svc push: ${errorMessage(error)}\n${isUsage ? 'svc push --help lists the options.\n' : ''}`)
    return error instanceof PushError ? PUSH_EXIT_STATUS[error.code] : 1
  }
}
