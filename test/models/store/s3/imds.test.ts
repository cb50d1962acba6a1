import t, { type Test } from 'tap'
import { StoreError } from '../../../../lib/models/store/error.js'
import { createMetadataClient, MAX_BYTES, METADATA_TIMEOUT_MS, ROLES_PATH, TOKEN_PATH, TOKEN_TTL_S } from '../../../../lib/models/store/s3/imds.js'
import { fakeImds, type FakeImds, ROLE } from '../../../fixtures/s3/imds.js'
import { closedPort } from '../../../fixtures/tcp.js'

const CREDENTIALS_PATH = `${ROLES_PATH}${ROLE}`
const HOUR = 3600_000

/** A clock the test moves. */
const clock = (start = Date.parse('2026-05-01T12:00:00Z')) => {
  let ms = start
  return { now: () => ms, advance: (by: number) => void (ms += by) }
}

/** The requests as `METHOD path`, in order. */
const calls = (imds: FakeImds): string[] => imds.requests.map((r) => `${r.method} ${r.path}`)

/** Every secret the fake gave: the key, the secret, the session token, and each IMDS token sent. */
const secrets = (imds: FakeImds): string[] => {
  const { AccessKeyId, SecretAccessKey, Token } = imds.credentials()
  return [AccessKeyId, SecretAccessKey, Token, ...imds.requests.flatMap((r) => (r.token === undefined ? [] : [r.token]))]
}

/** The rejection as a StoreError UNREADABLE whose message matches `message` and holds no secret. */
const refusal = async (t: Test, imds: FakeImds, promise: Promise<unknown>, message: RegExp): Promise<StoreError> => {
  const error = await promise.then(
    () => t.fail('resolved'),
    (error: unknown) => error,
  )
  t.type(error, StoreError)
  t.match(error, { code: 'UNREADABLE', message })
  const text = `${String((error as Error).message)} ${String((error as Error).cause)}`
  for (const secret of secrets(imds)) t.notOk(text.includes(secret), 'no secret in the message or its cause')
  return error as StoreError
}

t.test('a token PUT with its TTL header, then the role and its credentials, each GET with the token', async (t) => {
  const imds = await fakeImds(t, { expiresAt: Date.parse('2026-05-01T18:00:00Z') })
  const fetched = await createMetadataClient(imds.endpoint).fetchCredentials()
  const served = imds.credentials()
  t.same(fetched, {
    role: ROLE,
    credentials: { accessKeyId: served.AccessKeyId, secretAccessKey: served.SecretAccessKey, sessionToken: served.Token },
    expiresAt: Date.parse('2026-05-01T18:00:00Z'),
  })
  t.same(calls(imds), [`PUT ${TOKEN_PATH}`, `GET ${ROLES_PATH}`, `GET ${CREDENTIALS_PATH}`])
  const [put, list, get] = imds.requests
  t.match(put, { ttl: String(TOKEN_TTL_S), token: undefined })
  t.equal(TOKEN_TTL_S, 21600)
  t.ok(list?.token !== undefined && list.token === get?.token, 'both GETs carry the token the PUT gave')
  t.equal(imds.count(TOKEN_PATH), 1)
  t.ok(await imds.allClosed(), 'no connection kept open')
})

t.test('the token is kept for its TTL, and a new one asked for a minute before it ends', async (t) => {
  const imds = await fakeImds(t)
  const time = clock()
  const client = createMetadataClient(imds.endpoint, { now: time.now })
  await client.fetchCredentials()
  time.advance(TOKEN_TTL_S * 1000 - 61_000)
  await client.fetchCredentials()
  t.equal(imds.count(TOKEN_PATH), 1, 'reused')
  time.advance(2000)
  await client.fetchCredentials()
  t.equal(imds.count(TOKEN_PATH), 2, 'renewed')
  t.equal(imds.count(CREDENTIALS_PATH), 3)
})

