import t, { type Test } from 'tap'
import { ConfigError } from '../../../../lib/config/config.js'
import { errorMessage } from '../../../../lib/core/errors.js'
import { StoreError } from '../../../../lib/models/store/error.js'
import { type CredentialOptions, createCredentialSource, REFRESH_MARGIN_MS, REFRESH_RETRY_MS } from '../../../../lib/models/store/s3/credentials.js'
import { DEFAULT_METADATA_ENDPOINT, ROLES_PATH, TOKEN_PATH } from '../../../../lib/models/store/s3/imds.js'
import { fakeImds, type FakeImds, ROLE } from '../../../fixtures/s3/imds.js'

const CREDENTIALS_PATH = `${ROLES_PATH}${ROLE}`
const MINUTE = 60_000
const START = Date.parse('2026-05-01T12:00:00Z')
const EXPIRES = START + 60 * MINUTE

/** A clock the test moves. */
const clock = () => {
  let ms = START
  return { now: () => ms, set: (at: number) => void (ms = at) }
}

const KEYS = { accessKeyId: 'AKIDSTATICEXAMPLE', secretAccessKey: 'static/secret+key', sessionToken: 'static-session-token' }

/** The options a test varies, IMDS pointed at the fake (AWS_EC2_METADATA_SERVICE_ENDPOINT). */
const options = (imds: FakeImds, more: Partial<CredentialOptions> = {}, imdsMore: Partial<CredentialOptions['imds']> = {}): CredentialOptions => ({
  ...more,
  imds: { disabled: false, endpoint: imds.endpoint, timeoutMs: 200, ...imdsMore },
})

/** The credentials the fake serves, as the signer takes them. */
const served = (imds: FakeImds) => {
  const { AccessKeyId, SecretAccessKey, Token } = imds.credentials()
  return { accessKeyId: AccessKeyId, secretAccessKey: SecretAccessKey, sessionToken: Token }
}

/** The rejection, a StoreError UNREADABLE matching `message`, that names none of `secrets`. */
const refusal = async (t: Test, promise: Promise<unknown>, message: RegExp | string, secrets: ReadonlyArray<string | undefined>): Promise<void> => {
  const error = await promise.then(
    () => t.fail('resolved'),
    (error: unknown) => error,
  )
  t.type(error, StoreError)
  t.match(error, { code: 'UNREADABLE', message })
  for (const secret of secrets) if (secret !== undefined) t.notOk(errorMessage(error).includes(secret), 'no secret in the message')
}

t.test('static keys win: the instance role is not asked', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds, { ...KEYS, keysFrom: 'systemd credentials' }))
  t.equal(source.describe, 'systemd credentials')
  t.same(await source.get(), KEYS)
  const bare = createCredentialSource(options(imds, { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: '' }))
  t.equal(bare.describe, 'static keys', 'unsaid where they came from')
  t.same(await bare.get(), { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: undefined }, 'an empty token is none')
  t.equal(imds.requests.length, 0)
})

t.test('static keys cannot be renewed: after ExpiredToken, refresh says what to set', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds, { ...KEYS, keysFrom: 'environment' }))
  await refusal(
    t,
    source.refresh(KEYS),
    'S3 answered ExpiredToken to the keys from environment: set a new AWS_SESSION_TOKEN, with the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY issued with it, and restart',
    Object.values(KEYS),
  )
  t.equal(imds.requests.length, 0)
})

t.test('half a pair of keys, or a token alone, is a configuration error naming the variables, not the values', async (t) => {
  const imds = await fakeImds(t)
  const cases: ReadonlyArray<readonly [Partial<CredentialOptions>, RegExp]> = [
    [{ accessKeyId: KEYS.accessKeyId }, /^AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY: set both \(or the systemd credentials svc-s3-access-key-id/],
    [
      { secretAccessKey: KEYS.secretAccessKey, accessKeyId: '' },
      /^AWS_SECRET_ACCESS_KEY is set without AWS_ACCESS_KEY_ID: set both .* or neither to use an instance role$/,
    ],
    [{ sessionToken: KEYS.sessionToken }, /^AWS_SESSION_TOKEN is set without AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set all three/],
  ]
  for (const [keys, problem] of cases) {
    const error = t.throws(() => createCredentialSource(options(imds, keys))) as ConfigError
    t.type(error, ConfigError)
    t.match(error.problems, [problem])
    for (const secret of Object.values(KEYS)) t.notOk(error.message.includes(secret))
  }
  t.equal(imds.requests.length, 0)
})

t.test('no keys and IMDS disabled: every call says what to set, and nothing is asked', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds, {}, { disabled: true }))
  t.equal(source.describe, 'no credentials')
  const message =
    'no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the systemd credentials svc-s3-access-key-id and svc-s3-secret-access-key), ' +
    'or run on EC2 with an instance role and AWS_EC2_METADATA_DISABLED unset; shared profiles, ECS task roles and web identity are not supported'
  await refusal(t, source.get(), message, [])
  await refusal(t, source.refresh(), message, [])
  t.equal(imds.requests.length, 0)
})

