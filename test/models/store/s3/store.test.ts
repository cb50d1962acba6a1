// The S3 store against the tests' own S3 stand-in on loopback, which checks every signature as S3
// does: one listing a pass, reads, stats and conditional writes, every page of a large listing,
// retries on what S3 asks clients to retry, and each refusal named without a credential in sight.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import type { Store } from '../../../../lib/models/store/store.js'
import { createS3Client } from '../../../../lib/models/store/s3/client.js'
import { createCredentialSource } from '../../../../lib/models/store/s3/credentials.js'
import { s3Endpoint } from '../../../../lib/models/store/s3/endpoint.js'
import { createS3Store } from '../../../../lib/models/store/s3/store.js'
import { scanStore } from '../../../../lib/models/store/scan.js'
import { fakeImds, ROLE, ROLES_PATH } from '../../../fixtures/s3/imds.js'
import { STAND_IN_CREDENTIALS, type StandIn, startStandIn } from '../../../fixtures/s3/stand-in.js'

const BUCKET = 'models-bk'
const SECRETS = [STAND_IN_CREDENTIALS.secretAccessKey]

type Options = Readonly<{ prefix?: string; timeoutMs?: number; maxBytes?: number; region?: string; secret?: string; token?: string }>

const storeOn = (standIn: StandIn, { prefix = 'prod/', timeoutMs = 2000, maxBytes = 1 << 20, region = 'us-east-1', secret, token }: Options = {}): Store =>
  createS3Store({
    bucket: BUCKET,
    prefix,
    maxBytes,
    client: createS3Client({
      endpoint: s3Endpoint(BUCKET, { endpoint: new URL(standIn.url), region }),
      credentials: createCredentialSource({
        accessKeyId: STAND_IN_CREDENTIALS.accessKeyId,
        secretAccessKey: secret ?? STAND_IN_CREDENTIALS.secretAccessKey,
        sessionToken: token,
        imds: { disabled: true, endpoint: new URL('http://127.0.0.1:9') },
      }),
      timeoutMs,
      backoffMs: () => 5,
    }),
  })

const seeded = async (t: Test, files: Readonly<Record<string, string>> = {}): Promise<StandIn> => {
  const standIn = await startStandIn(t, { buckets: [BUCKET] })
  for (const [key, text] of Object.entries(files)) standIn.put(BUCKET, key, Buffer.from(text))
  return standIn
}

/** Fails the test when a message or a logged query holds a secret. */
const noSecret = (t: Test, text: string): void => {
  for (const secret of SECRETS) t.notOk(text.includes(secret), 'no secret in the text')
  t.notMatch(text, /Signature=|X-Amz-Security-Token|AKIDSTANDINEXAMPLE/i)
}

const IRIS = {
  'prod/iris/manifest.json': '{"default_version":"1"}',
  'prod/iris/1/model.json': '{"name":"iris"}',
  'prod/iris-v2/manifest.json': '{"default_version":"1"}',
  'prod/cars/1/model.json': '{}',
  'prod/README': 'not a model',
  'prod/a//b/manifest.json': '{}',
  'prod/folder/': '',
  'prodx/iris/manifest.json': '{}',
  'staging/iris/manifest.json': '{}',
}

t.test('a scan is one listing: the models with a manifest under the prefix, and each file stat from it', async (t) => {
  const standIn = await seeded(t, IRIS)
  const store = storeOn(standIn)
  t.equal(store.description, 's3://models-bk/prod/')
  const scan = await scanStore(store)
  t.same(scan.models, ['iris', 'iris-v2'], 'iris-v2 is its own model, cars has no manifest, other prefixes are not read')
  t.same(standIn.requests.ListObjectsV2, 1)
  const stat = await scan.stat('iris/1/model.json')
  t.same(stat, { size: 15, mtimeMs: stat.mtimeMs, etag: (standIn.get(BUCKET, 'prod/iris/1/model.json') as { etag: string }).etag })
  t.ok(stat.mtimeMs > 0)
  await t.rejects(scan.stat('iris/2/model.json'), { code: 'NOT_FOUND', message: 's3://models-bk/prod/iris/2/model.json not found (not in the listing)' })
  await t.rejects(scan.stat('../x'), { code: 'INVALID_PATH' })
  t.same(standIn.requests.HeadObject, 0, 'no HEAD in a pass')
  t.same(await store.list(), ['iris', 'iris-v2'])
  t.same(await storeOn(standIn, { prefix: '' }).list(), [], 'at the root, no key is <model>/manifest.json')
})

