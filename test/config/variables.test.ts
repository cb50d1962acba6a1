// The declarations of lib/config/variables.ts are what the configuration reads: every declared
// variable is looked up, nothing undeclared is, every default is a valid value and no flag is
// declared twice.
import t from 'tap'
import { cronPlan } from '../../lib/models/registry/reload-schedule.js'
import { ENVIRONMENTS, readConfig } from '../../lib/config/config.js'
import { Invalid } from '../../lib/config/parsers.js'
import { isReloadInterval, MAX_RELOAD_INTERVAL_S, RELOAD_INTERVAL_RANGE } from '../../lib/config/reload-interval.js'
import { SHUTDOWN_DELAY_MS_DEFAULTS, VARIABLES, type Variable } from '../../lib/config/variables.js'
import { lookups } from './fixtures/lookups.js'

const DECLARED: ReadonlyArray<readonly [string, Variable<unknown>]> = Object.entries(VARIABLES)
const NAMES = new Set(DECLARED.map(([name]) => name))

t.test('the configuration looks up every declared variable, and no other', async (t) => {
  // Unset, then every one set: a variable read only when another is set (SVC_ADMIN_HOST) is seen
  // too. Setting the token file as well would stop at "not both" before readConfig runs.
  const everySet = Object.fromEntries(DECLARED.filter(([name]) => name !== 'SVC_API_TOKENS_FILE').map(([name]) => [name, 'x']))
  const read = new Set([...lookups({}), ...lookups(everySet)])
  // Set by systemd itself (LoadCredential=), never by an operator.
  read.delete('CREDENTIALS_DIRECTORY')
  t.same([...read].filter((name) => !NAMES.has(name)).sort(), [], 'looked up but not declared')
  t.same([...NAMES].filter((name) => !read.has(name)).sort(), [], 'declared but never looked up')
})

t.test('every declared default is a value its parser accepts', async (t) => {
  for (const [name, { default: value, parse }] of DECLARED) {
    if (value !== undefined) t.notOk(parse?.(value) instanceof Invalid, `${name}=${value}`)
  }
})

t.test('every variable but the secret files has a parser, and every flag is declared once', async (t) => {
  t.same(
    DECLARED.filter(([, { parse }]) => parse === undefined).map(([name]) => name),
    ['SVC_API_TOKENS_FILE', 'SVC_FEEDBACK_SECRET_FILE', 'SVC_FEEDBACK_SECRET_PREVIOUS_FILE'],
    'lib/config/credentials.ts reads it',
  )
  const flags = DECLARED.flatMap(([, { flag }]) => (flag === undefined ? [] : [flag.name]))
  t.same(flags, [...new Set(flags)])
  t.same(flags, ['name', 'host', 'port', 'env', 'log-level', 'log-format'])
})

t.test('SVC_SHUTDOWN_DELAY_MS: the default per environment is one table, read by the configuration and worded for --help', async (t) => {
  t.same(SHUTDOWN_DELAY_MS_DEFAULTS, { prod: 5000, stage: 5000, dev: 0 })
  for (const environment of ENVIRONMENTS) {
    t.equal(readConfig({ SVC_ENVIRONMENT: environment }).shutdownDelayMs, SHUTDOWN_DELAY_MS_DEFAULTS[environment], environment)
  }
  t.equal(VARIABLES.SVC_SHUTDOWN_DELAY_MS.shown, '5000 in prod and stage, 0 in dev')
  t.equal(readConfig({ SVC_ENVIRONMENT: 'prod', SVC_SHUTDOWN_DELAY_MS: '0' }).shutdownDelayMs, 0, 'a set value wins')
})

t.test('SVC_MODEL_RELOAD_INTERVAL_S: 0 or the one range, which the refusals word alike', async (t) => {
  t.equal(RELOAD_INTERVAL_RANGE, `a whole number of seconds from 1 to ${MAX_RELOAD_INTERVAL_S}`)
  t.equal(MAX_RELOAD_INTERVAL_S, 86_400)
  t.same([0, 1, MAX_RELOAD_INTERVAL_S, MAX_RELOAD_INTERVAL_S + 1, 1.5, -1].map(isReloadInterval), [false, true, true, false, false, false])
  t.same(
    ['0', '1', String(MAX_RELOAD_INTERVAL_S), String(MAX_RELOAD_INTERVAL_S + 1)].map((raw) => VARIABLES.SVC_MODEL_RELOAD_INTERVAL_S.parse(raw)),
    [0, 1, MAX_RELOAD_INTERVAL_S, new Invalid([`expected an integer from 0 to ${MAX_RELOAD_INTERVAL_S}`])],
  )
  t.throws(() => cronPlan(0), { message: `the reload interval must be ${RELOAD_INTERVAL_RANGE}, is 0` })
})