t.test('a 401 to a GET brings one new token and that GET once more', async (t) => {
  const imds = await fakeImds(t)
  const client = createMetadataClient(imds.endpoint)
  await client.fetchCredentials()
  imds.expireTokens()
  const fetched = await client.fetchCredentials()
  t.equal(fetched.credentials.accessKeyId, imds.credentials().AccessKeyId)
  t.same(calls(imds).slice(3), [`GET ${ROLES_PATH}`, `PUT ${TOKEN_PATH}`, `GET ${ROLES_PATH}`, `GET ${CREDENTIALS_PATH}`])
  const [refused, , repeated] = imds.requests.slice(3)
  t.not(refused?.token, repeated?.token, 'the repeat carries the new token')
})

t.test('a second 401, to the token just given, is an error: one new token, no more', async (t) => {
  const imds = await fakeImds(t)
  imds.answer(ROLES_PATH, { status: 401 })
  await refusal(
    t,
    imds,
    createMetadataClient(imds.endpoint).fetchCredentials(),
    /answered GET \/latest\/meta-data\/iam\/security-credentials\/ with HTTP 401 to a token it had just given$/,
  )
  t.same(calls(imds), [`PUT ${TOKEN_PATH}`, `GET ${ROLES_PATH}`, `PUT ${TOKEN_PATH}`, `GET ${ROLES_PATH}`])
})

t.test('a service that does not answer is given 1 s, once, and its connection is closed', async (t) => {
  const imds = await fakeImds(t)
  imds.set('hang')
  t.equal(METADATA_TIMEOUT_MS, 1000)
  const started = performance.now()
  await refusal(
    t,
    imds,
    createMetadataClient(imds.endpoint).fetchCredentials(),
    new RegExp(
      `^the instance metadata service at ${imds.endpoint.origin} did not answer PUT /latest/api/token within 1000 ms \\(set AWS_EC2_METADATA_DISABLED=true off EC2\\)$`,
    ),
  )
  const elapsed = performance.now() - started
  t.ok(elapsed >= 990 && elapsed < 1500, `${Math.round(elapsed)} ms`)
  t.equal(imds.requests.length, 1, 'one try')
  t.equal(imds.accepted(), 1)
  t.ok(await imds.allClosed(), 'the socket is closed')
})

t.test('the timeout covers the body too', async (t) => {
  const imds = await fakeImds(t)
  imds.set('slow-body')
  await refusal(
    t,
    imds,
    createMetadataClient(imds.endpoint, { timeoutMs: 200 }).fetchCredentials(),
    new RegExp(`did not answer GET ${CREDENTIALS_PATH} within 200 ms`),
  )
  t.equal(imds.count(CREDENTIALS_PATH), 1, 'one try')
  t.ok(await imds.allClosed())
})

t.test('an endpoint nobody listens on is an error in words, tried once', async (t) => {
  const origin = `http://127.0.0.1:${await closedPort()}`
  const error = await createMetadataClient(new URL(origin))
    .fetchCredentials()
    .catch((error: unknown) => error)
  t.match(error, {
    code: 'UNREADABLE',
    message: `the instance metadata service at ${origin} failed PUT /latest/api/token: connection refused (set AWS_EC2_METADATA_DISABLED=true off EC2)`,
  })
})

