// S3's error codes as StoreErrors: the code callers branch on, and what to do in the message.
import t from 'tap'
import { s3Failure } from '../../../../lib/models/store/s3/failures.js'

const context = { what: 'GET s3://models-bk/prod/iris/manifest.json', region: 'eu-west-1', credentials: 'static keys' }

t.test('each named code gets its store code and advice', async (t) => {
  const cases: ReadonlyArray<readonly [number, string | undefined, string, RegExp]> = [
    [404, 'NoSuchKey', 'NOT_FOUND', /\(NoSuchKey\): no such key$/],
    [404, undefined, 'NOT_FOUND', /\(NoSuchKey\)/],
    [404, 'NoSuchBucket', 'UNREADABLE', /the bucket does not exist/],
    [403, 'AccessDenied', 'UNREADABLE', /access denied to static keys: instances need s3:ListBucket and s3:GetObject/],
    [403, 'SignatureDoesNotMatch', 'UNREADABLE', /secret access key of static keys is not the one for its access key id/],
    [403, 'InvalidAccessKeyId', 'UNREADABLE', /no such access key id/],
    [403, 'RequestTimeTooSkewed', 'UNREADABLE', /clock is more than 15 minutes off the server's: synchronise it \(NTP/],
    [400, 'ExpiredToken', 'UNREADABLE', /session token of static keys has expired/],
    [400, 'TokenRefreshRequired', 'UNREADABLE', /must be renewed/],
    [503, 'SlowDown', 'UPSTREAM_ERROR', /throttling requests, still after retries/],
    [412, 'PreconditionFailed', 'PRECONDITION_FAILED', /condition on its ETag does not hold/],
    [412, undefined, 'PRECONDITION_FAILED', /\(HTTP 412\)/],
    [409, 'ConditionalRequestConflict', 'UPSTREAM_ERROR', /conflicting write/],
    [403, undefined, 'UNREADABLE', /\(HTTP 403\): access denied, a wrong secret or a clock more than 15 minutes off/],
    [401, 'Unauthorized', 'UNREADABLE', /\(Unauthorized\)$/],
    [500, 'InternalError', 'UPSTREAM_ERROR', /\(HTTP 500 InternalError\)$/],
    [502, undefined, 'UPSTREAM_ERROR', /\(HTTP 502\)$/],
  ]
  for (const [status, code, storeCode, message] of cases) {
    const error = s3Failure(status, code, undefined, context)
    t.equal(error.code, storeCode, `${status} ${code}`)
    t.match(error.message, message)
    t.ok(error.message.startsWith(`${context.what} failed (`))
  }
})

t.test('a bucket in another region says which, from x-amz-bucket-region, whatever the code', async (t) => {
  t.match(s3Failure(301, 'PermanentRedirect', 'us-west-2', context), {
    code: 'UNREADABLE',
    message: `${context.what} failed (PermanentRedirect): the bucket is in region us-west-2, not eu-west-1: set AWS_REGION=us-west-2`,
  })
  t.match(s3Failure(400, undefined, 'us-west-2', context), { message: /failed \(HTTP 400\): the bucket is in region us-west-2/ })
  t.match(s3Failure(403, 'AccessDenied', 'eu-west-1', context), { message: /access denied/ }, 'the same region is no redirect')
})
