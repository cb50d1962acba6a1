// Feedback tokens (lib/README.md §10): one per answered row, self-contained and tamper-evident, so a
// label sent back to any instance of a fleet that shares the secret is scored there without shared
// state. A token names the model, the version that answered and its build, and carries the row's
// answer, the time and a unique id; never an input value.
//
// Layout (bytes, then base64url):
//   0     format (TOKEN_FORMAT)            the first 16 bytes are the MAC's first block, B1
//   1-4   time, whole seconds (uint32 BE)
//   5-12  request nonce: 2 random bytes per process, then a 48-bit counter
//   13-15 row index (uint24 BE)
//   then  model name, version (each a length byte and UTF-8), build (6 bytes: the sha256 prefix),
//         the answer (a class index, uint16 BE, or a regressor's float64 BE), the tag (12 bytes)
//
// The MAC is CBC-MAC over exactly two blocks under an AES-128 key derived per version build
// (HKDF-SHA256 from the fleet secret, with a purpose string naming the format, model, version and
// build): B1 above, and B2 = the answer as a float64, the answer's kind, zeros. CBC-MAC is a secure
// PRF on messages of one fixed length, and a key is only ever used on 32-byte messages. The key
// binds the model, version and build, the answer's kind in B2 keeps a class index from passing as a
// value. The tag is the first 96 bits, compared in constant time.
//
// Cost: one ECB pass over every row's B1, then one over every row's B2, on a cipher object kept per
// version (ECB keeps no state between blocks, so the object is reused without `final()`): two
// calls a request whatever the batch. One HMAC per row cost 2.8 µs here; the two passes ~1.1 µs for
// one row, ~1.6 µs for 64 (Node 20, in process).
import { createCipheriv, hkdfSync, randomBytes, timingSafeEqual, type Cipher } from 'node:crypto'
import { seenId } from './seen.js'

export const TOKEN_FORMAT = 1
const BLOCK = 16
const BUILD_BYTES = 6
const TAG_BYTES = 12
const CLASS_BYTES = 2
const VALUE_BYTES = 8
const KIND_CLASS = 1
const KIND_VALUE = 2
// The row index is 24 bits: SVC_MAX_BATCH is at most 100 000, far below 2^24.
/** Longest model name or version in a token, in UTF-8 bytes: one length byte each. */
export const MAX_NAME_BYTES = 255
/** Longer text is no token: a 255-byte name and version come to under 700 characters. */
const MAX_TOKEN_CHARS = 700
const BASE64URL = /^[A-Za-z0-9_-]+$/

/** What a version's tokens carry about it, and the key that signs them. */
export type VersionKey = Readonly<{
  model: string
  version: string
  /** The first 12 hex characters of the build's sha256. */
  build: string
  kind: 'class' | 'value'
  cipher: Cipher
  /** The bytes after B1 and before the answer: the names and the build. */
  middle: Buffer
}>

/** A token's content once its tag checks. */
export type TokenClaims = Readonly<{
  model: string
  version: string
  build: string
  kind: 'class' | 'value'
  /** A class index, or a regressor's value. */
  answer: number
  /** When the row was answered, in whole seconds since the epoch. */
  issuedS: number
  /** Unique to the token: 48 bits of its tag (seen.ts). */
  id: number
}>

/** Why a text is not a token of this fleet. */
export type TokenFault = 'invalid_token'

const info = (model: string, version: string, build: string): Buffer =>
  Buffer.from(`svc feedback token v${TOKEN_FORMAT}\0${model}\0${version}\0${build}`, 'utf8')

const aesKey = (secret: Buffer, model: string, version: string, build: string): Buffer =>
  Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info(model, version, build), 16))

const ecb = (key: Buffer): Cipher => {
  const cipher = createCipheriv('aes-128-ecb', key, null)
  cipher.setAutoPadding(false)
  return cipher
}

const middleOf = (model: string, version: string, build: string): Buffer | undefined => {
  const name = Buffer.from(model, 'utf8')
  const ver = Buffer.from(version, 'utf8')
  if (name.length > MAX_NAME_BYTES || ver.length > MAX_NAME_BYTES || !/^[0-9a-f]{12}$/.test(build)) return undefined
  return Buffer.concat([Buffer.from([name.length]), name, Buffer.from([ver.length]), ver, Buffer.from(build, 'hex')])
}

/** The key of one version build under `secret`, or undefined when a name is too long to carry. */
export const versionKey = (secret: Buffer, model: string, version: string, build: string, kind: 'class' | 'value'): VersionKey | undefined => {
  const middle = middleOf(model, version, build)
  if (middle === undefined) return undefined
  return Object.freeze({ model, version, build, kind, cipher: ecb(aesKey(secret, model, version, build)), middle })
}

