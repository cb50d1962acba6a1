// Each parser on its own: the text it turns into a value, and the reasons it gives for the text it
// refuses. test/config/config.test.ts covers them again through readConfig, with the variables' names.
import t from 'tap'
import {
  baseUrl,
  boolean,
  cron,
  decimal,
  headerName,
  host,
  httpUrl,
  Invalid,
  integer,
  listOf,
  oneOf,
  otlpEndpoint,
  type Parser,
  pattern,
  serviceName,
  storeSpec,
  text,
  token,
  tokens,
} from '../../lib/config/parsers.js'

/** The value, or the reasons it was refused. */
const parsed = <T>(parse: Parser<T>, raw: string): T | { refused: readonly string[] } => {
  const value = parse(raw)
  return value instanceof Invalid ? { refused: value.reasons } : value
}

t.test('integer takes digits within its range, nothing else', async (t) => {
  const port = integer(0, 65535)
  t.equal(parsed(port, '0'), 0)
  t.equal(parsed(port, '065535'), 65535, 'leading zeros are digits')
  for (const raw of ['65536', '-1', '1.5', '1e3', ' 80', '', 'x']) t.same(parsed(port, raw), { refused: ['expected an integer from 0 to 65535'] }, raw)
})

t.test('decimal excludes its minimum unless told to include it', async (t) => {
  t.equal(parsed(decimal(0, 100), ' .5 '), 0.5, 'spaces around it are fine')
  t.same(parsed(decimal(0, 100), '0'), { refused: ['expected a number above 0 and at most 100'] })
  t.equal(parsed(decimal(0, 1, true), '0'), 0)
  t.equal(parsed(decimal(0, 1, true), '1.'), 1)
  for (const raw of ['1.01', '-0.5', 'NaN', 'Infinity', '1e-3']) t.same(parsed(decimal(0, 1, true), raw), { refused: ['expected a number from 0 to 1'] }, raw)
})

t.test('oneOf matches any case, takes aliases, and only its own values', async (t) => {
  const level = oneOf(['debug', 'warning'], { warn: 'warning' })
  t.equal(parsed(level, 'DEBUG'), 'debug')
  t.equal(parsed(level, 'Warn'), 'warning')
  const refused = { refused: ['expected one of debug, warning (case-insensitive)'] }
  // Inherited names of a plain object are not aliases.
  for (const raw of ['constructor', '__proto__', 'hasownproperty', 'trace']) t.same(parsed(level, raw), refused, raw)
  t.same(parsed(oneOf(['dev', 'prod']), 'constructor'), { refused: ['expected one of dev, prod (case-insensitive)'] })
})

t.test('boolean is true or false, in any case', async (t) => {
  t.equal(parsed(boolean, 'TRUE'), true)
  t.equal(parsed(boolean, 'false'), false)
  t.same(parsed(boolean, 'yes'), { refused: ['expected one of true, false (case-insensitive)'] })
})

t.test('listOf keeps the order given and refuses repeats, blanks and strangers', async (t) => {
  const providers = listOf(['coingecko', 'coinbase'])
  t.same(parsed(providers, ' Coinbase , coingecko'), ['coinbase', 'coingecko'])
  const refused = { refused: ['expected a comma-separated list of coingecko, coinbase, each at most once'] }
  for (const raw of ['coinbase,coinbase', 'coinbase,', ' ', 'kraken']) t.same(parsed(providers, raw), refused, raw)
})

t.test('pattern, service names and hosts', async (t) => {
  t.equal(parsed(pattern(/^a+$/, 'a run of a'), 'aaa'), 'aaa')
  t.same(parsed(pattern(/^a+$/, 'a run of a'), 'b'), { refused: ['expected a run of a'] })
  t.equal(parsed(serviceName, 'rates-api.v2'), 'rates-api.v2')
  t.same(parsed(serviceName, '-svc'), { refused: ['expected a name of letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit)'] })
  for (const raw of ['::1', 'fe80::1%eth0', 'db.internal', '10.0.0.5']) t.equal(parsed(host, raw), raw)
  for (const raw of ['a b', 'a/b', 'x'.repeat(254)]) t.same(parsed(host, raw), { refused: ['expected a host name or IP address'] }, raw.slice(0, 10))
  t.equal(parsed(text, ' any thing '), ' any thing ', 'text is taken as given')
})

