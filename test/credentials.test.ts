import { mkdtemp, mkdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, readConfig } from '../lib/process/config/config.js'
import { tokenList, withCredentials } from '../lib/process/credentials.js'

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