t.test('an endpoint that is not an http:// origin is a configuration error', async (t) => {
  for (const endpoint of ['https://169.254.169.254', 'http://169.254.169.254/latest', 'http://user:pass@169.254.169.254', 'http://169.254.169.254/?x=1']) {
    const error = t.throws(() => createCredentialSource({ imds: { disabled: false, endpoint: new URL(endpoint) } })) as ConfigError
    t.type(error, ConfigError, endpoint)
    t.match(error.problems, [
      /^AWS_EC2_METADATA_SERVICE_ENDPOINT=.*: expected an http:\/\/ origin, http:\/\/host\[:port\] \(default http:\/\/169\.254\.169\.254\)$/,
    ])
    t.notOk(error.message.includes('pass'), 'no password shown')
  }
  t.ok(createCredentialSource({ imds: { disabled: false, endpoint: new URL(DEFAULT_METADATA_ENDPOINT) } }), 'the default is one')
})

t.test('without keys, the instance role at AWS_EC2_METADATA_SERVICE_ENDPOINT, named once known', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds))
  t.equal(source.describe, `instance role (IMDSv2 at ${imds.endpoint.origin})`)
  t.same(await source.get(), served(imds))
  t.equal(source.describe, `instance role ${ROLE}`)
  t.same(
    imds.requests.map((r) => r.path),
    [TOKEN_PATH, ROLES_PATH, CREDENTIALS_PATH],
  )
})

t.test('credentials are kept with 6 minutes left, and fetched anew with 4', async (t) => {
  const imds = await fakeImds(t, { expiresAt: EXPIRES })
  const time = clock()
  const source = createCredentialSource(options(imds, {}, { now: time.now }))
  const first = await source.get()
  time.set(EXPIRES - 6 * MINUTE)
  t.equal(await source.get(), first, 'kept')
  t.equal(imds.count(CREDENTIALS_PATH), 1)
  imds.rotate(EXPIRES + 60 * MINUTE)
  time.set(EXPIRES - 4 * MINUTE)
  const second = await source.get()
  t.same(second, served(imds), 'the new ones')
  t.not(second.secretAccessKey, first.secretAccessKey)
  t.equal(imds.count(CREDENTIALS_PATH), 2)
  t.equal(imds.count(TOKEN_PATH), 1, 'the token kept too')
  t.equal(REFRESH_MARGIN_MS, 5 * MINUTE)
})

t.test('concurrent calls share one fetch', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds))
  const all = await Promise.all([source.get(), source.get(), source.get(), source.refresh(), source.get()])
  t.equal(new Set(all).size, 1)
  t.equal(imds.count(CREDENTIALS_PATH), 1)
  t.equal(imds.count(TOKEN_PATH), 1)
})

t.test('after ExpiredToken, refresh fetches anew once; a caller still holding the old ones gets the new', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds))
  const old = await source.get()
  imds.rotate(Date.now() + 6 * 3600_000)
  const renewed = await source.refresh(old)
  t.same(renewed, served(imds))
  t.equal(imds.count(CREDENTIALS_PATH), 2)
  t.equal(await source.refresh(old), renewed, 'already replaced: no fetch')
  t.equal(await source.get(), renewed)
  t.equal(imds.count(CREDENTIALS_PATH), 2)
  await source.refresh()
  t.equal(imds.count(CREDENTIALS_PATH), 3, 'refresh without the rejected ones always fetches')
})