t.test('every page of a listing is read: 2 500 keys in three requests', async (t) => {
  const standIn = await seeded(t)
  for (let i = 0; i < 2500; i++) standIn.put(BUCKET, `prod/m${String(i).padStart(4, '0')}/manifest.json`, Buffer.from('{}'))
  const scan = await scanStore(storeOn(standIn))
  t.equal(scan.models.length, 2500)
  t.equal(scan.models.at(-1), 'm2499')
  t.equal(standIn.requests.ListObjectsV2, 3)
})

t.test('read is a GET, stat a HEAD; a missing key is NOT_FOUND; a large body TOO_LARGE', async (t) => {
  const standIn = await seeded(t, IRIS)
  const store = storeOn(standIn, { maxBytes: 20 })
  t.equal((await store.read('iris/1/model.json')).toString(), '{"name":"iris"}')
  t.same(await store.stat('iris/1/model.json'), await (await scanStore(store)).stat('iris/1/model.json'), 'a HEAD agrees with the listing')
  await t.rejects(store.read('iris/9/model.json'), { code: 'NOT_FOUND', message: 'GET s3://models-bk/prod/iris/9/model.json failed (NoSuchKey): no such key' })
  await t.rejects(store.stat('iris/9/model.json'), { code: 'NOT_FOUND', message: /^HEAD s3:\/\/models-bk\/prod\/iris\/9\/model\.json failed \(NoSuchKey\)/ })
  standIn.put(BUCKET, 'prod/iris/1/big.onnx', Buffer.alloc(100_000))
  await t.rejects(store.read('iris/1/big.onnx'), {
    code: 'TOO_LARGE',
    message: 'GET s3://models-bk/prod/iris/1/big.onnx sent a body over the limit of 20 bytes',
  })
  await t.rejects(store.read('iris/a b?c#d%/model.json'), { code: 'NOT_FOUND' }, 'a key with reserved characters is signed and sent as S3 wants')
  standIn.put(BUCKET, 'prod/iris/a b+c/model.json', Buffer.from('odd'))
  t.equal((await store.read('iris/a b+c/model.json')).toString(), 'odd')
  await t.rejects(store.read('/abs'), { code: 'INVALID_PATH' })
})

t.test('write: If-None-Match creates once, If-Match replaces only the ETag read; the stat is the new one', async (t) => {
  const standIn = await seeded(t, IRIS)
  const store = storeOn(standIn)
  const created = await store.write('cars/manifest.json', Buffer.from('{"default_version":"1"}'), { ifNoneMatch: '*' })
  t.same(created, await store.stat('cars/manifest.json'))
  t.equal(standIn.get(BUCKET, 'prod/cars/manifest.json')?.contentType, 'application/json')
  await t.rejects(store.write('cars/manifest.json', Buffer.from('{}'), { ifNoneMatch: '*' }), {
    code: 'PRECONDITION_FAILED',
    message: 's3://models-bk/prod/cars/manifest.json is already there',
  })
  const replaced = await store.write('cars/manifest.json', Buffer.from('{"default_version":"2"}'), { ifMatch: created.etag })
  t.not(replaced.etag, created.etag)
  await t.rejects(store.write('cars/manifest.json', Buffer.from('{}'), { ifMatch: created.etag }), {
    code: 'PRECONDITION_FAILED',
    message: `s3://models-bk/prod/cars/manifest.json changed since its etag was ${created.etag}`,
  })
  await t.rejects(store.write('gone/manifest.json', Buffer.from('{}'), { ifMatch: created.etag }), {
    code: 'PRECONDITION_FAILED',
    message: /gone\/manifest\.json is not there, so it cannot match/,
  })
  t.equal((await store.read('cars/manifest.json')).toString(), '{"default_version":"2"}')
  await store.write('cars/1/model.onnx', Buffer.from([1, 2, 3]), { ifNoneMatch: '*' })
  t.equal(standIn.get(BUCKET, 'prod/cars/1/model.onnx')?.contentType, 'application/octet-stream')
})

t.test('twenty conditional writers from one ETag: exactly one wins', async (t) => {
  const standIn = await seeded(t, IRIS)
  const store = storeOn(standIn)
  const { etag } = await store.stat('iris/manifest.json')
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => store.write('iris/manifest.json', Buffer.from(`{"default_version":"${i}"}`), { ifMatch: etag })),
  )
  const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [i] : []))
  t.equal(won.length, 1)
  t.ok(outcomes.every((outcome) => outcome.status === 'fulfilled' || (outcome.reason as { code: string }).code === 'PRECONDITION_FAILED'))
  t.equal((await store.read('iris/manifest.json')).toString(), `{"default_version":"${won[0]}"}`)
})