t.test('a refused token or role list is an error naming the path and the status, with a hint where there is one', async (t) => {
  const cases: ReadonlyArray<readonly [string, number, string, RegExp]> = [
    [TOKEN_PATH, 403, '', /answered PUT \/latest\/api\/token with HTTP 403: instance metadata is turned off or not allowed on this instance$/],
    [TOKEN_PATH, 500, '', /answered PUT \/latest\/api\/token with HTTP 500$/],
    [TOKEN_PATH, 200, '', /answered PUT \/latest\/api\/token with no token$/],
    [TOKEN_PATH, 200, 'two words', /answered PUT \/latest\/api\/token with no token$/],
    [ROLES_PATH, 404, '', /with HTTP 404: the instance has no instance role; attach one, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY$/],
    [ROLES_PATH, 500, '', /answered GET \/latest\/meta-data\/iam\/security-credentials\/ with HTTP 500$/],
    [ROLES_PATH, 200, '', /answered GET \/latest\/meta-data\/iam\/security-credentials\/ with no role name$/],
    [ROLES_PATH, 200, 'not a role!', /with no role name$/],
    [CREDENTIALS_PATH, 404, '', new RegExp(`answered GET ${CREDENTIALS_PATH} with HTTP 404: the role was replaced meanwhile`)],
  ]
  for (const [path, status, body, message] of cases) {
    await t.test(`${path} ${status} ${JSON.stringify(body)}`, async (t) => {
      const imds = await fakeImds(t)
      imds.answer(path, { status, body })
      await refusal(t, imds, createMetadataClient(imds.endpoint).fetchCredentials(), message)
    })
  }
})

t.test('the role is the first line of the list', async (t) => {
  const imds = await fakeImds(t)
  imds.answer(ROLES_PATH, { status: 200, body: `${ROLE}\nsome-other-role\n` })
  t.equal((await createMetadataClient(imds.endpoint).fetchCredentials()).role, ROLE)
})

t.test('a credentials document that is not JSON, not Success or missing a field is an error that quotes no value', async (t) => {
  const valid = (imds: FakeImds) => ({ Code: 'Success', Type: 'AWS-HMAC', LastUpdated: '2026-05-01T11:00:00Z', ...imds.credentials() })
  const cases: ReadonlyArray<readonly [string, (imds: FakeImds) => unknown, RegExp]> = [
    ['an array', () => [], /that is not a JSON object$/],
    ['Code another word', (imds) => ({ ...valid(imds), Code: 'AssumeRoleUnauthorizedAccess' }), /that has Code AssumeRoleUnauthorizedAccess, not Success$/],
    ['Code not a word', (imds) => ({ ...valid(imds), Code: `Failed ${imds.credentials().SecretAccessKey}` }), /that has no Code Success$/],
    ['no Code', (imds) => ({ ...valid(imds), Code: undefined }), /that has no Code Success$/],
    ['another Type', (imds) => ({ ...valid(imds), Type: 'AWS-OTHER' }), /that has a Type other than AWS-HMAC$/],
    ['no Type', (imds) => ({ ...valid(imds), Type: undefined, AccessKeyId: '' }), /that has no AccessKeyId$/],
    ['no SecretAccessKey', (imds) => ({ ...valid(imds), SecretAccessKey: 7 }), /that has no SecretAccessKey$/],
    ['a Token with a space', (imds) => ({ ...valid(imds), Token: `${imds.credentials().Token} x` }), /that has no Token$/],
    [
      'Expiration not ISO',
      (imds) => ({ ...valid(imds), Expiration: 'Fri, 01 May 2026 18:00:00 GMT' }),
      /that has no Expiration date in UTC \(YYYY-MM-DDThh:mm:ssZ\)$/,
    ],
    ['Expiration no date', (imds) => ({ ...valid(imds), Expiration: '2026-13-45T99:99:99Z' }), /that has no Expiration date/],
    ['no Expiration', (imds) => ({ ...valid(imds), Expiration: undefined }), /that has no Expiration date/],
  ]
  for (const [name, document, message] of cases) {
    await t.test(name, async (t) => {
      const imds = await fakeImds(t)
      imds.answer(CREDENTIALS_PATH, { status: 200, body: JSON.stringify(document(imds)) })
      await refusal(
        t,
        imds,
        createMetadataClient(imds.endpoint).fetchCredentials(),
        new RegExp(`^the instance metadata service at .* answered GET ${CREDENTIALS_PATH} with a credentials document ${message.source}`),
      )
    })
  }
  await t.test('not JSON, the secret and the token inside it', async (t) => {
    const imds = await fakeImds(t)
    imds.set('malformed')
    const error = await refusal(
      t,
      imds,
      createMetadataClient(imds.endpoint).fetchCredentials(),
      new RegExp(`answered GET ${CREDENTIALS_PATH} with a body that is not JSON$`),
    )
    t.equal(error.cause, undefined, "the parser's error quotes the body, so it is not kept")
  })
  await t.test('the failed document IMDS serves', async (t) => {
    const imds = await fakeImds(t)
    imds.set('failed')
    await refusal(t, imds, createMetadataClient(imds.endpoint).fetchCredentials(), /that has Code AssumeRoleUnauthorizedAccess, not Success$/)
  })
})

