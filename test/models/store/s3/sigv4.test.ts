// SigV4 against AWS's published vectors (test/fixtures/sigv4/README.md says which and from where):
// each .req is parsed and signed, and its canonical request, string to sign and Authorization
// header must be the published ones byte for byte. Then what the vectors do not show: the key
// cache, the session token, S3's unnormalised paths, UNSIGNED-PAYLOAD, and refusals that never
// quote a credential.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { StoreError } from '../../../../lib/models/store/error.js'
import {
  amzDate,
  canonicalPath,
  canonicalQuery,
  canonicalRequest,
  createSigningKeys,
  EMPTY_SHA256,
  type SigV4Mode,
  type SigV4Request,
  signRequest,
  stringToSign,
  UNSIGNED_PAYLOAD,
} from '../../../../lib/models/store/s3/sigv4.js'

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'sigv4')

type Group = Readonly<{ dir: string; mode: SigV4Mode; accessKeyId: string; secretAccessKey: string; service: string; time: Date }>

/** The generic suite (service `service`, path normalised) and the S3 API Reference's examples. */
const GROUPS: readonly Group[] = [
  {
    dir: 'suite',
    mode: 'generic',
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    service: 'service',
    time: new Date('2015-08-30T12:36:00Z'),
  },
  {
    dir: 's3',
    mode: 's3',
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    service: 's3',
    time: new Date('2013-05-24T00:00:00Z'),
  },
]

/** Every folder under `dir` that holds a vector (`<name>/<name>.req`), at any depth. */
const vectorDirs = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = join(dir, entry.name)
      return readdirSync(path).includes(`${entry.name}.req`) ? [path] : vectorDirs(path)
    })

type Parsed = Readonly<{ method: string; path: string; query: Array<[string, string]>; headers: Record<string, string[]>; body: string }>

/** A .req file: the request line, `Name:value` lines, a blank line, the body. */
const parseReq = (text: string): Parsed => {
  const blank = text.indexOf('\n\n')
  const head = blank === -1 ? text : text.slice(0, blank)
  const [requestLine = '', ...lines] = head.split('\n')
  const method = requestLine.slice(0, requestLine.indexOf(' '))
  const target = requestLine.slice(method.length + 1, requestLine.lastIndexOf(' '))
  const [path = '', search] = target.split('?')
  const query = (search ?? '')
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair): [string, string] => (pair.includes('=') ? [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] : [pair, '']))
  const headers: Record<string, string[]> = {}
  for (const line of lines) {
    const name = line.slice(0, line.indexOf(':'))
    ;(headers[name] ??= []).push(line.slice(name.length + 1))
  }
  return { method, path, query, headers, body: blank === -1 ? '' : text.slice(blank + 2) }
}