t.test('5xx, SlowDown, 409 and resets are retried twice; a third is the named error', async (t) => {
  const standIn = await seeded(t, IRIS)
  const store = storeOn(standIn)
  standIn.fail({ operation: 'GetObject', status: 503, code: 'SlowDown', times: 2 })
  t.equal((await store.read('iris/manifest.json')).toString(), '{"default_version":"1"}', 'two SlowDowns, then the object')
  standIn.fail({ operation: 'GetObject', status: 503, code: 'SlowDown', times: 3 })
  await t.rejects(store.read('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: /failed \(SlowDown\): the server is throttling requests, still after retries/,
  })
  standIn.fail({ operation: 'ListObjectsV2', status: 500, code: 'InternalError', times: 2 })
  t.same((await scanStore(store)).models, ['iris', 'iris-v2'])
  standIn.reset({ operation: 'GetObject', times: 2 })
  t.equal((await store.read('iris/1/model.json')).toString(), '{"name":"iris"}', 'two resets, then the object')
  standIn.reset({ operation: 'GetObject', times: 3 })
  await t.rejects(store.read('iris/1/model.json'), {
    code: 'UPSTREAM_ERROR',
    message: /^GET s3:\/\/models-bk\/prod\/iris\/1\/model\.json failed: connection closed \(3 tries\)$/,
  })
  const { etag } = await store.stat('iris/manifest.json')
  standIn.fail({ operation: 'PutObject', status: 409, code: 'ConditionalRequestConflict', times: 1 })
  await store.write('iris/manifest.json', Buffer.from('{"default_version":"1","versions":["1"]}'), { ifMatch: etag })
  t.equal(standIn.requests.PutObject, 2, 'the 409 was retried')
  standIn.fail({ operation: 'GetObject', status: 400, code: 'InvalidArgument' })
  await t.rejects(store.read('iris/manifest.json'), { code: 'UPSTREAM_ERROR', message: /\(HTTP 400 InvalidArgument\)$/ }, 'a 4xx is not retried')
})

t.test('a server that does not answer is a timeout, not retried', async (t) => {
  const standIn = await seeded(t, IRIS)
  standIn.hang({ operation: 'GetObject' })
  const started = Date.now()
  await t.rejects(storeOn(standIn, { timeoutMs: 200 }).read('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: 'GET s3://models-bk/prod/iris/manifest.json timed out after 200 ms',
  })
  t.ok(Date.now() - started < 1500)
})

t.test('a server that is down is named so', async (t) => {
  const standIn = await seeded(t)
  const store = storeOn(standIn)
  await standIn.close()
  await t.rejects(store.list(), { code: 'UPSTREAM_ERROR', message: 'ListObjectsV2 s3://models-bk/prod/ failed: connection refused' })
})

