// How a variable's text becomes its value. A parser returns the value, or an Invalid saying why
// not; the reader (./reader.ts) puts the variable in front of each reason and uses the declared
// default instead, so every problem of a configuration is found in one pass. Parsers see only the
// text: whether a variable is set, and checks across variables, are the reader's and the sections'.
import { isCronExpression } from '../core/schedule/cron.js'
import { parseStoreSpec, STORE_SPEC_FORMS, type StoreSpec } from './model-store.js'

/** Why a value was refused; each reason becomes one problem, after the variable (`PORT=x: expected …`). */
export class Invalid {
  readonly reasons: readonly string[]
  constructor(reasons: readonly string[]) {
    this.reasons = reasons
  }
}

export type Parser<T> = (raw: string) => T | Invalid

const expected = (accepted: string): Invalid => new Invalid([`expected ${accepted}`])

/** A parser whose value goes through `f` when it is valid. */
const map =
  <A, B>(parse: Parser<A>, f: (value: A) => B): Parser<B> =>
  (raw) => {
    const value = parse(raw)
    return value instanceof Invalid ? value : f(value)
  }

/** Any text, as given (a password). */
export const text: Parser<string> = (raw) => raw

export const pattern =
  (re: RegExp, accepted: string): Parser<string> =>
  (raw) =>
    re.test(raw) ? raw : expected(accepted)

export const serviceName = pattern(
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
  'a name of letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit)',
)

/** An HTTP field name (RFC 9110 §5.1, a token), lower-cased as Node keys `req.headers`. */
export const headerName: Parser<string> = (raw) =>
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/.test(raw) ? raw.toLowerCase() : expected("an HTTP header name (letters, digits and !#$%&'*+.^_`|~-, at most 64)")

// A host name or an IPv4/IPv6 literal: no spaces, slashes or control characters.
export const host = pattern(/^[A-Za-z0-9._:%-]{1,253}$/, 'a host name or IP address')

/** Digits only: no sign, no fraction, no exponent. */
export const integer =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
    return n >= min && n <= max ? n : expected(`an integer from ${min} to ${max}`)
  }

/** A decimal number above `min` (or from `min`, when `isMinIncluded`) and at most `max`. */
export const decimal =
  (min: number, max: number, isMinIncluded = false): Parser<number> =>
  (raw) => {
    const n = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(raw) ? Number(raw) : Number.NaN
    if ((isMinIncluded ? n >= min : n > min) && n <= max) return n
    return expected(isMinIncluded ? `a number from ${min} to ${max}` : `a number above ${min} and at most ${max}`)
  }

/** One of `values`, in any case; an alias stands for the value it maps to (`warn` for `warning`). */
export const oneOf =
  <T extends string>(values: readonly T[], aliases: Readonly<Record<string, NoInfer<T>>> = {}): Parser<T> =>
  (raw) => {
    const lower = raw.toLowerCase()
    // Own keys only: `constructor` must not find Object's.
    const found = values.find((v) => v === lower) ?? (Object.hasOwn(aliases, lower) ? aliases[lower] : undefined)
    return found ?? expected(`one of ${values.join(', ')} (case-insensitive)`)
  }

export const boolean: Parser<boolean> = map(oneOf(['true', 'false']), (value) => value === 'true')

/** A comma-separated list of `values`, each at most once, in the order given. */
export const listOf =
  <T extends string>(values: readonly T[]): Parser<readonly T[]> =>
  (raw) => {
    const names = raw.split(',').map((name) => name.trim().toLowerCase())
    const isValid = names.every((name) => (values as readonly string[]).includes(name)) && new Set(names).size === names.length
    return isValid ? (names as T[]) : expected(`a comma-separated list of ${values.join(', ')}, each at most once`)
  }

/** An AWS region as SigV4 scopes it: `eu-west-1`, `us-gov-west-1`; MinIO and R2 take any such word. */
export const awsRegion = pattern(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a region such as eu-west-1: lower-case letters, digits and "-"')

export const httpUrl: Parser<URL> = (raw) => {
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  return url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') ? url : expected('an http:// or https:// URL')
}

/** Where the payload log goes: an http(s):// URL (a sink POSTed to), or any other text a file path. */
export type PayloadTarget = Readonly<{ kind: 'file'; path: string }> | Readonly<{ kind: 'http'; url: URL }>

export const payloadTarget: Parser<PayloadTarget> = (raw) => {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw)) {
    const url = httpUrl(raw)
    return url instanceof Invalid ? expected('a file path, or an http:// or https:// URL') : { kind: 'http', url }
  }
  // The reader treats an empty variable as unset: text here is never empty.
  return { kind: 'file', path: raw }
}

