import t from 'tap'
import { createCipheriv, hkdfSync } from 'node:crypto'
import { MAX_NAME_BYTES, mintTokens, readToken, versionKey, type KeyRing, type VersionKey } from '../../../lib/serving/feedback/token.js'

const SECRET = Buffer.from('0123456789abcdef-fleet-secret')
const OTHER = Buffer.from('another-fleet-secret-0123456789')
const BUILD = 'db56651e8c11'

const key = (secret = SECRET, kind: 'class' | 'value' = 'class', model = 'iris', version = '1', build = BUILD): VersionKey =>
  versionKey(secret, model, version, build, kind) as VersionKey
const ringOf =
  (...keys: VersionKey[]): KeyRing =>
  (model, version, build) =>
    keys.filter((k) => k.model === model && k.version === version && k.build === build)
const tokensOf = (json: string): string[] => JSON.parse(json) as string[]

t.test('a token names its version and build and carries the row answer, the time and a unique id', async (t) => {
  const iris = key()
  const tokens = tokensOf(mintTokens(iris, Uint32Array.of(0, 2, 1), 3, 1_800_000_000))
  t.equal(tokens.length, 3)
  const claims = tokens.map((token) => readToken(token, ringOf(iris)))
  t.same(
    claims.map((c) => (typeof c === 'string' ? c : [c.model, c.version, c.build, c.kind, c.answer, c.issuedS])),
    [
      ['iris', '1', BUILD, 'class', 0, 1_800_000_000],
      ['iris', '1', BUILD, 'class', 2, 1_800_000_000],
      ['iris', '1', BUILD, 'class', 1, 1_800_000_000],
    ],
  )
  const ids = new Set(claims.map((c) => (typeof c === 'string' ? c : c.id)))
  t.equal(ids.size, 3, 'every row has its own id')
  const again = tokensOf(mintTokens(iris, Uint32Array.of(0), 1, 1_800_000_000))[0] as string
  t.not(again, tokens[0], 'the same answer in another request is another token')
})

t.test('a token for iris version 1 is under 120 characters, base64url only', async (t) => {
  const [token] = tokensOf(mintTokens(key(), Uint32Array.of(1), 1, 1_800_000_000)) as [string]
  t.ok(token.length < 120, `${token.length} characters`)
  t.match(token, /^[A-Za-z0-9_-]+$/)
})

t.test("a regressor's value is carried exactly, as float64", async (t) => {
  const cars = key(SECRET, 'value', 'cars')
  const values = Float64Array.of(23.456789012345677, -0.1, 1e-300)
  const claims = tokensOf(mintTokens(cars, values, 3, 1)).map((token) => readToken(token, ringOf(cars)))
  t.same(
    claims.map((c) => (typeof c === 'string' ? c : c.answer)),
    [...values],
  )
})

t.test('tokens of every length modulo 3 are base64url without padding, and read back', async (t) => {
  // iris 1 is 43 bytes; one and two more characters of name give the other two remainders.
  for (const model of ['iris', 'irisx', 'irisxy']) {
    const k = key(SECRET, 'class', model)
    const tokens = tokensOf(mintTokens(k, Uint32Array.of(0, 1, 2, 65535), 4, 1_800_000_000))
    const lengths = tokens.map((token) => Buffer.from(token, 'base64url').length)
    t.same(
      tokens.map((token) => Buffer.from(token, 'base64url').toString('base64url')),
      tokens,
      `${model}: ${lengths[0]} bytes`,
    )
    t.same(
      tokens.map((token) => {
        const claims = readToken(token, ringOf(k))
        return typeof claims === 'string' ? claims : claims.answer
      }),
      [0, 1, 2, 65535],
    )
  }
})

t.test('the tag is CBC-MAC over two blocks under the version key: checked against AES done by hand', async (t) => {
  const iris = key()
  const [token] = tokensOf(mintTokens(iris, Uint32Array.of(2), 1, 1_700_000_000)) as [string]
  const bytes = Buffer.from(token, 'base64url')
  const first = bytes.subarray(0, 16)
  const second = Buffer.alloc(16)
  second.writeDoubleBE(2, 0)
  second[8] = 1
  // The same key, derived again from the secret, through a fresh cipher.
  const aes = (block: Buffer): Buffer => {
    const k = Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), Buffer.from(`svc feedback token v1\0iris\x001\0${BUILD}`), 16))
    const c = createCipheriv('aes-128-ecb', k, null)
    c.setAutoPadding(false)
    return c.update(block)
  }
  const chained = aes(first)
  for (let i = 0; i < 16; i++) second[i] = (second[i] as number) ^ (chained[i] as number)
  t.same(bytes.subarray(bytes.length - 12), aes(second).subarray(0, 12))
})

t.test('any change to a token, another secret or another version makes it invalid', async (t) => {
  const iris = key()
  const [token] = tokensOf(mintTokens(iris, Uint32Array.of(1), 1, 1_800_000_000)) as [string]
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  let changed = 0
  for (let i = 0; i < token.length; i++) {
    const c = token[i] as string
    const other = alphabet[(alphabet.indexOf(c) + 1) % 64] as string
    const edited = token.slice(0, i) + other + token.slice(i + 1)
    // The last character's low bits may be padding that decodes to the same bytes.
    if (Buffer.from(edited, 'base64url').equals(Buffer.from(token, 'base64url'))) continue
    changed++
    t.equal(readToken(edited, ringOf(iris)), 'invalid_token', `character ${i}`)
  }
  t.ok(changed >= token.length - 1)
  t.equal(readToken(token, ringOf(key(OTHER))), 'invalid_token', "another fleet's secret")
  t.equal(readToken(token, ringOf(key(SECRET, 'class', 'iris', '2'))), 'invalid_token', 'a key of another version')
  t.not(readToken(token, ringOf(key(OTHER), iris)), 'invalid_token', 'a previous secret beside the current one')
})

t.test('text that is no token is invalid, never a crash', async (t) => {
  const ring = ringOf(key())
  for (const text of [
    '',
    'x',
    '!!!!',
    'A'.repeat(5000),
    Buffer.alloc(40).toString('base64url'),
    Buffer.from([1, ...Array(17).fill(0)]).toString('base64url'),
  ]) {
    t.equal(readToken(text, ring), 'invalid_token', JSON.stringify(text.slice(0, 20)))
  }
  const bytes = Buffer.alloc(16 + 1 + 200)
  bytes[0] = 1
  bytes[16] = 250
  t.equal(readToken(bytes.toString('base64url'), ring), 'invalid_token', 'a name running past the end')
})

t.test('a name too long for a token has no key; batches larger than the scratch space are signed', async (t) => {
  t.equal(versionKey(SECRET, 'm'.repeat(MAX_NAME_BYTES + 1), '1', BUILD, 'class'), undefined)
  t.equal(versionKey(SECRET, 'm', 'v'.repeat(MAX_NAME_BYTES + 1), BUILD, 'class'), undefined)
  t.equal(versionKey(SECRET, 'm', '1', 'not-hex', 'class'), undefined)
  const iris = key()
  const labels = Uint32Array.from({ length: 1000 }, (_, i) => i % 3)
  const tokens = tokensOf(mintTokens(iris, labels, 1000, 5))
  t.equal(tokens.length, 1000)
  const last = readToken(tokens[999] as string, ringOf(iris))
  t.equal(typeof last === 'string' ? last : last.answer, 0)
})