t.test('refusals are named with what to do, and never show a credential', async (t) => {
  const standIn = await seeded(t, IRIS)
  const wrong = storeOn(standIn, { secret: 'not-the-secret' })
  const denied = await t.rejects(wrong.read('iris/manifest.json'), {
    code: 'UNREADABLE',
    message: /failed \(SignatureDoesNotMatch\): the server computes another signature/,
  })
  noSecret(t, String(denied))
  await t.rejects(wrong.stat('iris/manifest.json'), { code: 'UNREADABLE', message: /\(HTTP 403\): access denied, a wrong secret or a clock/ })
  standIn.clockOffsetMs = 20 * 60_000
  await t.rejects(storeOn(standIn).list(), { code: 'UNREADABLE', message: /\(RequestTimeTooSkewed\): this host's clock is more than 15 minutes off/ })
  standIn.clockOffsetMs = 0
  standIn.fail({ operation: 'GetObject', status: 403, code: 'AccessDenied' })
  await t.rejects(storeOn(standIn).read('iris/manifest.json'), { message: /\(AccessDenied\): access denied to static keys/ })
  const other = await startStandIn(t, { buckets: [] })
  other.addBucket(BUCKET, { region: 'eu-central-1', wrongRegion: 'redirect' })
  await t.rejects(storeOn(other).list(), { code: 'UNREADABLE', message: /the bucket is in region eu-central-1, not us-east-1: set AWS_REGION=eu-central-1/ })
  const none = await startStandIn(t, { buckets: [] })
  await t.rejects(storeOn(none).list(), { code: 'UNREADABLE', message: /\(NoSuchBucket\): the bucket does not exist/ })
  for (const entry of standIn.log) noSecret(t, `${entry.path}?${entry.query}`)
})

t.test('ExpiredToken: static keys cannot be renewed, and say so', async (t) => {
  const standIn = await seeded(t, IRIS)
  standIn.credentials.set(STAND_IN_CREDENTIALS.accessKeyId, {
    secretAccessKey: STAND_IN_CREDENTIALS.secretAccessKey,
    sessionToken: 'session-tok',
    isExpired: true,
  })
  const error = await t.rejects(storeOn(standIn, { token: 'session-tok' }).read('iris/manifest.json'), { code: 'UNREADABLE' })
  t.match(String(error), /AWS_SESSION_TOKEN/)
  t.notMatch(String(error), /session-tok/)
})

t.test('an instance role: its keys sign, an ExpiredToken fetches new ones and the request is tried once more', async (t) => {
  const imds = await fakeImds(t)
  const standIn = await seeded(t, IRIS)
  const first = imds.credentials()
  standIn.credentials.set(first.AccessKeyId, { secretAccessKey: first.SecretAccessKey, sessionToken: first.Token })
  const store = createS3Store({
    bucket: BUCKET,
    prefix: 'prod/',
    maxBytes: 1 << 20,
    client: createS3Client({
      endpoint: s3Endpoint(BUCKET, { endpoint: new URL(standIn.url), region: 'us-east-1' }),
      credentials: createCredentialSource({ imds: { disabled: false, endpoint: imds.endpoint } }),
      timeoutMs: 2000,
      backoffMs: () => 5,
    }),
  })
  t.same(await store.list(), ['iris', 'iris-v2'])
  // The server calls the token expired before its Expiration; the service has new keys already.
  standIn.credentials.set(first.AccessKeyId, { secretAccessKey: first.SecretAccessKey, sessionToken: first.Token, isExpired: true })
  const second = imds.rotate(Date.now() + 6 * 3600_000)
  standIn.credentials.set(second.AccessKeyId, { secretAccessKey: second.SecretAccessKey, sessionToken: second.Token })
  t.equal((await store.read('iris/manifest.json')).toString(), '{"default_version":"1"}')
  t.equal(imds.count(`${ROLES_PATH}${ROLE}`), 2, 'fetched once more after the ExpiredToken')
  t.same(
    standIn.log.filter((entry) => entry.operation === 'GetObject').map((entry) => entry.code),
    ['ExpiredToken', undefined],
  )
})

t.test('a small body over the cap, a HEAD without an ETag, a PUT refused: each named, none a precondition', async (t) => {
  const standIn = await seeded(t, IRIS)
  standIn.put(BUCKET, 'prod/iris/1/small.onnx', Buffer.alloc(100))
  await t.rejects(storeOn(standIn, { maxBytes: 20 }).read('iris/1/small.onnx'), { code: 'TOO_LARGE', message: /over the limit of 20 bytes/ })
  const store = storeOn(standIn)
  standIn.fail({ operation: 'HeadObject', status: 200, code: 'NotAnError' })
  await t.rejects(store.stat('iris/manifest.json'), { code: 'UPSTREAM_ERROR', message: 'HEAD s3://models-bk/prod/iris/manifest.json answered without an ETag' })
  standIn.fail({ operation: 'PutObject', status: 403, code: 'AccessDenied' })
  await t.rejects(store.write('iris/manifest.json', Buffer.from('{}'), { ifNoneMatch: '*' }), {
    code: 'UNREADABLE',
    message: /\(AccessDenied\): access denied/,
  })
})

t.test('a HEAD without Last-Modified has mtime 0; one without a length is named', async (t) => {
  const standIn = await seeded(t, IRIS)
  const store = storeOn(standIn)
  standIn.fail({ operation: 'HeadObject', status: 200, code: 'NotAnError', headers: { etag: '"e1"' } })
  t.match(await store.stat('iris/manifest.json'), { etag: '"e1"', mtimeMs: 0 })
})

t.test('a HEAD answered without a length, and keys that cannot be signed, are named', async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { etag: '"e"', 'transfer-encoding': 'chunked' })
    res.end()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const bare = createS3Store({
    bucket: BUCKET,
    prefix: '',
    maxBytes: 100,
    client: createS3Client({
      endpoint: s3Endpoint(BUCKET, { endpoint: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), region: 'us-east-1' }),
      credentials: createCredentialSource({ ...STAND_IN_CREDENTIALS, imds: { disabled: true, endpoint: new URL('http://127.0.0.1:9') } }),
      timeoutMs: 1000,
    }),
  })
  await t.rejects(bare.stat('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: 'HEAD s3://models-bk/iris/manifest.json answered without a Content-Length',
  })
  const standIn = await seeded(t, IRIS)
  await t.rejects(storeOn(standIn, { token: 'a token with spaces' }).list(), { code: 'UNREADABLE', message: /cannot sign the request: the session token/ })
})
