// An EC2 instance role's credentials from the instance metadata service, IMDSv2 only: a session
// token PUT first (`X-aws-ec2-metadata-token-ttl-seconds`), then two GETs carrying it, the role's
// name and its credentials. IMDSv1 (GETs without a token) is what SSRF exploits read, and an
// instance may refuse it (HttpTokens=required), so it is never tried. The token is kept for its
// TTL; a 401 means the service no longer knows it (an instance stopped and started, a replaced
// endpoint), so one new token is fetched and that GET repeated once. Each request is one try with a
// hard timeout covering connect, headers and body: off EC2 the address answers nothing, and a caller
// waits for the timeout, not for a back-off of retries. node:http, not fetch: one request at a time,
// no pool kept. Bodies are small (a role name, a credentials document of ~1.3 KB), read up to
// MAX_BYTES. Errors name the endpoint and the path asked for, and never hold a body, the token or a
// key: the credentials document is the secret, so even JSON.parse's message (it quotes the text)
// stays out. Caching credentials and refreshing them before they expire is ./credentials.ts's.
import { type IncomingMessage, request as httpRequest } from 'node:http'
import { describeError } from '../../../core/net/describe-error.js'
import { isObject, type JsonObject } from '../../../core/json.js'
import { StoreError } from '../error.js'
import type { SigV4Credentials } from './sigv4.js'

/** Where EC2 serves instance metadata, as every AWS SDK defaults AWS_EC2_METADATA_SERVICE_ENDPOINT. */
export const DEFAULT_METADATA_ENDPOINT = 'http://169.254.169.254'
/** Each request's bound, connect to last body byte; the SDKs' own default, and one try. */
export const METADATA_TIMEOUT_MS = 1000
/** The token's lifetime asked for: the longest IMDS grants, 6 hours. */
export const TOKEN_TTL_S = 21600
/** The largest body read: a credentials document is ~1.3 KB, a role name at most 64 characters. */
export const MAX_BYTES = 8192

export const TOKEN_PATH = '/latest/api/token'
export const ROLES_PATH = '/latest/meta-data/iam/security-credentials/'

/** A token is renewed this long before its TTL ends, so none expires between a check and its use. */
const TOKEN_MARGIN_MS = 60_000
// IAM's role names: 1 to 64 of letters, digits and `+=,.@_-`.
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/
// A token, a key id, a secret: visible ASCII, which a header carries as it is.
const VISIBLE = /^[\x21-\x7e]+$/
// A Code worth quoting back (`AssumeRoleUnauthorizedAccess`): a word, never a value that could be secret.
const CODE_WORD = /^[A-Za-z]{1,64}$/
// `Expiration` as IMDS writes it, `2026-05-01T12:00:00Z`; Date.parse alone takes far looser forms.
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/

export type RoleCredentials = Readonly<{
  role: string
  credentials: SigV4Credentials
  /** When they expire, ms since the epoch: the document's `Expiration`. */
  expiresAt: number
}>

export type MetadataClient = Readonly<{
  /** The endpoint's origin, safe to log: `http://169.254.169.254`. */
  origin: string
  /** The role's name and its current credentials; rejects with a StoreError UNREADABLE, and only with one. */
  fetchCredentials(): Promise<RoleCredentials>
}>

export type MetadataOptions = Readonly<{ timeoutMs?: number | undefined; now?: (() => number) | undefined }>

type Reply = Readonly<{ status: number | undefined; body: Buffer }>

const unreadable = (message: string): StoreError => new StoreError('UNREADABLE', message)