t.test('a refresh that fails while the credentials are valid keeps them, reports once, and waits before trying again', async (t) => {
  const imds = await fakeImds(t, { expiresAt: EXPIRES })
  const time = clock()
  const reported: StoreError[] = []
  const source = createCredentialSource(options(imds, { onRefreshFailure: (error) => reported.push(error) }, { now: time.now }))
  const held = await source.get()
  imds.set('hang')
  time.set(EXPIRES - 4 * MINUTE)
  const during = await Promise.all([source.get(), source.get()])
  t.same(during, [held, held], 'the old ones, to both')
  t.equal(reported.length, 1, 'one failure, told once')
  t.match(reported[0], { code: 'UNREADABLE', message: /did not answer GET \/latest\/meta-data\/iam\/security-credentials\/ within 200 ms/ })
  const tries = imds.requests.length
  time.set(EXPIRES - 4 * MINUTE + REFRESH_RETRY_MS - 1)
  t.equal(await source.get(), held)
  t.equal(imds.requests.length, tries, 'no try before REFRESH_RETRY_MS')
  t.equal(reported.length, 1)
  imds.set('ok')
  time.set(EXPIRES - 4 * MINUTE + REFRESH_RETRY_MS)
  t.same(await source.get(), served(imds))
  t.ok(imds.requests.length > tries, 'tried again')
  t.equal(reported.length, 1)
})

t.test('credentials fetched near their end are not fetched again before REFRESH_RETRY_MS', async (t) => {
  const imds = await fakeImds(t, { expiresAt: START + 3 * MINUTE })
  const time = clock()
  const source = createCredentialSource(options(imds, {}, { now: time.now }))
  await source.get()
  time.set(START + REFRESH_RETRY_MS - 1)
  await source.get()
  t.equal(imds.count(CREDENTIALS_PATH), 1)
  time.set(START + REFRESH_RETRY_MS)
  await source.get()
  t.equal(imds.count(CREDENTIALS_PATH), 2)
})

t.test('credentials already expired when fetched are fetched anew by every call', async (t) => {
  const imds = await fakeImds(t, { expiresAt: START - MINUTE })
  const time = clock()
  const source = createCredentialSource(options(imds, {}, { now: time.now }))
  await source.get()
  await source.get()
  t.equal(imds.count(CREDENTIALS_PATH), 2)
})

t.test('without onRefreshFailure a failed refresh still keeps the valid credentials', async (t) => {
  const imds = await fakeImds(t, { expiresAt: EXPIRES })
  const time = clock()
  const source = createCredentialSource(options(imds, {}, { now: time.now }))
  const held = await source.get()
  imds.set('malformed')
  time.set(EXPIRES - MINUTE)
  t.equal(await source.get(), held)
})

t.test('a refresh that fails once the credentials have expired is an error saying when they did', async (t) => {
  const imds = await fakeImds(t, { expiresAt: EXPIRES })
  const time = clock()
  const source = createCredentialSource(options(imds, {}, { now: time.now }))
  const held = await source.get()
  imds.set('malformed')
  time.set(EXPIRES)
  await refusal(
    t,
    source.get(),
    new RegExp(
      `^the credentials of instance role ${ROLE} expired at 2026-05-01T13:00:00.000Z and could not be renewed: the instance metadata service at .* with a body that is not JSON$`,
    ),
    Object.values(held),
  )
})

t.test('a refresh after ExpiredToken that fails is an error, not the refused credentials', async (t) => {
  const imds = await fakeImds(t)
  const source = createCredentialSource(options(imds))
  const held = await source.get()
  imds.set('failed')
  await refusal(
    t,
    source.refresh(held),
    new RegExp(
      `^S3 answered ExpiredToken to the credentials of instance role ${ROLE}, and new ones could not be had: .* has Code AssumeRoleUnauthorizedAccess, not Success$`,
    ),
    Object.values(held),
  )
})

t.test('no keys and no answer from IMDS: an error naming the variable, the endpoint and the way out', async (t) => {
  const imds = await fakeImds(t)
  imds.set('hang')
  const source = createCredentialSource(options(imds, {}, { timeoutMs: undefined }))
  const started = performance.now()
  await refusal(
    t,
    source.get(),
    `no credentials: AWS_ACCESS_KEY_ID is not set and the instance metadata service at ${imds.endpoint.origin} did not answer PUT /latest/api/token within 1000 ms (set AWS_EC2_METADATA_DISABLED=true off EC2)`,
    [],
  )
  t.ok(performance.now() - started < 1500, 'one try of 1 s')
  t.equal(imds.requests.length, 1)
  imds.set('malformed')
  await refusal(t, source.get(), /^no credentials: AWS_ACCESS_KEY_ID is not set and .* not JSON$/, Object.values(served(imds)))
})