/** Takes the header the signer sets itself out of `headers`, case-insensitively: its value, trimmed. */
const takeHeader = (headers: Record<string, string[]>, lowerName: string): string | undefined => {
  const name = Object.keys(headers).find((key) => key.toLowerCase() === lowerName)
  if (name === undefined) return undefined
  const value = headers[name]?.join(',').trim()
  delete headers[name]
  return value
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

const requestOf = (group: Group, parsed: Parsed): SigV4Request => {
  const headers = { ...parsed.headers }
  const host = takeHeader(headers, 'host') ?? ''
  const sessionToken = takeHeader(headers, 'x-amz-security-token')
  takeHeader(headers, 'x-amz-date')
  takeHeader(headers, 'x-amz-content-sha256')
  return {
    method: parsed.method,
    host,
    path: parsed.path,
    query: parsed.query,
    headers,
    payloadHash: sha256(parsed.body),
    credentials: { accessKeyId: group.accessKeyId, secretAccessKey: group.secretAccessKey, sessionToken },
    region: 'us-east-1',
    service: group.service,
    time: group.time,
    mode: group.mode,
  }
}

t.test('every published vector gives its canonical request, string to sign and Authorization header exactly', async (t) => {
  let count = 0
  for (const group of GROUPS) {
    for (const dir of vectorDirs(join(FIXTURES, group.dir))) {
      const name = dir.slice(dir.lastIndexOf('/') + 1)
      const read = (ext: string): string => readFileSync(join(dir, `${name}.${ext}`), 'utf8')
      const parsed = parseReq(read('req'))
      const request = requestOf(group, parsed)
      const date = amzDate(group.time)
      const canonical = canonicalRequest(request, date)
      t.equal(canonical.request, read('creq'), `${group.dir}/${name}: canonical request`)
      t.equal(stringToSign(date, `${date.slice(0, 8)}/us-east-1/${group.service}/aws4_request`, canonical.request), read('sts'), `${name}: string to sign`)
      const headers = signRequest(request, createSigningKeys())
      t.equal(headers.authorization, read('authz'), `${name}: Authorization`)
      const stated = parsed.headers['x-amz-date'] ?? parsed.headers['X-Amz-Date'] ?? []
      t.same(
        stated.map((value) => value.trim()),
        [headers['x-amz-date']],
        `${name}: x-amz-date is the request's`,
      )
      t.equal(headers['x-amz-content-sha256'], group.mode === 's3' ? sha256(parsed.body) : undefined, `${name}: x-amz-content-sha256`)
      t.equal(headers['x-amz-security-token'], request.credentials.sessionToken, `${name}: x-amz-security-token`)
      count++
    }
  }
  t.equal(count, 30, '26 of the generic suite and 4 of the S3 API Reference')
})

const BASE: SigV4Request = {
  method: 'GET',
  host: 'examplebucket.s3.amazonaws.com',
  path: '/test.txt',
  payloadHash: EMPTY_SHA256,
  credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
  region: 'us-east-1',
  service: 's3',
  time: new Date('2013-05-24T00:00:00Z'),
}

t.test('a signing key is derived once per secret, day, region and service, and kept in a bounded map', async (t) => {
  const keys = createSigningKeys(2)
  const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'
  const day = keys(secret, '20150830', 'us-east-1', 'iam')
  // AWS's "derive a signing key" example.
  t.equal(day.toString('hex'), 'c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9')
  t.equal(keys(secret, '20150830', 'us-east-1', 'iam'), day, 'the same Buffer for the same day')
  const next = keys(secret, '20150831', 'us-east-1', 'iam')
  t.not(next, day)
  t.not(next.toString('hex'), day.toString('hex'), 'a new key the next day')
  t.equal(keys(secret, '20150831', 'us-east-1', 'iam'), next)
  keys(secret, '20150831', 'eu-west-1', 'iam')
  const again = keys(secret, '20150830', 'us-east-1', 'iam')
  t.not(again, day, 'past its size the map starts again: the key is derived anew')
  t.equal(again.toString('hex'), day.toString('hex'))
})

t.test('signRequest asks the key cache for its secret, day, region and service', async (t) => {
  const asked: string[][] = []
  const real = createSigningKeys()
  const keys = (secret: string, day: string, region: string, service: string): Buffer => {
    asked.push([secret, day, region, service])
    return real(secret, day, region, service)
  }
  signRequest(BASE, keys)
  signRequest({ ...BASE, time: new Date('2013-05-24T23:59:59Z') }, keys)
  t.same(asked, [
    ['wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', '20130524', 'us-east-1', 's3'],
    ['wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', '20130524', 'us-east-1', 's3'],
  ])
})

t.test('a session token is sent and signed', async (t) => {
  // awslabs/aws-c-auth, tests/aws-signing-test-suite/v4/get-vanilla-with-session-token.
  const token = '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267'
  const headers = signRequest(
    {
      method: 'GET',
      host: 'example.amazonaws.com',
      path: '/',
      payloadHash: EMPTY_SHA256,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: token },
      region: 'us-east-1',
      service: 'service',
      time: new Date('2015-08-30T12:36:00Z'),
      mode: 'generic',
    },
    createSigningKeys(),
  )
  t.same(headers, {
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, ' +
      'Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8',
    'x-amz-date': '20150830T123600Z',
    'x-amz-security-token': token,
  })
  const s3 = signRequest({ ...BASE, credentials: { ...BASE.credentials, sessionToken: token } }, createSigningKeys())
  t.match(s3.authorization, /SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,/)
  t.equal(s3['x-amz-security-token'], token)
})

t.test('UNSIGNED-PAYLOAD stands for the body in the canonical request and in x-amz-content-sha256', async (t) => {
  const request = { ...BASE, payloadHash: UNSIGNED_PAYLOAD }
  t.match(canonicalRequest(request, '20130524T000000Z').request, /\nx-amz-content-sha256:UNSIGNED-PAYLOAD\n[\s\S]*\nUNSIGNED-PAYLOAD$/)
  const headers = signRequest(request, createSigningKeys())
  t.equal(headers['x-amz-content-sha256'], UNSIGNED_PAYLOAD)
  t.not(headers.authorization, signRequest(BASE, createSigningKeys()).authorization)
})