/** The reply's body, refused past MAX_BYTES: at once by Content-Length, else while it streams. */
const readBody = async (res: IncomingMessage, tooLarge: () => StoreError): Promise<Buffer> => {
  if (Number(res.headers['content-length']) > MAX_BYTES) {
    res.destroy()
    throw tooLarge()
  }
  const chunks: Buffer[] = []
  let size = 0
  // Leaving the loop early destroys the stream, and with it the socket.
  for await (const chunk of res) {
    size += chunk.length
    if (size > MAX_BYTES) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}

/** The first line of the role list, when it is a role name; an instance has at most one role. */
const roleOf = (body: Buffer): string | undefined => {
  const role = body
    .toString('latin1')
    .replace(/\n[\s\S]*$/, '')
    .trim()
  return ROLE_NAME.test(role) ? role : undefined
}

/** A member that is visible ASCII, or undefined. */
const visible = (document: JsonObject, name: string): string | undefined => {
  const value = document[name]
  return typeof value === 'string' && VISIBLE.test(value) ? value : undefined
}

/** The credentials of a document, or its fault in words naming fields, never values. */
const credentialsOf = (document: unknown): Omit<RoleCredentials, 'role'> | string => {
  if (!isObject(document)) return 'is not a JSON object'
  const code = document['Code']
  if (code !== 'Success') return typeof code === 'string' && CODE_WORD.test(code) ? `has Code ${code}, not Success` : 'has no Code Success'
  if (document['Type'] !== undefined && document['Type'] !== 'AWS-HMAC') return 'has a Type other than AWS-HMAC'
  const accessKeyId = visible(document, 'AccessKeyId')
  const secretAccessKey = visible(document, 'SecretAccessKey')
  const sessionToken = visible(document, 'Token')
  const expiration = document['Expiration']
  const expiresAt = typeof expiration === 'string' && ISO_UTC.test(expiration) ? Date.parse(expiration) : Number.NaN
  if (accessKeyId === undefined) return 'has no AccessKeyId'
  if (secretAccessKey === undefined) return 'has no SecretAccessKey'
  if (sessionToken === undefined) return 'has no Token'
  if (Number.isNaN(expiresAt)) return 'has no Expiration date in UTC (YYYY-MM-DDThh:mm:ssZ)'
  return { credentials: { accessKeyId, secretAccessKey, sessionToken }, expiresAt }
}

export const createMetadataClient = (endpoint: URL, { timeoutMs = METADATA_TIMEOUT_MS, now = Date.now }: MetadataOptions = {}): MetadataClient => {
  const origin = endpoint.origin
  const at = `the instance metadata service at ${origin}`
  let token: Readonly<{ value: string; renewAt: number }> | undefined

  /** One request, one try, under the timeout; a reply of any status is returned with its body. */
  const exchange = async (method: 'PUT' | 'GET', path: string, headers: Readonly<Record<string, string>>): Promise<Reply> => {
    const what = `${method} ${path}`
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        // `agent: false`: a socket of its own, closed after the reply, none kept alive between refreshes.
        const req = httpRequest(new URL(path, endpoint), { method, headers, agent: false, signal }, resolve)
        req.on('error', reject)
        req.end()
      })
      return { status: res.statusCode, body: await readBody(res, () => unreadable(`${at} sent more than ${MAX_BYTES} bytes for ${what}`)) }
    } catch (error: unknown) {
      if (error instanceof StoreError) throw error
      // The signal aborts whatever was under way: connect, headers or body.
      const reason = signal.aborted ? `did not answer ${what} within ${timeoutMs} ms` : `failed ${what}: ${describeError(error)}`
      throw new StoreError('UNREADABLE', `${at} ${reason} (set AWS_EC2_METADATA_DISABLED=true off EC2)`, { cause: error })
    }
  }

  const refused = (what: string, status: number | undefined, hint = ''): StoreError => unreadable(`${at} answered ${what} with HTTP ${status}${hint}`)

  const newToken = async (): Promise<string> => {
    const reply = await exchange('PUT', TOKEN_PATH, { 'x-aws-ec2-metadata-token-ttl-seconds': String(TOKEN_TTL_S) })
    if (reply.status !== 200)
      throw refused(`PUT ${TOKEN_PATH}`, reply.status, reply.status === 403 ? ': instance metadata is turned off or not allowed on this instance' : '')
    const value = reply.body.toString('latin1')
    if (!VISIBLE.test(value)) throw unreadable(`${at} answered PUT ${TOKEN_PATH} with no token`)
    token = { value, renewAt: now() + TOKEN_TTL_S * 1000 - TOKEN_MARGIN_MS }
    return value
  }

  /** A GET with the token kept (or a new one); on a 401, one new token and the GET once more. */
  const get = async (path: string, hint: string): Promise<Buffer> => {
    const kept = token !== undefined && now() < token.renewAt ? token.value : await newToken()
    let reply = await exchange('GET', path, { 'x-aws-ec2-metadata-token': kept })
    if (reply.status === 401) {
      token = undefined
      reply = await exchange('GET', path, { 'x-aws-ec2-metadata-token': await newToken() })
      if (reply.status === 401) throw refused(`GET ${path}`, 401, ' to a token it had just given')
    }
    if (reply.status !== 200) throw refused(`GET ${path}`, reply.status, reply.status === 404 ? hint : '')
    return reply.body
  }

  const fetchCredentials = async (): Promise<RoleCredentials> => {
    const role = roleOf(await get(ROLES_PATH, ': the instance has no instance role; attach one, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'))
    if (role === undefined) throw unreadable(`${at} answered GET ${ROLES_PATH} with no role name`)
    const path = `${ROLES_PATH}${role}`
    const body = await get(path, ': the role was replaced meanwhile; the next try reads the new one')
    let document: unknown
    try {
      document = JSON.parse(body.toString('utf8'))
    } catch {
      // Neither the parser's message nor the error as a cause: both quote the body.
      throw unreadable(`${at} answered GET ${path} with a body that is not JSON`)
    }
    const found = credentialsOf(document)
    if (typeof found === 'string') throw unreadable(`${at} answered GET ${path} with a credentials document that ${found}`)
    return { role, credentials: found.credentials, expiresAt: found.expiresAt }
  }

  return { origin, fetchCredentials }
}
