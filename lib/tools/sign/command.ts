// `svc sign`: the sha256 of a model artifact (model.json) written into it after an edit by hand,
// such as a new version copied from the last one, or with --check only verified.
//
//   svc sign FILE… [--check]
//
// Every file is handled, whatever befell the one before; the exit status is the worst of them:
// 0 signed (or right), 1 a sha256 is wrong (--check) or a file could not be written, 2 a bad
// command line or a file that is missing, not JSON or no artifact svc serves.
import { readFile } from 'node:fs/promises'
import { writeWhole } from '../write-whole.js'
import { extname } from 'node:path'
import { parseArgs } from 'node:util'
import { argsProblem } from '../../core/args.js'
import { errorMessage } from '../../core/errors.js'
import { ArtifactError } from '../../models/artifact.js'
import { readArtifactText } from './sign.js'

export type SignIo = Readonly<{ stdout: (text: string) => void; stderr: (text: string) => void }>

export const SIGN_USAGE = `Usage: svc sign FILE… [--check]

Writes into each model artifact (a model.json) the sha256 svc checks when it loads one: of the
file's content without its sha256 member, whitespace and member order aside (lib/README.md §10).
Run it after editing an artifact by hand. Each file is first checked as svc checks it on load, and
rewritten only when its bytes change, as svc writes artifacts: two-space JSON, members in their
order, a final newline. An artifact already signed is left as it is, byte for byte.
  --check     write nothing: name each file whose sha256 is wrong, and exit 1 if any is
ONNX versions (model.onnx, metadata.json, profile.json) carry no sha256 to sign: svc hashes their
files as it loads them, and that hash is what it shows.
Exit status: 0 every file signed or, with --check, right; 1 a sha256 wrong (--check) or a file not
written; 2 a bad command line, or a file missing, not JSON, or no model artifact.
`

/** Signs or checks one file; its exit status. */
const signFile = async (file: string, isChecking: boolean, io: SignIo): Promise<number> => {
  const refuse = (reason: string, status: number): number => {
    io.stderr(`svc sign: ${file}: ${reason}\n`)
    return status
  }
  if (extname(file).toLowerCase() === '.onnx') return refuse('an ONNX graph carries no sha256: svc hashes its files as it loads them', 2)
  let bytes: Buffer
  try {
    bytes = await readFile(file)
  } catch (error: unknown) {
    return refuse(`cannot read: ${errorMessage(error)}`, 2)
  }
  let read: ReturnType<typeof readArtifactText>
  try {
    read = readArtifactText(bytes)
  } catch (error: unknown) {
    const isJsonFault = error instanceof ArtifactError && error.code === 'INVALID_JSON'
    return refuse(isJsonFault ? errorMessage(error) : `not a model artifact svc serves: ${errorMessage(error)}`, 2)
  }
  const { stated, sha256, text } = read
  if (isChecking) {
    if (stated !== sha256) return refuse(`sha256 is wrong: the file states ${stated}, its content hashes to ${sha256} (svc sign ${file} writes it)`, 1)
    io.stdout(`${file}: sha256 ${sha256} is right\n`)
    return 0
  }
  if (bytes.equals(Buffer.from(text))) {
    io.stdout(`${file}: sha256 ${sha256}, unchanged\n`)
    return 0
  }
  try {
    await writeWhole(file, text)
  } catch (error: unknown) {
    return refuse(`cannot write: ${errorMessage(error)}`, 1)
  }
  io.stdout(`${file}: sha256 ${sha256}, written${stated === sha256 ? '' : ` (was ${stated})`}\n`)
  return 0
}

/** `svc sign …` from its arguments to its exit status. */
export const runSignCommand = async (argv: readonly string[], io: SignIo): Promise<number> => {
  let parsed: Readonly<{ values: Readonly<{ check?: boolean; help?: boolean }>; positionals: readonly string[] }>
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { check: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    })
  } catch (error: unknown) {
    io.stderr(`svc sign: ${argsProblem(error)}\nsvc sign --help lists the options.\n`)
    return 2
  }
  if (parsed.values.help === true) {
    io.stdout(SIGN_USAGE)
    return 0
  }
  if (parsed.positionals.length === 0) {
    io.stderr('svc sign: name at least one model.json to sign\nsvc sign --help lists the options.\n')
    return 2
  }
  let status = 0
  for (const file of parsed.positionals) status = Math.max(status, await signFile(file, parsed.values.check === true, io))
  return status
}
