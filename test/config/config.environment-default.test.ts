// Which variables took their defaults, as start-up reports them: an unset SVC_ENVIRONMENT still
// means dev, and readConfigAndDefaulted says it was not chosen.
import t from 'tap'
import { readConfig, readConfigAndDefaulted } from '../../lib/config/config.js'

t.test('an unset SVC_ENVIRONMENT is dev, and noted as defaulted', async (t) => {
  for (const env of [{}, { SVC_ENVIRONMENT: '' }]) {
    const { config, defaulted } = readConfigAndDefaulted(env)
    t.equal(config.environment, 'dev', JSON.stringify(env))
    t.ok(defaulted.has('SVC_ENVIRONMENT'), `${JSON.stringify(env)}: empty counts as unset`)
  }
})

t.test('SVC_ENVIRONMENT set, even to dev, or --env is not defaulted', async (t) => {
  const cases = [
    { env: { SVC_ENVIRONMENT: 'dev' }, argv: [], environment: 'dev' },
    { env: { SVC_ENVIRONMENT: 'prod' }, argv: [], environment: 'prod' },
    { env: {}, argv: ['--env', 'stage'], environment: 'stage' },
  ] as const
  for (const { env, argv, environment } of cases) {
    const { config, defaulted } = readConfigAndDefaulted(env, argv)
    t.equal(config.environment, environment)
    t.notOk(defaulted.has('SVC_ENVIRONMENT'), `${JSON.stringify(env)} ${argv.join(' ')}`)
  }
})

t.test('every variable read while unset is noted, and only those', async (t) => {
  const { defaulted } = readConfigAndDefaulted({ PORT: '9000', LOG_LEVEL: '' }, ['--host', '::1'])
  t.notOk(defaulted.has('PORT'), 'set in the environment')
  t.notOk(defaulted.has('HOST'), 'set by its flag')
  t.ok(defaulted.has('LOG_LEVEL'), 'empty counts as unset')
  t.ok(defaulted.has('SVC_SHUTDOWN_DELAY_MS'), 'a default computed from the environment is a default too')
  t.notOk(defaulted.has('SVC_ADMIN_HOST'), 'not read without SVC_ADMIN_PORT')
})

t.test('readConfig gives the same configuration, and nothing more', async (t) => {
  const env = { SVC_ENVIRONMENT: 'stage', PORT: '9000' }
  t.same(readConfig(env), readConfigAndDefaulted(env).config)
  t.ok(Object.isFrozen(readConfigAndDefaulted(env).config))
})
