// The declarations of lib/process/config/variables.ts are what the configuration reads: every declared
// variable is looked up, nothing undeclared is, every default is a valid value and no flag is
// declared twice.
import t from 'tap'
import { Invalid } from '../../lib/process/config/parsers.js'
import { VARIABLES, type Variable } from '../../lib/process/config/variables.js'
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

t.test('every variable but the token file has a parser, and every flag is declared once', async (t) => {
  t.same(
    DECLARED.filter(([, { parse }]) => parse === undefined).map(([name]) => name),
    ['SVC_API_TOKENS_FILE'],
    'lib/process/credentials.ts reads it',
  )
  const flags = DECLARED.flatMap(([, { flag }]) => (flag === undefined ? [] : [flag.name]))
  t.same(flags, [...new Set(flags)])
  t.same(flags, ['name', 'host', 'port', 'env', 'log-level', 'log-format'])
})