/**
 * Request nonces: 2 random bytes per process, then a 48-bit counter from a random start. Two
 * processes repeat a nonce only if both draw the same prefix and their counters meet.
 */
const NONCE_SPACE = 2 ** 48
const nonces = { prefix: randomBytes(2).readUInt16BE(0), counter: randomBytes(6).readUIntBE(0, 6) }

/** Scratch blocks reused by every request (synchronous use only), grown to the largest batch. */
let firsts = Buffer.alloc(BLOCK * 64)
let seconds = Buffer.alloc(BLOCK * 64)
const ensure = (rows: number): void => {
  if (firsts.length >= rows * BLOCK) return
  firsts = Buffer.alloc(rows * BLOCK)
  seconds = Buffer.alloc(rows * BLOCK)
}
/** One token's bytes (the longest a token can be), and the JSON array text of a request's tokens, reused likewise. */
const raw = Buffer.alloc(BLOCK + 2 * (1 + MAX_NAME_BYTES) + BUILD_BYTES + VALUE_BYTES + TAG_BYTES)
let text = Buffer.alloc(4096)

/** base64url's alphabet (RFC 4648 §5), as the byte of each character. */
const ALPHABET = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1')
// `a[i]` for an index the caller keeps in range, which noUncheckedIndexedAccess cannot see: this
// module's only numeric assertions, one per array type so that each stays monomorphic when inlined.
const byteAt = (bytes: Buffer, i: number): number => bytes[i] as number
const valueAt = (values: ArrayLike<number>, i: number): number => values[i] as number
const char = (sextet: number): number => byteAt(ALPHABET, sextet & 63)

/** Writes `bytes[0, size)` as unpadded base64url into `out` at `at`; returns the offset after it. */
const encode = (bytes: Buffer, size: number, out: Buffer, at: number): number => {
  let o = at
  let i = 0
  for (; i + 3 <= size; i += 3) {
    const n = (byteAt(bytes, i) << 16) | (byteAt(bytes, i + 1) << 8) | byteAt(bytes, i + 2)
    out[o] = char(n >>> 18)
    out[o + 1] = char(n >>> 12)
    out[o + 2] = char(n >>> 6)
    out[o + 3] = char(n)
    o += 4
  }
  if (i === size) return o
  const n = (byteAt(bytes, i) << 16) | (i + 1 < size ? byteAt(bytes, i + 1) << 8 : 0)
  out[o] = char(n >>> 18)
  out[o + 1] = char(n >>> 12)
  if (i + 1 === size) return o + 2
  out[o + 2] = char(n >>> 6)
  return o + 3
}

/** B1 up to the row index: the same for every row of a request. */
const ROW_AT = 13

const writeHead = (block: Buffer, issuedS: number, prefix: number, counter: number): void => {
  block[0] = TOKEN_FORMAT
  block.writeUInt32BE(issuedS, 1)
  block.writeUInt16BE(prefix, 5)
  block.writeUIntBE(counter, 7, 6)
}

const writeRow = (block: Buffer, offset: number, row: number): void => {
  block[offset + ROW_AT] = row >>> 16
  block[offset + ROW_AT + 1] = (row >>> 8) & 0xff
  block[offset + ROW_AT + 2] = row & 0xff
}

const writeSecond = (block: Buffer, offset: number, answer: number, kind: number): void => {
  block.writeDoubleBE(answer, offset)
  block[offset + 8] = kind
  for (let i = offset + 9; i < offset + BLOCK; i++) block[i] = 0
}

/** CBC-MAC of the 2-block messages held in `firsts`/`seconds` for `rows` rows: E(E(B1) ⊕ B2) per row. */
const macs = (cipher: Cipher, rows: number): Buffer => {
  const size = rows * BLOCK
  const chained = cipher.update(firsts.subarray(0, size))
  for (let i = 0; i < size; i++) seconds[i] = byteAt(seconds, i) ^ byteAt(chained, i)
  return cipher.update(seconds.subarray(0, size))
}

const QUOTE = 0x22
const COMMA = 0x2c

/**
 * hot path: the tokens of `rows` answers, as the JSON array text of their strings. `answers` holds a
 * class index (a classifier's labels) or a value per row.
 *
 * The rows' tokens differ only in the row index, the answer and the tag: the rest of a token is
 * written once, and every token is encoded into one byte buffer turned into a string once. A
 * `toString('base64url')` and a string join per token, and `Buffer.copy` for each row's 16 and 12
 * bytes, took 29.7 µs at batch 64; this takes 14.1 (Node 20, in process, one after the other; test/bench/README.md).
 */
