import { mkdtemp, mkdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, readConfig } from '../../lib/config/config.js'
import { fromFiles, tokenList, withCredentials } from '../../lib/config/credentials.js'

t.test('without CREDENTIALS_DIRECTORY the environment is used as it is', async (t) => {
  const env = { SVC_CACHE_HOST: 'cache' }
  t.equal(
    withCredentials(env, () => t.fail('nothing to read') as never),
    env,
  )
  t.equal(withCredentials({ CREDENTIALS_DIRECTORY: '' }, () => t.fail('nothing to read') as never)['SVC_CACHE_PASSWORD'], undefined)
})

t.test('the Redis password comes from its credential file, without the trailing newline', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  await writeFile(join(dir, 'svc-cache-password'), 's3cret\n')
  const env = withCredentials({ CREDENTIALS_DIRECTORY: dir, SVC_CACHE_HOST: 'cache' })
  t.equal(readConfig(env).health.cache?.password, 's3cret')
})

t.test('an explicit variable wins, and a missing file is no error', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  await writeFile(join(dir, 'svc-cache-password'), 'from-file')
  t.equal(withCredentials({ CREDENTIALS_DIRECTORY: dir, SVC_CACHE_PASSWORD: 'explicit' })['SVC_CACHE_PASSWORD'], 'explicit')
  t.equal(withCredentials({ CREDENTIALS_DIRECTORY: join(dir, 'none') })['SVC_CACHE_PASSWORD'], undefined)
})

t.test('an unreadable credential is a configuration error naming it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  await mkdir(join(dir, 'svc-cache-password'))
  const error = t.throws(() => withCredentials({ CREDENTIALS_DIRECTORY: dir })) as ConfigError
  t.type(error, ConfigError)
  t.match(error.problems[0], /^credential svc-cache-password in CREDENTIALS_DIRECTORY: EISDIR/)
})

t.test('API tokens come from SVC_API_TOKENS_FILE or the svc-api-tokens credential, one per line', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  const file = join(dir, 'tokens')
  await writeFile(file, '# clients\nclient-one-0123456789abcdef\n\n  client-two-0123456789abcdef  \n')
  t.same(readConfig(withCredentials({ SVC_API_TOKENS_FILE: file })).auth.apiTokens, ['client-one-0123456789abcdef', 'client-two-0123456789abcdef'])
  await writeFile(join(dir, 'svc-api-tokens'), 'from-credential-0123456789\n')
  await writeFile(join(dir, 'svc-metrics-token'), 'scraper-0123456789abcdef\n')
  const config = readConfig(withCredentials({ CREDENTIALS_DIRECTORY: dir }))
  t.same(config.auth, { apiTokens: ['from-credential-0123456789'], metricsToken: 'scraper-0123456789abcdef' })
  t.same(
    readConfig(withCredentials({ CREDENTIALS_DIRECTORY: dir, SVC_API_TOKENS_FILE: file })).auth.apiTokens.length,
    2,
    'the named file wins over the credential',
  )
  t.same(tokenList('a\r\nb,c\n'), 'a,b,c')
})

t.test('a token file that cannot be read, or set beside SVC_API_TOKENS, is a configuration error', async (t) => {
  const missing = t.throws(() => withCredentials({ SVC_API_TOKENS_FILE: '/nonexistent/tokens' })) as ConfigError
  t.match(missing.problems[0], /^SVC_API_TOKENS_FILE=\/nonexistent\/tokens: ENOENT/)
  const both = t.throws(() => withCredentials({ SVC_API_TOKENS_FILE: '/x', SVC_API_TOKENS: 'y' })) as ConfigError
  t.same(both.problems, ['SVC_API_TOKENS_FILE: set it or SVC_API_TOKENS, not both'])
})

