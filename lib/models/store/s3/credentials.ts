// Where the S3 store's keys come from, first found wins: static keys (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, from the environment or the systemd credentials
// svc-s3-*, merged by lib/config/credentials.ts before this point), else an EC2 instance role through
// IMDSv2 (./imds.ts) unless AWS_EC2_METADATA_DISABLED. Shared profiles, ECS task roles and web
// identity are not supported. An instance role's credentials are kept until less than 5 minutes
// remain before their Expiration, by when IMDS serves new ones (AWS makes them available "at least
// five minutes before the expiration of the old credentials", EC2 User Guide, "Retrieve security
// credentials from instance metadata"), and fetched anew by the next get(), concurrent callers
// sharing one fetch. A refresh that fails while the kept credentials are still valid keeps them, so
// a metadata hiccup stops nothing: the failure goes once to onRefreshFailure (the caller logs it),
// and the next try waits REFRESH_RETRY_MS, so S3 requests do not each wait out the metadata timeout.
// Once they have expired, a failed refresh is an error. After S3 answers ExpiredToken, refresh()
// fetches once more and rejects rather than hand back what S3 refused. Every message names
// variables, the endpoint and the role, never a key, a secret or a token.
import { ConfigError } from '../../../config/config.js'
import { redactUrl, StoreError, storeErrorOf } from '../error.js'
import { createMetadataClient, type MetadataClient, type RoleCredentials } from './imds.js'
import type { SigV4Credentials } from './sigv4.js'

/** Credentials are fetched anew once fewer than this many ms remain before their Expiration. */
export const REFRESH_MARGIN_MS = 5 * 60_000
/** After a refresh (failed, or bringing credentials that are themselves near their end), none before this many ms. */
export const REFRESH_RETRY_MS = 30_000

export type CredentialOptions = Readonly<{
  /** AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN as configured; empty is unset. */
  accessKeyId?: string | undefined
  secretAccessKey?: string | undefined
  sessionToken?: string | undefined
  /** Where the configuration found those keys, for `describe`: `environment`, `systemd credentials`; else `static keys`. */
  keysFrom?: string | undefined
  imds: Readonly<{
    /** AWS_EC2_METADATA_DISABLED=true: no instance role is looked for. */
    disabled: boolean
    /** AWS_EC2_METADATA_SERVICE_ENDPOINT: an http:// origin, DEFAULT_METADATA_ENDPOINT unless set. */
    endpoint: URL
    /** Each metadata request's bound; METADATA_TIMEOUT_MS. */
    timeoutMs?: number | undefined
    /** The clock credentials expire by. */
    now?: (() => number) | undefined
  }>
  /** A refresh failed while the credentials held were still valid, and they are used on: told once per failed try. */
  onRefreshFailure?: ((error: StoreError) => void) | undefined
}>

export type CredentialSource = Readonly<{
  /** Where the keys come from, safe to log: `environment`, `systemd credentials`, `instance role <name>`. */
  describe: string
  /** Credentials valid now, fetched only when those held near their end; rejects with a StoreError UNREADABLE. */
  get(): Promise<SigV4Credentials>
  /**
   * After S3 answered ExpiredToken to `rejected`: new credentials, fetched once, unless those held
   * are already others than `rejected`. Static keys cannot be renewed, so it rejects, saying so.
   */
  refresh(rejected?: SigV4Credentials): Promise<SigV4Credentials>
}>

const NOT_SUPPORTED = 'shared profiles, ECS task roles and web identity are not supported'

const isSet = (value: string | undefined): value is string => (value ?? '') !== ''

/** A configuration problem of the static keys in words, or undefined: one of a pair alone, or a token without both. */
const keysProblem = ({ accessKeyId, secretAccessKey, sessionToken }: CredentialOptions): string | undefined => {
  const both = '(or the systemd credentials svc-s3-access-key-id and svc-s3-secret-access-key), or neither to use an instance role'
  if (isSet(accessKeyId) !== isSet(secretAccessKey)) {
    const [set, unset] = isSet(accessKeyId) ? ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] : ['AWS_SECRET_ACCESS_KEY', 'AWS_ACCESS_KEY_ID']
    return `${set} is set without ${unset}: set both ${both}`
  }
  if (isSet(sessionToken) && !isSet(accessKeyId)) return `AWS_SESSION_TOKEN is set without AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set all three ${both}`
  return undefined
}

/** An endpoint the client can use: http, and an origin alone (no credentials, path, query or fragment). */
const isOrigin = (url: URL): boolean => url.protocol === 'http:' && url.username === '' && url.password === '' && url.href === `${url.origin}/`

