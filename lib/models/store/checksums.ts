// A version's checksums.json, written by `svc push` beside the files it uploads
// (`<model>/<version>/checksums.json`): each other file's SHA-256, so a load verifies what it read
// whatever the store. model.json carries its own sha256 too; the ONNX files (model.onnx,
// metadata.json, profile.json) carry none. S3's `x-amz-checksum-sha256` would cover the bucket
// alone, and moto (the tests' S3) neither stores nor returns it; a file covers every store, a
// directory or an HTTP server publishing what was pushed included. Its members are checked as
// strictly as a manifest's: a file named that the version lacks, or bytes that differ, fail the
// version as a wrong sha256 does.
//
//   {"sha256": {"model.onnx": "<64 hex digits>", "metadata.json": "…"}}
import { createHash } from 'node:crypto'
import { errorMessage } from '../../core/errors.js'
import { isObject, parseJson } from '../../core/json.js'
import { StoreError } from './error.js'
import { isSegment } from './path.js'

/** The file's name in a version's directory. */
export const CHECKSUMS_FILE = 'checksums.json'

/** File name → hex SHA-256 of its bytes. */
export type Checksums = ReadonlyMap<string, string>

const HEX_SHA256 = /^[0-9a-f]{64}$/

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/** The bytes of a checksums.json for `files` (name → bytes), names sorted, as `svc push` writes it. */
export const formatChecksums = (files: ReadonlyMap<string, Uint8Array>): Buffer => {
  const sha256: Record<string, string> = {}
  for (const [name, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) sha256[name] = sha256Hex(bytes)
  return Buffer.from(`${JSON.stringify({ sha256 }, null, 2)}\n`)
}

/** A checksums.json's entries; CHECKSUM_MISMATCH naming `path` when it is not one. */
export const parseChecksums = (bytes: Uint8Array, path: string): Checksums => {
  const invalid = (why: string): never => {
    throw new StoreError('CHECKSUM_MISMATCH', `${path} is not {"sha256": {"<file>": "<hex sha256>", …}}: ${why}`)
  }
  let document: unknown
  try {
    document = parseJson(bytes)
  } catch (error: unknown) {
    invalid(errorMessage(error))
  }
  if (!isObject(document) || Object.keys(document).some((key) => key !== 'sha256') || !isObject(document['sha256'])) return invalid('its members')
  const entries = new Map<string, string>()
  for (const [name, digest] of Object.entries(document['sha256'])) {
    if (!isSegment(name) || name === CHECKSUMS_FILE) invalid(`${JSON.stringify(name)} is not a file of the version`)
    if (typeof digest !== 'string' || !HEX_SHA256.test(digest)) invalid(`${name}: ${JSON.stringify(digest)} is not 64 lower-case hex digits`)
    if (typeof digest === 'string') entries.set(name, digest)
  }
  return entries
}

/**
 * Throws CHECKSUM_MISMATCH unless every file of `files` (name → bytes, an absent optional file
 * undefined) that `checksums` names was read with those bytes. A file it does not name is not
 * checked (a version published by hand carries no checksums.json at all), nor one it names that
 * the runtime does not read.
 */
export const verifyChecksums = (checksums: Checksums, files: ReadonlyMap<string, Uint8Array | undefined>, dir: string): void => {
  for (const [name, expected] of checksums) {
    if (!files.has(name)) continue
    const bytes = files.get(name)
    if (bytes === undefined)
      throw new StoreError('CHECKSUM_MISMATCH', `${dir}${name} is recorded in ${dir}${CHECKSUMS_FILE} but the version holds no such file`)
    const actual = sha256Hex(bytes)
    if (actual !== expected)
      throw new StoreError(
        'CHECKSUM_MISMATCH',
        `${dir}${name} hashes to sha256 ${actual}, not the ${expected} recorded in ${dir}${CHECKSUMS_FILE} when it was pushed`,
      )
  }
}