t.test('the feedback secrets come from their variables, their *_FILE or their credentials, never shown in an error', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  await writeFile(join(dir, 'svc-feedback-secret'), 'credential-secret-0123456789\n')
  await writeFile(join(dir, 'svc-feedback-secret-previous'), 'previous-secret-0123456789\n')
  const fromCredentials = readConfig(withCredentials({ CREDENTIALS_DIRECTORY: dir })).models.feedback
  t.match(fromCredentials, { secret: 'credential-secret-0123456789', previousSecret: 'previous-secret-0123456789', maxAgeS: 2_592_000, seen: 1_000_000 })
  const file = join(dir, 'secret')
  await writeFile(file, 'file-secret-0123456789abcdef\n')
  const fromFile = readConfig(withCredentials({ SVC_FEEDBACK_SECRET_FILE: file, SVC_FEEDBACK_SECRET_PREVIOUS_FILE: join(dir, 'svc-feedback-secret-previous') }))
  t.match(fromFile.models.feedback, { secret: 'file-secret-0123456789abcdef', previousSecret: 'previous-secret-0123456789' })
  t.equal(
    readConfig(withCredentials({ CREDENTIALS_DIRECTORY: dir, SVC_FEEDBACK_SECRET: 'explicit-secret-0123456789' })).models.feedback?.secret,
    'explicit-secret-0123456789',
  )
  t.equal(readConfig({}).models.feedback, undefined, 'no secret: feedback is off')
  const both = t.throws(() => withCredentials({ SVC_FEEDBACK_SECRET_FILE: file, SVC_FEEDBACK_SECRET: 'x' })) as ConfigError
  t.same(both.problems, ['SVC_FEEDBACK_SECRET_FILE: set it or SVC_FEEDBACK_SECRET, not both'])
  const short = t.throws(() => readConfig({ SVC_FEEDBACK_SECRET: 'too-short', SVC_FEEDBACK_MAX_AGE_S: '0' })) as ConfigError
  t.equal(short.problems.length, 2)
  t.match(short.problems[0], /^SVC_FEEDBACK_SECRET: expected at least 16 bytes/)
  t.notMatch(short.message, /too-short/, 'the secret is never shown')
  t.match(short.problems[1], /^SVC_FEEDBACK_MAX_AGE_S=0: /)
  const alone = t.throws(() => readConfig({ SVC_FEEDBACK_SECRET_PREVIOUS: 'previous-secret-0123456789' })) as ConfigError
  t.match(alone.problems, [/SVC_FEEDBACK_SECRET_PREVIOUS.*set SVC_FEEDBACK_SECRET too/])
})

t.test('the S3 keys come from their svc-s3-* credentials, an explicit variable winning, and are known to come from files', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  await writeFile(join(dir, 'svc-s3-access-key-id'), 'AKIDFROMCREDENTIAL\n')
  await writeFile(join(dir, 'svc-s3-secret-access-key'), 'secret/from+credential\r\n')
  await writeFile(join(dir, 'svc-s3-session-token'), 'token-from-credential==\n')
  const env = withCredentials({ CREDENTIALS_DIRECTORY: dir })
  t.match(env, { AWS_ACCESS_KEY_ID: 'AKIDFROMCREDENTIAL', AWS_SECRET_ACCESS_KEY: 'secret/from+credential', AWS_SESSION_TOKEN: 'token-from-credential==' })
  t.same([...fromFiles(env)].sort(), ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'])
  const explicit = withCredentials({ CREDENTIALS_DIRECTORY: dir, AWS_ACCESS_KEY_ID: 'AKIDEXPLICIT', AWS_SECRET_ACCESS_KEY: 'explicit-secret' })
  t.match(explicit, { AWS_ACCESS_KEY_ID: 'AKIDEXPLICIT', AWS_SECRET_ACCESS_KEY: 'explicit-secret', AWS_SESSION_TOKEN: 'token-from-credential==' })
  t.same([...fromFiles(explicit)], ['AWS_SESSION_TOKEN'], 'only what a file filled in')
})

t.test('an environment withCredentials did not fill says nothing came from files', async (t) => {
  const env = { AWS_ACCESS_KEY_ID: 'AKID' }
  t.same([...fromFiles(withCredentials(env))], [], 'returned as it is')
  t.same([...fromFiles(env)], [])
  const file = join(await mkdtemp(join(tmpdir(), 'svc-credentials-')), 'secret')
  await writeFile(file, 'file-secret-0123456789abcdef\n')
  t.same([...fromFiles(withCredentials({ SVC_FEEDBACK_SECRET_FILE: file }))], ['SVC_FEEDBACK_SECRET'], 'a *_FILE counts as a file')
})