const staticKeys = (credentials: SigV4Credentials, from: string): CredentialSource => ({
  describe: from,
  get: async () => credentials,
  refresh: async () => {
    throw new StoreError(
      'UNREADABLE',
      `S3 answered ExpiredToken to the keys from ${from}: ` +
        'set a new AWS_SESSION_TOKEN, with the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY issued with it, and restart',
    )
  },
})

const none = (): CredentialSource => {
  const failure = async (): Promise<never> => {
    throw new StoreError(
      'UNREADABLE',
      'no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the systemd credentials svc-s3-access-key-id and svc-s3-secret-access-key), ' +
        `or run on EC2 with an instance role and AWS_EC2_METADATA_DISABLED unset; ${NOT_SUPPORTED}`,
    )
  }
  return { describe: 'no credentials', get: failure, refresh: failure }
}

const instanceRole = (client: MetadataClient, now: () => number, onRefreshFailure: (error: StoreError) => void): CredentialSource => {
  let held: RoleCredentials | undefined
  let retryAt = Number.NEGATIVE_INFINITY
  let inFlight: Promise<RoleCredentials> | undefined

  /** What a failed fetch leaves: the credentials held when they may still be used, else an error saying why not. */
  const failed = (failure: StoreError, isForced: boolean): RoleCredentials => {
    const cause = { cause: failure }
    if (held === undefined) throw new StoreError('UNREADABLE', `no credentials: AWS_ACCESS_KEY_ID is not set and ${failure.message}`, cause)
    const role = `instance role ${held.role}`
    if (isForced)
      throw new StoreError('UNREADABLE', `S3 answered ExpiredToken to the credentials of ${role}, and new ones could not be had: ${failure.message}`, cause)
    if (now() >= held.expiresAt) {
      const expired = new Date(held.expiresAt).toISOString()
      throw new StoreError('UNREADABLE', `the credentials of ${role} expired at ${expired} and could not be renewed: ${failure.message}`, cause)
    }
    retryAt = now() + REFRESH_RETRY_MS
    onRefreshFailure(failure)
    return held
  }

  // One fetch at a time: whoever comes while one is under way shares its outcome.
  const renew = (isForced: boolean): Promise<RoleCredentials> => {
    inFlight ??= client
      .fetchCredentials()
      .then(
        (fetched) => {
          held = fetched
          // Only credentials that come already near their end hold off the next fetch.
          retryAt = fetched.expiresAt - now() < REFRESH_MARGIN_MS ? now() + REFRESH_RETRY_MS : Number.NEGATIVE_INFINITY
          return fetched
        },
        (error: unknown) => failed(storeErrorOf(error), isForced),
      )
      .finally(() => {
        inFlight = undefined
      })
    return inFlight
  }

  return {
    get describe() {
      return held === undefined ? `instance role (IMDSv2 at ${client.origin})` : `instance role ${held.role}`
    },
    get: async () => {
      const at = now()
      if (held !== undefined && (held.expiresAt - at >= REFRESH_MARGIN_MS || (at < retryAt && at < held.expiresAt))) return held.credentials
      return (await renew(false)).credentials
    },
    refresh: async (rejected) => {
      if (rejected !== undefined && held !== undefined && held.credentials !== rejected) return held.credentials
      return (await renew(true)).credentials
    },
  }
}

/**
 * The first source the options offer: static keys, else the instance role (unless IMDS is
 * disabled), else one whose every call rejects saying what to set. Throws a ConfigError for half a
 * pair of keys, or an endpoint that is not an http:// origin.
 */
export const createCredentialSource = (options: CredentialOptions): CredentialSource => {
  const problem = keysProblem(options)
  if (problem !== undefined) throw new ConfigError([problem])
  const { accessKeyId, secretAccessKey, sessionToken, imds } = options
  if (isSet(accessKeyId) && isSet(secretAccessKey))
    return staticKeys({ accessKeyId, secretAccessKey, sessionToken: isSet(sessionToken) ? sessionToken : undefined }, options.keysFrom ?? 'static keys')
  if (imds.disabled) return none()
  if (!isOrigin(imds.endpoint))
    throw new ConfigError([
      `AWS_EC2_METADATA_SERVICE_ENDPOINT=${redactUrl(imds.endpoint)}: expected an http:// origin, http://host[:port] (default http://169.254.169.254)`,
    ])
  const now = imds.now ?? Date.now
  const client = createMetadataClient(imds.endpoint, { timeoutMs: imds.timeoutMs, now })
  return instanceRole(client, now, options.onRefreshFailure ?? (() => {}))
}
