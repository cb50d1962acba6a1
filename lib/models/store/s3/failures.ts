// An S3 error reply as a StoreError: the store code callers branch on, and a message naming S3's
// own error code with what to do about it. Only the code is taken from the body, never the server's
// message or the rest: a SignatureDoesNotMatch body echoes the canonical request, which holds the
// session token. A HEAD's reply has no body, so its status stands for the code.
import { StoreError, type StoreErrorCode } from '../error.js'

/** What a failure is judged against: the request, in words, and the region it was signed for. */
export type FailureContext = Readonly<{ what: string; region: string; credentials: string }>

type Advice = Readonly<{ code: StoreErrorCode; advice: (context: FailureContext) => string }>

// NOT_FOUND only for a key that is not there: a missing bucket must not read as an absent optional file.
const ADVICE: Readonly<Record<string, Advice>> = {
  NoSuchKey: { code: 'NOT_FOUND', advice: () => 'no such key' },
  NoSuchBucket: { code: 'UNREADABLE', advice: () => "the bucket does not exist: check SVC_MODEL_STORE's bucket and the endpoint or region" },
  AccessDenied: {
    code: 'UNREADABLE',
    advice: ({ credentials }) =>
      `access denied to ${credentials}: instances need s3:ListBucket and s3:GetObject on the prefix, a publisher s3:PutObject too (ops/README.md)`,
  },
  SignatureDoesNotMatch: {
    code: 'UNREADABLE',
    advice: ({ credentials }) => `the server computes another signature: the secret access key of ${credentials} is not the one for its access key id`,
  },
  InvalidAccessKeyId: { code: 'UNREADABLE', advice: ({ credentials }) => `the server knows no such access key id (${credentials})` },
  RequestTimeTooSkewed: {
    code: 'UNREADABLE',
    advice: () => "this host's clock is more than 15 minutes off the server's: synchronise it (NTP, systemd-timesyncd or chrony)",
  },
  ExpiredToken: { code: 'UNREADABLE', advice: ({ credentials }) => `the session token of ${credentials} has expired, and renewing it did not help` },
  TokenRefreshRequired: { code: 'UNREADABLE', advice: ({ credentials }) => `the session token of ${credentials} must be renewed` },
  SlowDown: { code: 'UPSTREAM_ERROR', advice: () => 'the server is throttling requests, still after retries: lengthen SVC_MODEL_RELOAD_INTERVAL_S' },
  PreconditionFailed: { code: 'PRECONDITION_FAILED', advice: () => 'the condition on its ETag does not hold' },
  ConditionalRequestConflict: { code: 'UPSTREAM_ERROR', advice: () => 'a conflicting write was still in flight after retries' },
}

/** A bucket elsewhere: S3 says where in x-amz-bucket-region (301 PermanentRedirect, 400 AuthorizationHeaderMalformed, or a HEAD's 301/400). */
const regionFailure = (region: string | undefined, context: FailureContext, code: string): StoreError | undefined =>
  region === undefined || region === context.region
    ? undefined
    : new StoreError('UNREADABLE', `${context.what} failed (${code}): the bucket is in region ${region}, not ${context.region}: set AWS_REGION=${region}`)

/** The StoreError for an S3 reply that is not a success; `code` is S3's (undefined: none in the body, as for a HEAD). */
export const s3Failure = (status: number, code: string | undefined, bucketRegion: string | undefined, context: FailureContext): StoreError => {
  const named = code ?? (status === 404 ? 'NoSuchKey' : undefined)
  const moved = regionFailure(bucketRegion, context, named ?? `HTTP ${status}`)
  if (moved !== undefined) return moved
  const known = named === undefined ? undefined : ADVICE[named]
  if (known !== undefined) return new StoreError(known.code, `${context.what} failed (${named}): ${known.advice(context)}`)
  if (status === 412) return new StoreError('PRECONDITION_FAILED', `${context.what} failed (HTTP 412): the condition on its ETag does not hold`)
  if (status === 403 || status === 401) {
    // A HEAD's 403 carries no code: any of the refusals above.
    const guess = code === undefined ? ': access denied, a wrong secret or a clock more than 15 minutes off' : ''
    return new StoreError('UNREADABLE', `${context.what} failed (${code ?? `HTTP ${status}`})${guess}`)
  }
  return new StoreError('UPSTREAM_ERROR', `${context.what} failed (${code === undefined ? `HTTP ${status}` : `HTTP ${status} ${code}`})`)
}