t.test("S3's path is encoded once and never normalised; the generic one is normalised", async (t) => {
  // aws-c-auth's *-unnormalized cases: the canonical URI is the path as sent.
  for (const path of ['//example//', '/./', '/example1/example2/../..', '/./example']) t.equal(canonicalPath(path, 's3'), path)
  t.equal(canonicalPath('/models/a b/ü!(v1)*.json', 's3'), '/models/a%20b/%C3%BC%21%28v1%29%2A.json')
  t.equal(canonicalPath('/a/%2F', 's3'), '/a/%252F', 'a % is data: encoded, not trusted as an escape')
  t.equal(canonicalPath('/a/b/../c/./d/', 'generic'), '/a/c/d/')
  t.equal(canonicalPath('/a/b/..', 'generic'), '/a')
})

t.test('the query is encoded and sorted by name, then value; a repeated pair stays', async (t) => {
  t.equal(
    canonicalQuery([
      ['prefix', 'models/iris/'],
      ['list-type', '2'],
      ['b', 'x'],
      ['b', 'x'],
      ['continuation-token', 'a b+c='],
    ]),
    'b=x&b=x&continuation-token=a%20b%2Bc%3D&list-type=2&prefix=models%2Firis%2F',
  )
  t.equal(canonicalQuery([]), '')
})

t.test('headers named in different cases are one header, their values in order', async (t) => {
  const request = { ...BASE, headers: { 'X-Meta': '  a   b ', 'x-meta': ['c', 'd\te'] } }
  t.match(canonicalRequest(request, '20130524T000000Z').request, /\nx-meta:a b,c,d e\n/)
})

t.test('a request that cannot be signed is refused, and no refusal quotes a credential', async (t) => {
  const secret = 'SECRETwJalrXUtnFEMI'
  const token = 'TOKENAQoDYXdzEPT'
  const credentials = { accessKeyId: 'AKID', secretAccessKey: secret, sessionToken: token }
  const signed = signRequest({ ...BASE, credentials }, createSigningKeys())
  const signature = signed.authorization.slice(signed.authorization.indexOf('Signature=') + 10)
  const refusals: ReadonlyArray<readonly [string, Partial<SigV4Request>, string, RegExp]> = [
    ['a method that is no token', { method: 'GET /' }, 'UNREADABLE', /method/],
    ['an empty host', { host: '' }, 'UNREADABLE', /host/],
    ['a host with a line break', { host: `a\r\n${secret}` }, 'UNREADABLE', /host/],
    ['a body in place of its hash', { payloadHash: secret }, 'UNREADABLE', /payload hash/],
    ['a region with a slash', { region: 'us/east' }, 'UNREADABLE', /region/],
    ['an empty service', { service: '' }, 'UNREADABLE', /service/],
    ['an access key id with a slash', { credentials: { ...credentials, accessKeyId: 'AK/ID' } }, 'UNREADABLE', /access key id/],
    ['an empty secret', { credentials: { accessKeyId: 'AKID', secretAccessKey: '' } }, 'UNREADABLE', /secret/],
    ['a token with a line break', { credentials: { ...credentials, sessionToken: `${token}\n` } }, 'UNREADABLE', /session token/],
    ['an invalid date', { time: new Date(Number.NaN) }, 'UNREADABLE', /time/],
    ['a date past 9999', { time: new Date('+010000-01-01T00:00:00Z') }, 'UNREADABLE', /time/],
    ['a relative path', { path: 'test.txt' }, 'INVALID_PATH', /path/],
    ['a lone surrogate in the path', { path: '/a\uD800b' }, 'INVALID_PATH', /lone surrogate/],
    ['a lone surrogate in the query', { query: [['k', '\uDC00']] }, 'INVALID_PATH', /lone surrogate/],
    ['a header name that is no token', { headers: { 'a b': 'x' } }, 'UNREADABLE', /header name/],
    ['the signer’s own header', { headers: { Authorization: signed.authorization } }, 'UNREADABLE', /authorization header is the signer's own/],
    ['a token header given as a header', { headers: { 'X-Amz-Security-Token': token } }, 'UNREADABLE', /x-amz-security-token/],
    ['a header value with a line break', { headers: { 'x-meta': ['a', `${secret}\r\nx: y`] } }, 'UNREADABLE', /x-meta header holds a line break/],
  ]
  for (const [what, change, code, message] of refusals) {
    const error = t.throws(() => signRequest({ ...BASE, credentials, ...change }, createSigningKeys()), StoreError, what)
    t.match(error, { code, message }, what)
    const text = String(error instanceof Error ? `${error.message} ${error.stack}` : error)
    for (const credential of [secret, token, signature]) t.notOk(text.includes(credential), `${what}: no credential in the message`)
  }
})