t.test('URLs: http(s) only, and a base URL without credentials, query or fragment', async (t) => {
  t.same(parsed(httpUrl, 'https://user:pw@example.com/x?y#z'), new URL('https://user:pw@example.com/x?y#z'))
  for (const raw of ['ftp://example.com', 'example.com', 'not a url']) t.same(parsed(httpUrl, raw), { refused: ['expected an http:// or https:// URL'] }, raw)
  t.same(parsed(baseUrl, 'http://127.0.0.1:9001/api/v3/'), new URL('http://127.0.0.1:9001/api/v3/'))
  t.same(parsed(baseUrl, 'ftp://example.com'), { refused: ['expected an http:// or https:// URL'] }, 'not a URL at all says so')
  for (const raw of ['https://user@example.com', 'https://:pw@example.com', 'https://example.com/?key=k', 'https://example.com/#v3']) {
    t.same(parsed(baseUrl, raw), { refused: ['expected an http:// or https:// base URL without credentials, query or fragment'] }, raw)
  }
})

t.test('otlpEndpoint normalises host:port and refuses port 0', async (t) => {
  t.same(parsed(otlpEndpoint, 'collector:4317'), { url: 'http://collector:4317', isSecure: false })
  t.same(parsed(otlpEndpoint, 'https://otel.example.com'), { url: 'https://otel.example.com', isSecure: true })
  const refused = { refused: ['expected host:port, http://host:port or https://host:port (e.g. collector:4317)'] }
  for (const raw of ['collector:0', 'https://otel.example.com:0', 'http://', 'collector']) t.same(parsed(otlpEndpoint, raw), refused, raw)
})

t.test('headerName takes a field name and keys it as Node does, in lower case', async (t) => {
  t.equal(parsed(headerName, 'X-Session-ID'), 'x-session-id')
  for (const bad of ['', 'X Session', 'x:session', 'é', 'x'.repeat(65)])
    t.match(parsed(headerName, bad), { refused: [/^expected an HTTP header name/] }, JSON.stringify(bad))
})

t.test('cron trims the expression it accepts', async (t) => {
  t.equal(parsed(cron, ' */5 * * * * * '), '*/5 * * * * *')
  t.same(parsed(cron, 'hourly'), { refused: ['expected a cron expression of five fields, or six with seconds first (e.g. "* * * * *")'] })
})

t.test('tokens: each refused token named by position only, blanks dropped', async (t) => {
  t.same(parsed(tokens, ' a-0123456789abcdef , ,b-0123456789abcdef+/=='), ['a-0123456789abcdef', 'b-0123456789abcdef+/=='])
  t.same(parsed(tokens, ' , '), [])
  t.same(parsed(tokens, 'short,has space in it here'), {
    refused: ['token 1 of 2 is shorter than 16 characters', 'token 2 of 2 has characters outside A-Z a-z 0-9 - . _ ~ + / (and trailing =)'],
  })
  t.same(parsed(tokens, 'tiny'), { refused: ['the token is shorter than 16 characters'] })
})

t.test('token: at most one, with every reason against the value given together', async (t) => {
  t.equal(parsed(token, ' scraper-0123456789abcdef '), 'scraper-0123456789abcdef')
  t.equal(parsed(token, ','), undefined, 'blank is none')
  t.same(parsed(token, 'a-0123456789abcdef,b-0123456789abcdef'), { refused: ['expected one token'] })
  t.same(parsed(token, 'tiny,a-0123456789abcdef'), { refused: ['token 1 of 2 is shorter than 16 characters', 'expected one token'] })
})

t.test('storeSpec names the accepted forms', async (t) => {
  t.same(parsed(storeSpec, '/srv/models'), { kind: 'directory', root: '/srv/models' })
  t.match(parsed(storeSpec, 'models'), { refused: [/^expected an absolute directory path/] })
})
