import t from 'tap'
import { ConfigError, readConfig } from '../../lib/config/config.js'
import { DEFAULT_STORE_ROOT } from '../../lib/config/model-store.js'

t.test('defaults apply when nothing is set', async (t) => {
  t.same(readConfig({}, []), {
    name: 'svc',
    host: '127.0.0.1',
    port: 8000,
    environment: 'dev',
    logLevel: 'info',
    logFormat: 'json',
    maxBodyBytes: 1024 * 1024,
    drainTimeoutMs: 10_000,
    shutdownDelayMs: 0,
    maxConnections: 0,
    keepAliveTimeoutMs: 65_000,
    writeTimeoutMs: 30_000,
    maxInFlight: 0,
    maxEventLoopDelayMs: 0,
    admin: undefined,
    auth: { apiTokens: [], metricsToken: undefined },
    trustRequestId: false,
    health: { database: undefined, cache: undefined, externalApi: undefined, timeoutMs: 500, cacheMs: 1000 },
    tracing: {
      otlp: undefined,
      isConsole: false,
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      batch: { scheduleDelayMs: 5000, exportTimeoutMs: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    },
    rates: {
      providers: ['coingecko', 'coinbase'],
      urls: { coingecko: new URL('https://api.coingecko.com/api/v3'), coinbase: new URL('https://api.coinbase.com') },
      timeoutMs: 2000,
      cacheTtlMs: 15_000,
      staleMs: 300_000,
    },
    maxStreams: 100,
    models: {
      store: { kind: 'directory', root: DEFAULT_STORE_ROOT },
      s3: { endpoint: undefined, region: 'us-east-1', keys: undefined, imds: { isDisabled: false, endpoint: new URL('http://169.254.169.254') } },
      reloadIntervalS: 0,
      maxBatch: 1000,
      maxBytes: 16 * 1024 * 1024,
      onnxThreads: 1,
      onnxPool: { workers: 1, inlineMaxUs: 50, maxRows: 64, maxDelayUs: 0, queueRows: 4096, timeoutMs: 10_000 },
      routingHeader: undefined,
      shadow: { queue: 256, timeoutMs: 1000, tolerance: 0.05 },
    },
    drift: {
      isEnabled: true,
      window: 1000,
      minSamples: 500,
      schedule: '* * * * *',
      thresholds: { moderate: 0.1, severe: 0.25, spike: 0.1 },
      hasBinSeries: true,
    },
  })
})

/** Where under `value` an object or array is not frozen, itself included. */
const unfrozen = (value: unknown, path: string): string[] => {
  // Freezing a URL would prove nothing: its setters write internal state, which Object.freeze leaves alone.
  if (typeof value !== 'object' || value === null || value instanceof URL) return []
  return [...(Object.isFrozen(value) ? [] : [path]), ...Object.entries(value).flatMap(([key, member]) => unfrozen(member, `${path}.${key}`))]
}

t.test('config is frozen all the way down, every optional section present', async (t) => {
  const config = readConfig({
    SVC_ADMIN_PORT: '9100',
    SVC_API_TOKENS: 'client-one-0123456789',
    SVC_METRICS_TOKEN: 'scraper-0123456789abcdef',
    SVC_DB_HOST: 'db',
    SVC_CACHE_HOST: 'cache',
    SVC_EXTERNAL_API_URL: 'https://status.example/health',
    OTLP_ENDPOINT: 'collector:4317',
    SVC_MODEL_STORE: 'https://models.internal/svc/',
    SVC_PAYLOAD_LOG: 'https://sink.internal/events',
    SVC_PAYLOAD_LOG_EXCLUDE: 'email',
  })
  t.same(unfrozen(config, 'config'), [])
})

t.test('environment variables are read, levels and formats case-insensitively', async (t) => {
  const config = readConfig({
    APP_NAME: 'rates-api',
    HOST: '0.0.0.0',
    PORT: '17000',
    SVC_ENVIRONMENT: 'prod',
    LOG_LEVEL: 'WARNING',
    LOG_FORMAT: 'Console',
    SVC_MAX_BODY_BYTES: '2048',
    SVC_DRAIN_TIMEOUT_MS: '0',
  })
  t.match(config, {
    name: 'rates-api',
    host: '0.0.0.0',
    port: 17000,
    environment: 'prod',
    logLevel: 'warning',
    logFormat: 'console',
    maxBodyBytes: 2048,
    drainTimeoutMs: 0,
  })
})

t.test('WARN is accepted as WARNING', async (t) => {
  t.equal(readConfig({ LOG_LEVEL: 'warn' }).logLevel, 'warning')
})

t.test('an empty variable counts as unset', async (t) => {
  t.equal(readConfig({ PORT: '' }).port, 8000)
})

t.test('flags override environment variables', async (t) => {
  const config = readConfig({ PORT: '1', HOST: 'a', SVC_ENVIRONMENT: 'dev', APP_NAME: 'x', LOG_LEVEL: 'debug', LOG_FORMAT: 'json' }, [
    '--port',
    '9000',
    '--host=::1',
    '--env',
    'stage',
    '--name',
    'api',
    '--log-level',
    'error',
    '--log-format',
    'console',
  ])
  t.match(config, { port: 9000, host: '::1', environment: 'stage', name: 'api', logLevel: 'error', logFormat: 'console' })
})

t.test('every bad value is reported at once, naming what is accepted', async (t) => {
  const error = t.throws(() =>
    readConfig({ PORT: '70000', SVC_ENVIRONMENT: 'qa', LOG_LEVEL: 'loud', APP_NAME: 'bad name', SVC_MAX_BODY_BYTES: '-1', SVC_DRAIN_TIMEOUT_MS: '1.5' }, [
      '--log-format',
      'xml',
      '--host',
      'a b',
    ]),
  ) as ConfigError
  t.type(error, ConfigError)
  t.same(error.problems, [
    'SVC_ENVIRONMENT=qa: expected one of dev, stage, prod (case-insensitive)',
    'APP_NAME=bad name: expected a name of letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit)',
    '--host=a b: expected a host name or IP address',
    'PORT=70000: expected an integer from 0 to 65535',
    'LOG_LEVEL=loud: expected one of debug, info, warning, error (case-insensitive)',
    '--log-format=xml: expected one of json, console (case-insensitive)',
    'SVC_MAX_BODY_BYTES=-1: expected an integer from 1 to 1073741824',
    'SVC_DRAIN_TIMEOUT_MS=1.5: expected an integer from 0 to 600000',
  ])
  t.match(error.message, /^invalid configuration:\n {2}SVC_ENVIRONMENT=qa/)
})

t.test('an unknown flag is a configuration error listing the accepted flags', async (t) => {
  const error = t.throws(() => readConfig({}, ['--prot', '80'])) as ConfigError
  t.equal(error.problems.length, 1)
  t.match(error.problems[0], /Unknown option '--prot'.*accepted flags: --name, --host, --port, --env, --log-level, --log-format, --help, --version/)
})

t.test('a positional argument is refused', async (t) => {
  t.throws(() => readConfig({}, ['serve']), ConfigError)
})

t.test('a port with an invalid host reports the host only', async (t) => {
  const error = t.throws(() => readConfig({ SVC_DB_HOST: 'bad host', SVC_DB_PORT: '5433' })) as ConfigError
  t.same(error.problems, ['SVC_DB_HOST=bad host: expected a host name or IP address'])
})

t.test('an external API URL that does not parse is refused', async (t) => {
  const error = t.throws(() => readConfig({ SVC_EXTERNAL_API_URL: 'not a url' })) as ConfigError
  t.same(error.problems, ['SVC_EXTERNAL_API_URL=not a url: expected an http:// or https:// URL'])
})

const OTLP_CASES: ReadonlyArray<readonly [string, { url: string; isSecure: boolean }]> = [
  ['collector:4317', { url: 'http://collector:4317', isSecure: false }],
  ['127.0.0.1:4317', { url: 'http://127.0.0.1:4317', isSecure: false }],
  ['[::1]:4317', { url: 'http://[::1]:4317', isSecure: false }],
  ['http://collector:4317', { url: 'http://collector:4317', isSecure: false }],
  ['http://collector:4317/', { url: 'http://collector:4317', isSecure: false }],
  ['https://otel.example.com:4317', { url: 'https://otel.example.com:4317', isSecure: true }],
  ['HTTPS://OTEL.example.com', { url: 'https://otel.example.com', isSecure: true }],
]
for (const [raw, expected] of OTLP_CASES) {
  t.test(`OTLP_ENDPOINT=${raw} is accepted`, async (t) => {
    t.same(readConfig({ OTLP_ENDPOINT: raw }).tracing.otlp, expected)
  })
}

const BAD_OTLP = [
  'collector',
  'grpc://collector:4317',
  'http://collector:4317/v1/traces',
  'http://user:pw@collector:4317',
  'http://collector:4317?x=1',
  'collector:0',
  'http://collector:0',
  'unix:///run/otel.sock',
  'collector 4317',
]
for (const raw of BAD_OTLP) {
  t.test(`OTLP_ENDPOINT=${raw} is a start-up error naming the accepted forms`, async (t) => {
    const error = t.throws(() => readConfig({ OTLP_ENDPOINT: raw })) as ConfigError
    t.same(error.problems, [`OTLP_ENDPOINT=${raw}: expected host:port, http://host:port or https://host:port (e.g. collector:4317)`])
  })
}

t.test('tracing variables are read: console, sampler, ratio and the batch processor', async (t) => {
  const env = {
    ENABLE_CONSOLE_TRACES: 'TRUE',
    OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio',
    OTEL_TRACES_SAMPLER_ARG: '0.01',
    OTEL_BSP_SCHEDULE_DELAY: '1000',
    OTEL_BSP_EXPORT_TIMEOUT: '2000',
    OTEL_BSP_MAX_QUEUE_SIZE: '100',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '100',
  }
  t.same(readConfig(env).tracing, {
    otlp: undefined,
    isConsole: true,
    sampler: 'parentbased_traceidratio',
    samplerRatio: 0.01,
    batch: { scheduleDelayMs: 1000, exportTimeoutMs: 2000, maxQueueSize: 100, maxExportBatchSize: 100 },
  })
  t.equal(readConfig({ OTEL_TRACES_SAMPLER_ARG: '1' }).tracing.samplerRatio, 1)
  t.equal(readConfig({ OTEL_TRACES_SAMPLER_ARG: '.5' }).tracing.samplerRatio, 0.5)
})

t.test('bad tracing values are reported together', async (t) => {
  const env = {
    ENABLE_CONSOLE_TRACES: 'yes',
    OTEL_TRACES_SAMPLER: 'jaeger_remote',
    OTEL_TRACES_SAMPLER_ARG: '1.5',
    OTEL_BSP_MAX_QUEUE_SIZE: '10',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20',
  }
  const error = t.throws(() => readConfig(env)) as ConfigError
  t.same(error.problems, [
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE=20: expected at most OTEL_BSP_MAX_QUEUE_SIZE (10)',
    'ENABLE_CONSOLE_TRACES=yes: expected one of true, false (case-insensitive)',
    'OTEL_TRACES_SAMPLER=jaeger_remote: expected one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio (case-insensitive)',
    'OTEL_TRACES_SAMPLER_ARG=1.5: expected a number from 0 to 1',
  ])
  t.same((t.throws(() => readConfig({ OTEL_TRACES_SAMPLER_ARG: 'half' })) as ConfigError).problems, [
    'OTEL_TRACES_SAMPLER_ARG=half: expected a number from 0 to 1',
  ])
})

t.test('rate upstream and stream variables are read', async (t) => {
  const config = readConfig({
    SVC_RATE_PROVIDERS: ' Coinbase , coingecko',
    SVC_RATE_COINGECKO_URL: 'http://127.0.0.1:9001/api/v3/',
    SVC_RATE_COINBASE_URL: 'https://rates.internal.example',
    SVC_RATE_TIMEOUT_MS: '250',
    SVC_RATE_CACHE_TTL_MS: '0',
    SVC_RATE_STALE_MS: '60000',
    SVC_MAX_STREAMS: '3',
  })
  t.same(config.rates, {
    providers: ['coinbase', 'coingecko'],
    urls: { coingecko: new URL('http://127.0.0.1:9001/api/v3/'), coinbase: new URL('https://rates.internal.example') },
    timeoutMs: 250,
    cacheTtlMs: 0,
    staleMs: 60_000,
  })
  t.equal(config.maxStreams, 3)
  t.same(readConfig({ SVC_RATE_PROVIDERS: 'coinbase' }).rates.providers, ['coinbase'], 'one provider alone')
})

t.test('bad rate upstream and stream values are reported together, naming what is accepted', async (t) => {
  const env = {
    SVC_RATE_PROVIDERS: 'coingecko,coingecko',
    SVC_RATE_COINGECKO_URL: 'ftp://rates.example',
    SVC_RATE_COINBASE_URL: 'https://user:secret@rates.example',
    SVC_RATE_TIMEOUT_MS: '0',
    SVC_RATE_CACHE_TTL_MS: '-1',
    SVC_RATE_STALE_MS: 'long',
    SVC_MAX_STREAMS: '0',
  }
  const accepted = 'a comma-separated list of coingecko, coinbase, each at most once'
  t.same((t.throws(() => readConfig(env)) as ConfigError).problems, [
    `SVC_RATE_PROVIDERS=coingecko,coingecko: expected ${accepted}`,
    'SVC_RATE_COINGECKO_URL=ftp://rates.example: expected an http:// or https:// URL',
    'SVC_RATE_COINBASE_URL=https://user:secret@rates.example: expected an http:// or https:// base URL without credentials, query or fragment',
    'SVC_RATE_TIMEOUT_MS=0: expected an integer from 1 to 60000',
    'SVC_RATE_CACHE_TTL_MS=-1: expected an integer from 0 to 3600000',
    'SVC_RATE_STALE_MS=long: expected an integer from 0 to 86400000',
    'SVC_MAX_STREAMS=0: expected an integer from 1 to 100000',
  ])
  for (const providers of [' ', 'coingecko,', 'kraken', 'coinbase,,coingecko']) {
    const problems = (t.throws(() => readConfig({ SVC_RATE_PROVIDERS: providers })) as ConfigError).problems
    t.same(problems, [`SVC_RATE_PROVIDERS=${providers}: expected ${accepted}`], JSON.stringify(providers))
  }
  t.same(readConfig({ SVC_RATE_PROVIDERS: '' }).rates.providers, ['coingecko', 'coinbase'], 'empty counts as unset')
  t.throws(() => readConfig({ SVC_RATE_COINGECKO_URL: 'https://api.coingecko.com/api/v3?x_cg_demo_api_key=k' }), ConfigError, 'a query would be lost')
  t.throws(() => readConfig({ SVC_RATE_COINGECKO_URL: 'https://api.coingecko.com/api/v3#v3' }), ConfigError)
})

t.test('model variables: the store in any accepted form, the reload interval and the batch limit', async (t) => {
  const config = readConfig({ SVC_MODEL_STORE: 'https://user:pw@models.internal/svc/', SVC_MODEL_RELOAD_INTERVAL_S: '90', SVC_MAX_BATCH: '50' })
  t.match(config.models, { store: { kind: 'http' }, reloadIntervalS: 90, maxBatch: 50 })
  t.match(readConfig({ SVC_MODEL_STORE: '/srv/models' }).models.store, { kind: 'directory', root: '/srv/models' })
  t.match(readConfig({ SVC_MODEL_STORE: '' }).models.store, { kind: 'directory', root: DEFAULT_STORE_ROOT })
  const error = t.throws(() =>
    readConfig({ SVC_MODEL_STORE: 'ftp://user:secret@host/models', SVC_MODEL_RELOAD_INTERVAL_S: '86401', SVC_MAX_BATCH: '0' }),
  ) as ConfigError
  t.equal(error.problems.length, 3)
  t.match(error.problems[0], /^SVC_MODEL_STORE=ftp:\/\/\*\*\*@host\/models: expected /)
  t.match(error.problems[1], /^SVC_MODEL_RELOAD_INTERVAL_S=86401: expected an integer from 0 to 86400$/)
  t.match(error.problems[2], /^SVC_MAX_BATCH=0: expected an integer from 1 to 100000$/)
  t.notMatch(error.message, /secret/, 'a password in the store URL is never repeated')
})

t.test('the payload log: unset, nothing; a file path or an http(s) sink, its queue, rotation, flush, share and exclusions, each checked', async (t) => {
  t.equal(readConfig({}).models.payloadLog, undefined)
  t.equal(readConfig({ SVC_PAYLOAD_LOG_QUEUE: '5' }).models.payloadLog, undefined, 'settings alone turn nothing on')
  t.same(readConfig({ SVC_PAYLOAD_LOG: '/var/log/svc/payload.jsonl' }).models.payloadLog, {
    target: { kind: 'file', path: '/var/log/svc/payload.jsonl' },
    queue: 10_000,
    queueBytes: 64 * 1024 * 1024,
    maxBytes: 100 * 1024 * 1024,
    files: 5,
    flushMs: 1000,
    percent: 100,
    exclude: [],
  })
  const sink = readConfig({
    SVC_PAYLOAD_LOG: 'https://user:pw@sink.internal/events',
    SVC_PAYLOAD_LOG_QUEUE: '50',
    SVC_PAYLOAD_LOG_MAX_BYTES: '2048',
    SVC_PAYLOAD_LOG_FILES: '2',
    SVC_PAYLOAD_LOG_FLUSH_MS: '250',
    SVC_PAYLOAD_LOG_PERCENT: '0',
    SVC_PAYLOAD_LOG_EXCLUDE: ' email, phone,,email ',
  }).models.payloadLog
  t.match(sink, { target: { kind: 'http' }, queue: 50, maxBytes: 2048, files: 2, flushMs: 250, percent: 0, exclude: ['email', 'phone'] })
  t.equal(sink?.target.kind === 'http' ? sink.target.url.href : undefined, 'https://user:pw@sink.internal/events')
  t.match(readConfig({ SVC_PAYLOAD_LOG: 'payload.jsonl' }).models.payloadLog?.target, { kind: 'file', path: 'payload.jsonl' }, 'a relative path')
  const error = t.throws(() =>
    readConfig({
      SVC_PAYLOAD_LOG: 'ftp://user:secret@host/events',
      SVC_PAYLOAD_LOG_QUEUE: '0',
      SVC_PAYLOAD_LOG_FILES: '0',
      SVC_PAYLOAD_LOG_FLUSH_MS: '5',
      SVC_PAYLOAD_LOG_PERCENT: '101',
    }),
  ) as ConfigError
  t.same(error.problems, [
    'SVC_PAYLOAD_LOG=ftp://***@host/events: expected a file path, or an http:// or https:// URL',
    'SVC_PAYLOAD_LOG_QUEUE=0: expected an integer from 1 to 1000000',
    'SVC_PAYLOAD_LOG_FILES=0: expected an integer from 1 to 1000',
    'SVC_PAYLOAD_LOG_FLUSH_MS=5: expected an integer from 10 to 60000',
    'SVC_PAYLOAD_LOG_PERCENT=101: expected a number from 0 to 100',
  ])
  t.notMatch(error.message, /secret/, 'a password in the sink URL is never repeated')
})

t.test('drift variables: window, minimum, schedule, thresholds and bin series, each checked', async (t) => {
  const config = readConfig({
    SVC_DRIFT_ENABLED: 'FALSE',
    SVC_DRIFT_WINDOW: '2000',
    SVC_DRIFT_MIN_SAMPLES: '2000',
    SVC_DRIFT_SCHEDULE: ' */5 * * * * * ',
    SVC_DRIFT_MODERATE: '0.2',
    SVC_DRIFT_SEVERE: '.5',
    SVC_DRIFT_SPIKE: '1',
    SVC_DRIFT_BIN_SERIES: 'false',
  })
  t.same(config.drift, {
    isEnabled: false,
    window: 2000,
    minSamples: 2000,
    schedule: '*/5 * * * * *',
    thresholds: { moderate: 0.2, severe: 0.5, spike: 1 },
    hasBinSeries: false,
  })
  const error = t.throws(() =>
    readConfig({
      SVC_DRIFT_ENABLED: 'no',
      SVC_DRIFT_WINDOW: '0',
      SVC_DRIFT_MIN_SAMPLES: '1001',
      SVC_DRIFT_SCHEDULE: 'every minute',
      SVC_DRIFT_MODERATE: '0',
      SVC_DRIFT_SEVERE: '-1',
      SVC_DRIFT_SPIKE: 'NaN',
    }),
  ) as ConfigError
  t.same(error.problems, [
    'SVC_DRIFT_ENABLED=no: expected one of true, false (case-insensitive)',
    'SVC_DRIFT_WINDOW=0: expected an integer from 1 to 1000000',
    'SVC_DRIFT_SCHEDULE=every minute: expected a cron expression of five fields, or six with seconds first (e.g. "* * * * *")',
    'SVC_DRIFT_MODERATE=0: expected a number above 0 and at most 100',
    'SVC_DRIFT_SEVERE=-1: expected a number above 0 and at most 100',
    'SVC_DRIFT_SPIKE=NaN: expected a number above 0 and at most 100',
    'SVC_DRIFT_MIN_SAMPLES=1001: expected at most SVC_DRIFT_WINDOW (1000)',
  ])
  t.match((t.throws(() => readConfig({ SVC_DRIFT_MODERATE: '0.3' })) as ConfigError).problems, [
    'SVC_DRIFT_SEVERE=0.25: expected above SVC_DRIFT_MODERATE (0.3)',
  ])
  t.throws(() => readConfig({ SVC_DRIFT_SCHEDULE: '61 * * * *' }), ConfigError, 'a field out of range')
})

t.test('limits, tokens, the admin listener and request-id trust', async (t) => {
  const config = readConfig({
    SVC_MAX_CONNECTIONS: '500',
    SVC_MAX_IN_FLIGHT: '64',
    SVC_MAX_EVENT_LOOP_DELAY_MS: '200',
    SVC_ADMIN_PORT: '9100',
    SVC_TRUST_REQUEST_ID: 'true',
    SVC_API_TOKENS: ' client-one-0123456789, client-two-0123456789+/== ,',
    SVC_METRICS_TOKEN: 'scraper-0123456789abcdef',
  })
  t.match(config, { maxConnections: 500, maxInFlight: 64, maxEventLoopDelayMs: 200, admin: { host: '127.0.0.1', port: 9100 }, trustRequestId: true })
  t.same(config.auth, { apiTokens: ['client-one-0123456789', 'client-two-0123456789+/=='], metricsToken: 'scraper-0123456789abcdef' })
  t.same(readConfig({ SVC_ADMIN_PORT: '0', SVC_ADMIN_HOST: '10.0.0.5' }).admin, { host: '10.0.0.5', port: 0 })
  t.equal(readConfig({ SVC_ENVIRONMENT: 'prod' }).shutdownDelayMs, 5000, 'behind a load balancer, time for its probes')
  t.equal(readConfig({ SVC_ENVIRONMENT: 'stage' }).shutdownDelayMs, 5000)
  t.equal(readConfig({ SVC_ENVIRONMENT: 'prod', SVC_SHUTDOWN_DELAY_MS: '0' }).shutdownDelayMs, 0, 'tests set it to 0')
  t.equal(readConfig({ SVC_KEEP_ALIVE_TIMEOUT_MS: '620000' }).keepAliveTimeoutMs, 620_000, 'above a 600 s balancer idle timeout')
  t.equal(readConfig({ SVC_KEEP_ALIVE_TIMEOUT_MS: '1000' }).keepAliveTimeoutMs, 1000, 'a second at least')
  t.equal(readConfig({ SVC_KEEP_ALIVE_TIMEOUT_MS: '3600000' }).keepAliveTimeoutMs, 3_600_000, 'an hour at most')
  t.equal(readConfig({ SVC_WRITE_TIMEOUT_MS: '5000' }).writeTimeoutMs, 5000, 'a reply may wait 5 s for its client')
  const error = t.throws(() =>
    readConfig({
      SVC_API_TOKENS: 'short,has space in it here,ok-0123456789abcdef',
      SVC_METRICS_TOKEN: 'a-0123456789abcdef,b-0123456789abcdef',
      SVC_ADMIN_HOST: 'a b',
      SVC_ADMIN_PORT: '99999',
      SVC_MAX_IN_FLIGHT: '-1',
      SVC_KEEP_ALIVE_TIMEOUT_MS: '999',
      SVC_WRITE_TIMEOUT_MS: '0',
    }),
  ) as ConfigError
  // Section by section (lib/config/config.ts): the listeners, then auth, then the limits.
  t.same(error.problems, [
    'SVC_ADMIN_HOST=a b: expected a host name or IP address',
    'SVC_ADMIN_PORT=99999: expected an integer from 0 to 65535',
    'SVC_API_TOKENS: token 1 of 3 is shorter than 16 characters',
    'SVC_API_TOKENS: token 2 of 3 has characters outside A-Z a-z 0-9 - . _ ~ + / (and trailing =)',
    'SVC_METRICS_TOKEN: expected one token',
    'SVC_KEEP_ALIVE_TIMEOUT_MS=999: expected an integer from 1000 to 3600000',
    'SVC_WRITE_TIMEOUT_MS=0: expected an integer from 1000 to 3600000',
    'SVC_MAX_IN_FLIGHT=-1: expected an integer from 0 to 1000000',
  ])
  for (const value of ['3600001', '65s', '0']) {
    t.same(
      (t.throws(() => readConfig({ SVC_KEEP_ALIVE_TIMEOUT_MS: value })) as ConfigError).problems,
      [`SVC_KEEP_ALIVE_TIMEOUT_MS=${value}: expected an integer from 1000 to 3600000`],
      `SVC_KEEP_ALIVE_TIMEOUT_MS=${value} is refused`,
    )
  }
  t.notMatch(error.message, /short,|has space|0123456789/, 'no token is ever repeated')
  t.match((t.throws(() => readConfig({ SVC_METRICS_TOKEN: 'tiny' })) as ConfigError).problems, ['SVC_METRICS_TOKEN: the token is shorter than 16 characters'])
  t.same(readConfig({ SVC_API_TOKENS: ' , ' }).auth.apiTokens, [], 'blank is unset')
})

t.test("the probes' dependencies: a host with its port, and the cache's password", async (t) => {
  const config = readConfig({
    SVC_DB_HOST: 'db.internal',
    SVC_CACHE_HOST: '::1',
    SVC_CACHE_PORT: '6380',
    SVC_CACHE_PASSWORD: 'not checked: any text',
    SVC_EXTERNAL_API_URL: 'https://status.example/health',
  })
  t.same(config.health.database, { host: 'db.internal', port: 5432 })
  t.same(config.health.cache, { host: '::1', port: 6380, password: 'not checked: any text' })
  t.same(config.health.externalApi, new URL('https://status.example/health'))
  t.same(readConfig({ SVC_CACHE_HOST: 'cache', SVC_CACHE_PASSWORD: '' }).health.cache, { host: 'cache', port: 6379, password: undefined })
})

t.test('a name every object has is no choice: constructor and __proto__ are refused', async (t) => {
  const error = t.throws(() => readConfig({ SVC_ENVIRONMENT: 'constructor', LOG_LEVEL: '__proto__' })) as ConfigError
  t.same(error.problems, [
    'SVC_ENVIRONMENT=constructor: expected one of dev, stage, prod (case-insensitive)',
    'LOG_LEVEL=__proto__: expected one of debug, info, warning, error (case-insensitive)',
  ])
})

t.test('an empty flag is a value, unlike an empty variable', async (t) => {
  t.same((t.throws(() => readConfig({}, ['--port='])) as ConfigError).problems, ['--port=: expected an integer from 0 to 65535'])
})