export const mintTokens = (key: VersionKey, answers: ArrayLike<number>, rows: number, issuedS: number): string => {
  nonces.counter = (nonces.counter + 1) % NONCE_SPACE
  const kind = key.kind === 'class' ? KIND_CLASS : KIND_VALUE
  ensure(rows)
  writeHead(firsts, issuedS, nonces.prefix, nonces.counter)
  for (let r = 0; r < rows; r++) {
    const at = r * BLOCK
    if (r > 0) for (let i = 0; i < ROW_AT; i++) firsts[at + i] = byteAt(firsts, i)
    writeRow(firsts, at, r)
    writeSecond(seconds, at, valueAt(answers, r), kind)
  }
  const tags = macs(key.cipher, rows)
  const { middle } = key
  const answerAt = BLOCK + middle.length
  const tagAt = answerAt + (kind === KIND_CLASS ? CLASS_BYTES : VALUE_BYTES)
  const size = tagAt + TAG_BYTES
  firsts.copy(raw, 0, 0, ROW_AT)
  middle.copy(raw, BLOCK)
  // Each token: its characters, two quotes and a comma (the last one's is the closing bracket).
  const length = rows * (Math.ceil((size * 4) / 3) + 3) + 1
  if (text.length < length) text = Buffer.alloc(length)
  text[0] = 0x5b
  let o = 1
  for (let r = 0; r < rows; r++) {
    const at = r * BLOCK
    raw[ROW_AT] = byteAt(firsts, at + ROW_AT)
    raw[ROW_AT + 1] = byteAt(firsts, at + ROW_AT + 1)
    raw[ROW_AT + 2] = byteAt(firsts, at + ROW_AT + 2)
    if (kind === KIND_CLASS) raw.writeUInt16BE(valueAt(answers, r), answerAt)
    else raw.writeDoubleBE(valueAt(answers, r), answerAt)
    for (let i = 0; i < TAG_BYTES; i++) raw[tagAt + i] = byteAt(tags, at + i)
    text[o] = QUOTE
    o = encode(raw, size, text, o + 1)
    text[o] = QUOTE
    text[o + 1] = COMMA
    o += 2
  }
  text[o - 1] = 0x5d
  return text.toString('latin1', 0, o)
}

/** The parts of a token's bytes, before its tag is checked; undefined when they are not a token's. */
type Parsed = Readonly<{ bytes: Buffer; model: string; version: string; build: string; answerAt: number; kind: 'class' | 'value' }>

const parse = (text: string): Parsed | undefined => {
  if (text.length > MAX_TOKEN_CHARS || !BASE64URL.test(text)) return undefined
  const bytes = Buffer.from(text, 'base64url')
  if (bytes.length < BLOCK + 2 || bytes[0] !== TOKEN_FORMAT) return undefined
  const nameLength = byteAt(bytes, BLOCK)
  const versionAt = BLOCK + 1 + nameLength
  if (versionAt >= bytes.length) return undefined
  const versionLength = byteAt(bytes, versionAt)
  const buildAt = versionAt + 1 + versionLength
  const answerAt = buildAt + BUILD_BYTES
  const answerBytes = bytes.length - answerAt - TAG_BYTES
  if (answerBytes !== CLASS_BYTES && answerBytes !== VALUE_BYTES) return undefined
  return {
    bytes,
    model: bytes.toString('utf8', BLOCK + 1, versionAt),
    version: bytes.toString('utf8', versionAt + 1, buildAt),
    build: bytes.toString('hex', buildAt, answerAt),
    answerAt,
    kind: answerBytes === CLASS_BYTES ? 'class' : 'value',
  }
}

/** The tag `key` gives a parsed token's content. */
const expectedTag = (key: VersionKey, parsed: Parsed, answer: number): Buffer => {
  parsed.bytes.copy(firsts, 0, 0, BLOCK)
  writeSecond(seconds, 0, answer, parsed.kind === 'class' ? KIND_CLASS : KIND_VALUE)
  return macs(key.cipher, 1).subarray(0, TAG_BYTES)
}

/** The keys to try for a token's version: the current secret's, then a previous one's during a rotation. */
export type KeyRing = (model: string, version: string, build: string, kind: 'class' | 'value') => readonly VersionKey[]

/** A token's claims when its tag checks under one of the ring's keys, else why not. */
export const readToken = (text: string, keys: KeyRing): TokenClaims | TokenFault => {
  const parsed = parse(text)
  if (parsed === undefined) return 'invalid_token'
  const { bytes, answerAt, kind } = parsed
  const answer = kind === 'class' ? bytes.readUInt16BE(answerAt) : bytes.readDoubleBE(answerAt)
  const tag = bytes.subarray(bytes.length - TAG_BYTES)
  for (const key of keys(parsed.model, parsed.version, parsed.build, kind)) {
    if (!timingSafeEqual(expectedTag(key, parsed, answer), tag)) continue
    return {
      model: parsed.model,
      version: parsed.version,
      build: parsed.build,
      kind,
      answer,
      issuedS: bytes.readUInt32BE(1),
      id: seenId(tag, 0),
    }
  }
  return 'invalid_token'
}
