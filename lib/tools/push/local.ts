// The version `svc push` uploads, read from its directory and checked as the service will check it
// on load, before anything is written: DIR holds the files of one runtime (runtime.ts: model.json
// for the kernel, model.onnx and its optional metadata.json and profile.json for ONNX), and the
// description they make is of the model and version it is pushed as, which the registry requires
// of a version's path (registry/snapshot.ts, checkPlace). A runtime's `read` is pure, so nothing
// here starts onnxruntime. model.json is uploaded signed, as `svc sign` writes it, and DIR's own
// file is left as it is.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { errorMessage } from '../../core/errors.js'
import { KERNEL_PLATFORM } from '../../models/kernel/runtime.js'
import type { Place, Runtime } from '../../models/runtime.js'
import { readArtifactText } from '../sign/sign.js'
import { PushError } from './errors.js'

export type LocalVersion = Readonly<{
  runtime: Runtime
  /** File name → the bytes to upload, in upload order: the runtime's files, then the optional ones DIR holds. */
  files: ReadonlyMap<string, Buffer>
  /** DIR's other entries, sorted: not uploaded. */
  ignored: readonly string[]
  /** What the user should know of an upload that differs from DIR's file (model.json signed), one line each. */
  notes: readonly string[]
}>

const invalid = (why: string): never => {
  throw new PushError('INVALID_VERSION_DIR', why)
}

/** The file that marks a version as the runtime's: its first (runtime.ts: it has one at least). */
const markOf = (runtime: Runtime): string => String(runtime.files[0])

/** The one runtime whose mark DIR holds. */
const runtimeOf = (dir: string, names: ReadonlySet<string>, runtimes: readonly Runtime[]): Runtime => {
  const held = runtimes.filter((runtime) => names.has(markOf(runtime)))
  const firsts = (list: readonly Runtime[]): string => list.map((runtime) => `${markOf(runtime)} (${runtime.platform})`).join(' or ')
  const [runtime, other] = held
  if (runtime === undefined) return invalid(`${dir} holds no model: expected ${firsts(runtimes)}`)
  if (other !== undefined) return invalid(`${dir} holds ${firsts(held)}: a version is one model; keep the files of one`)
  return runtime
}

/** DIR's file as uploaded: model.json signed, as the service refuses one whose sha256 is not its content's. */
const uploaded = (runtime: Runtime, path: string, bytes: Buffer, notes: string[]): Buffer => {
  if (runtime.platform !== KERNEL_PLATFORM) return bytes
  let signed: ReturnType<typeof readArtifactText>
  try {
    signed = readArtifactText(bytes)
  } catch (error: unknown) {
    return invalid(`${path}: ${errorMessage(error)}`)
  }
  if (signed.stated !== signed.sha256)
    notes.push(`${path}: sha256 ${signed.stated} is not its content's; uploaded signed, sha256 ${signed.sha256} (svc sign ${path} signs the file itself)`)
  return Buffer.from(signed.text)
}

/** DIR's version, checked; PushError INVALID_VERSION_DIR naming the file and what is wrong. */
export const readVersionDir = async (dir: string, place: Place, runtimes: readonly Runtime[]): Promise<LocalVersion> => {
  let names: ReadonlySet<string>
  try {
    names = new Set(await readdir(dir))
  } catch (error: unknown) {
    return invalid(`${dir}: cannot read: ${errorMessage(error)}`)
  }
  const runtime = runtimeOf(dir, names, runtimes)
  const wanted = [...runtime.files, ...runtime.optional.filter((name) => names.has(name))]
  const files = new Map<string, Buffer>()
  const notes: string[] = []
  for (const name of wanted) {
    const path = join(dir, name)
    let bytes: Buffer
    try {
      bytes = await readFile(path)
    } catch (error: unknown) {
      return invalid(`${path}: cannot read: ${errorMessage(error)}`)
    }
    files.set(name, uploaded(runtime, path, bytes, notes))
  }
  const first = join(dir, markOf(runtime))
  let described: Place
  try {
    described = runtime.read(
      [...runtime.files, ...runtime.optional].map((name) => files.get(name)),
      place,
    ).model
  } catch (error: unknown) {
    return invalid(`${first}: ${errorMessage(error)}`)
  }
  if (described.name !== place.name || described.version !== place.version) {
    invalid(
      `${first} is model ${JSON.stringify(described.name)} version ${JSON.stringify(described.version)}, ` +
        `pushed as model ${JSON.stringify(place.name)} version ${JSON.stringify(place.version)}: the service refuses a version stored under another's name`,
    )
  }
  return { runtime, files, ignored: [...names].filter((name) => !files.has(name)).sort(), notes }
}