/** Comma-separated names, trimmed, empty ones left out (SVC_PAYLOAD_LOG_EXCLUDE's inputs). */
export const names: Parser<readonly string[]> = (raw) => [...new Set(raw.split(',').map((name) => name.trim()))].filter((name) => name !== '')

/** A base URL a client appends paths to: no credentials, query or fragment to lose or leak. */
export const baseUrl: Parser<URL> = (raw) => {
  const url = httpUrl(raw)
  if (url instanceof Invalid || (url.username === '' && url.password === '' && url.search === '' && url.hash === '')) return url
  return expected('an http:// or https:// base URL without credentials, query or fragment')
}

export type OtlpEndpoint = Readonly<{ url: string; isSecure: boolean }>

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/

/** The three endpoint forms of lib/README.md §3, normalised to a URL the OTLP/gRPC exporter takes. */
export const otlpEndpoint: Parser<OtlpEndpoint> = (raw) => {
  const withScheme = HOST_PORT.test(raw) ? `http://${raw}` : raw
  const url = URL.canParse(withScheme) ? new URL(withScheme) : undefined
  const isValid =
    url !== undefined &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.hostname !== '' &&
    (url.pathname === '/' || url.pathname === '') &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === '' &&
    (url.port === '' || Number(url.port) !== 0)
  if (!isValid) return expected('host:port, http://host:port or https://host:port (e.g. collector:4317)')
  return { url: `${url.protocol}//${url.host}`, isSecure: url.protocol === 'https:' }
}

/** A node-cron expression, spaces around it dropped. */
export const cron: Parser<string> = (raw) =>
  isCronExpression(raw.trim()) ? raw.trim() : expected('a cron expression of five fields, or six with seconds first (e.g. "* * * * *")')

// RFC 6750 b64token characters; short tokens are guessable. A reason names a token by its position
// only: the value is a secret and must not reach the error output.
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/
const MIN_TOKEN_LENGTH = 16

const splitTokens = (raw: string): string[] =>
  raw
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token !== '')

const tokenReasons = (list: readonly string[]): string[] =>
  list.flatMap((token, i) => {
    const which = list.length === 1 ? 'the token' : `token ${i + 1} of ${list.length}`
    if (!TOKEN.test(token)) return [`${which} has characters outside A-Z a-z 0-9 - . _ ~ + / (and trailing =)`]
    return token.length < MIN_TOKEN_LENGTH ? [`${which} is shorter than ${MIN_TOKEN_LENGTH} characters`] : []
  })

/** Comma-separated bearer tokens; blanks between commas are dropped, so blank is none. */
export const tokens: Parser<readonly string[]> = (raw) => {
  const list = splitTokens(raw)
  const reasons = tokenReasons(list)
  return reasons.length === 0 ? list : new Invalid(reasons)
}

/** At most one bearer token; blank is none. */
export const token: Parser<string | undefined> = (raw) => {
  const list = splitTokens(raw)
  const reasons = [...tokenReasons(list), ...(list.length > 1 ? ['expected one token'] : [])]
  return reasons.length === 0 ? list[0] : new Invalid(reasons)
}

/** Shortest feedback secret, in UTF-8 bytes: 128 bits when it is random. */
export const MIN_SECRET_BYTES = 16

/** A feedback secret: at least MIN_SECRET_BYTES bytes (a blank variable is unset, the reader's rule). */
export const feedbackSecret: Parser<string> = (raw) =>
  Buffer.byteLength(raw, 'utf8') >= MIN_SECRET_BYTES ? raw : expected(`at least ${MIN_SECRET_BYTES} bytes (e.g. openssl rand -base64 32)`)

/** SVC_MODEL_STORE in one of STORE_SPEC_FORMS. */
export const storeSpec: Parser<StoreSpec> = (raw) => parseStoreSpec(raw) ?? expected(STORE_SPEC_FORMS)