t.test('a body over the limit is refused, by its Content-Length or as it streams', async (t) => {
  const declared = await fakeImds(t)
  declared.answer(ROLES_PATH, { status: 200, body: 'r'.repeat(MAX_BYTES + 1) })
  await refusal(t, declared, createMetadataClient(declared.endpoint).fetchCredentials(), new RegExp(`sent more than ${MAX_BYTES} bytes for GET ${ROLES_PATH}$`))
  const streamed = await fakeImds(t)
  streamed.set('huge')
  await refusal(
    t,
    streamed,
    createMetadataClient(streamed.endpoint).fetchCredentials(),
    new RegExp(`sent more than ${MAX_BYTES} bytes for GET ${CREDENTIALS_PATH}$`),
  )
  t.ok(await streamed.allClosed(), 'the rest is not read')
})

t.test('the fake speaks the protocol: a token needs a PUT with a TTL, a GET needs a token it gave', async (t) => {
  const imds = await fakeImds(t)
  const at = (path: string) => new URL(path, imds.endpoint)
  t.equal((await fetch(at(TOKEN_PATH), { method: 'PUT' })).status, 400, 'no TTL')
  t.equal((await fetch(at(TOKEN_PATH), { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21601' } })).status, 400, 'TTL too long')
  t.equal((await fetch(at(TOKEN_PATH))).status, 405, 'GET of the token path')
  t.equal((await fetch(at(ROLES_PATH))).status, 401, 'IMDSv1: no token')
  t.equal((await fetch(at(ROLES_PATH), { headers: { 'x-aws-ec2-metadata-token': 'made-up' } })).status, 401, 'a token it never gave')
  const put = await fetch(at(TOKEN_PATH), { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '60' } })
  t.equal(put.headers.get('x-aws-ec2-metadata-token-ttl-seconds'), '60')
  const token = { 'x-aws-ec2-metadata-token': await put.text() }
  t.equal(await (await fetch(at(ROLES_PATH), { headers: token })).text(), ROLE)
  t.equal((await fetch(at(`${ROLES_PATH}other-role`), { headers: token })).status, 404)
  t.equal((await fetch(at(ROLES_PATH), { method: 'POST', headers: token })).status, 405)
  t.equal((await fetch(at('/elsewhere'), { headers: token })).status, 404)
  imds.expireTokens()
  t.equal((await fetch(at(ROLES_PATH), { headers: token })).status, 401, 'expired')
  imds.answer(ROLES_PATH, { status: 500 })
  imds.answer(ROLES_PATH, undefined)
  t.equal((await fetch(at(ROLES_PATH))).status, 401, 'the protocol again')
  const rotated = imds.rotate(Date.parse('2026-05-01T19:00:00Z'))
  t.equal(rotated.Expiration, '2026-05-01T19:00:00Z')
  t.equal(imds.credentials(), rotated)
  t.equal(imds.count(TOKEN_PATH, 'PUT'), 3)
})

t.test('an expiration a few hours ahead by default', async (t) => {
  const imds = await fakeImds(t)
  const fetched = await createMetadataClient(imds.endpoint).fetchCredentials()
  t.ok(fetched.expiresAt > Date.now() + 5 * HOUR)
})
