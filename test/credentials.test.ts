import { mkdtemp, mkdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, readConfig } from '../lib/config.js'
import { withCredentials } from '../lib/credentials.js'

t.test('without CREDENTIALS_DIRECTORY the environment is used as it is', async (t) => {
  const env = { SVC_CACHE_HOST: 'cache' }
  t.equal(withCredentials(env, () => t.fail('nothing to read') as never), env)
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
