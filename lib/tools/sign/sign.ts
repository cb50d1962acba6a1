// What `svc sign` does to one artifact document (lib/models/artifact.ts): its sha256 written in,
// and the file laid out as svc's own artifacts are, so signing an untouched artifact changes no
// byte; or, for --check, whether the sha256 it states is the one its content hashes to.
import { errorMessage } from '../../core/errors.js'
import { isObject, type JsonObject, parseJson } from '../../core/json.js'
import { ArtifactError, artifactSha256, parseArtifact, serialiseArtifact } from '../../models/artifact.js'

const parse = (bytes: Buffer): JsonObject => {
  let value: unknown
  try {
    value = parseJson(bytes)
  } catch (error: unknown) {
    throw new ArtifactError('INVALID_JSON', '(document)', `is not UTF-8 JSON: ${errorMessage(error)}`)
  }
  if (!isObject(value)) throw new ArtifactError('INVALID_SCHEMA', '(document)', 'must be a JSON object')
  return value
}

/**
 * The file as `svc sign` reads it: the sha256 it states (`(none)` without one), the one its content
 * hashes to, and the signed text: the sha256 member where it was, else last, as training writes it.
 * The signed document is checked as svc checks an artifact on load, so a file svc would refuse for
 * another reason is refused here, naming the member, and a right hash on it is no pass. Throws
 * ArtifactError.
 */
export const readArtifactText = (bytes: Buffer): Readonly<{ stated: string; sha256: string; text: string }> => {
  const document = parse(bytes)
  const sha256 = artifactSha256(document)
  const stated = typeof document['sha256'] === 'string' ? document['sha256'] : '(none)'
  return { stated, sha256, text: serialiseArtifact(parseArtifact(JSON.stringify({ ...document, sha256 }))) }
}
