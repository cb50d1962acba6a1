// Configuration: read once from the environment and the command line, validated all at once,
// returned frozen. Nothing else under lib/ reads process.env.
import { parseArgs } from 'node:util'
import { parseStoreSpec, redactStoreSpec, STORE_SPEC_FORMS, type StoreSpec } from './models/storage.js'
import { MAX_RELOAD_INTERVAL_S } from './models/reload-schedule.js'
import { isCronExpression } from './drift/scheduler.js'

export const ENVIRONMENTS = ['dev', 'stage', 'prod'] as const
export type Environment = (typeof ENVIRONMENTS)[number]
export const LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['json', 'console'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export type Config = Readonly<{
  name: string
  host: string
  port: number
  environment: Environment
  logLevel: LogLevel
  logFormat: LogFormat
  /** Largest request body accepted, in bytes; larger ones are answered 413. */
  maxBodyBytes: number
  /** How long a graceful shutdown waits for in-flight requests and streams. */
  drainTimeoutMs: number
  /**
   * How long, after a shutdown signal, readiness answers 503 while the listener still accepts:
   * time for a load balancer's probes to take the instance out before connections are refused.
   * Defaults to 5000 in prod and stage (behind a load balancer), 0 in dev.
   */
  shutdownDelayMs: number
  /** Open sockets one listener keeps at once; 0 for no limit. */
  maxConnections: number
  /** Requests in flight past which new ones are shed (503); 0 for no limit. */
  maxInFlight: number
  /** Event-loop lag in ms past which requests are shed; 0 for no limit. */
  maxEventLoopDelayMs: number
  /** A second listener for /metrics and the probes, which then leave the public one. */
  admin: Endpoint | undefined
  auth: AuthConfig
  /** Take a well-formed inbound X-Request-ID instead of always generating one. */
  trustRequestId: boolean
  health: HealthConfig
  tracing: TracingConfig
  rates: RatesConfig
  /** Server-Sent Events streams one process serves at once; beyond it, 503 with Retry-After. */
  maxStreams: number
  models: ModelsConfig
  drift: DriftConfig
}>

export type Endpoint = Readonly<{ host: string; port: number }>

/** Bearer tokens (never logged): empty / undefined leaves the routes open. */
export type AuthConfig = Readonly<{ apiTokens: readonly string[]; metricsToken: string | undefined }>

/** Dependencies the probes check; an unset one is reported `skipped`. */
export type HealthConfig = Readonly<{
  database: Endpoint | undefined
  cache: (Endpoint & Readonly<{ password: string | undefined }>) | undefined
  externalApi: URL | undefined
  /** Each check's own bound, connect and reply included. */
  timeoutMs: number
  /** How long one round of results answers every probe. */
  cacheMs: number
}>

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const
export type SamplerName = (typeof SAMPLERS)[number]

/** Where spans go and which are kept; with no exporter, the tracing layer is left out entirely. */
export type TracingConfig = Readonly<{
  /** OTLP/gRPC collector; `isSecure` for an https:// endpoint (TLS with the system's roots). */
  otlp: Readonly<{ url: string; isSecure: boolean }> | undefined
  /** Print each span to stdout in the console shape (DESIGN §6). */
  isConsole: boolean
  sampler: SamplerName
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  samplerRatio: number
  /** The standard OTEL_BSP_* settings of the batch span processor. */
  batch: Readonly<{ scheduleDelayMs: number; exportTimeoutMs: number; maxQueueSize: number; maxExportBatchSize: number }>
}>

export const RATE_PROVIDERS = ['coingecko', 'coinbase'] as const
export type RateProviderName = (typeof RATE_PROVIDERS)[number]

/** The BTC exchange-rate upstreams of GET /api/external-data, and how their answers are kept. */
export type RatesConfig = Readonly<{
  /** Asked in this order: the first is the primary, the rest are fallbacks. */
  providers: readonly RateProviderName[]
  /** Each provider's base URL, so tests and air-gapped sites can point elsewhere. */
  urls: Readonly<Record<RateProviderName, URL>>
  /** Each upstream attempt's bound, connect, reply and body included. */
  timeoutMs: number
  /** How long a fetched rate answers every request for its currency. */
  cacheTtlMs: number
  /** How old a cached rate may be and still answer when every upstream fails. */
  staleMs: number
}>

/** Where model artifacts come from and how they are served (DESIGN §10). */
export type ModelsConfig = Readonly<{
  store: StoreSpec
  /** Seconds between hot-reload passes; 0 turns hot reload off. */
  reloadIntervalS: number
  /** Most rows one prediction request may carry. */
  maxBatch: number
}>

/** Drift monitoring (DESIGN §10): the live window, when it is checked, and the PSI thresholds. */
export type DriftConfig = Readonly<{
  isEnabled: boolean
  /** Input rows kept per model. */
  window: number
  /** Fewest rows a score is computed from; at most `window`. */
  minSamples: number
  /** A node-cron expression: five fields, or six with seconds first. */
  schedule: string
  thresholds: Readonly<{ moderate: number; severe: number; spike: number }>
}>

export type Env = Readonly<Record<string, string | undefined>>

/** Every problem found in one pass, so an operator fixes them all in one edit. */
export class ConfigError extends Error {
  override name = 'ConfigError'
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.problems = problems
  }
}

/** Command-line flags, each overriding the environment variable named beside it. */
const FLAGS = {
  name: { env: 'APP_NAME', flag: '--name' },
  host: { env: 'HOST', flag: '--host' },
  port: { env: 'PORT', flag: '--port' },
  env: { env: 'SVC_ENVIRONMENT', flag: '--env' },
  'log-level': { env: 'LOG_LEVEL', flag: '--log-level' },
  'log-format': { env: 'LOG_FORMAT', flag: '--log-format' },
} as const
type FlagName = keyof typeof FLAGS

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/
// A host name or an IPv4/IPv6 literal: no spaces, slashes or control characters.
const HOST_PATTERN = /^[A-Za-z0-9._:%-]{1,253}$/
const MIB = 1024 * 1024
const OTLP_FORMS = 'host:port, http://host:port or https://host:port (e.g. collector:4317)'
const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/

type Source = { readonly label: string; readonly raw: string }

const LOG_LEVEL_ALIASES: Readonly<Record<string, LogLevel>> = { warn: 'warning' }

export const readConfig = (env: Env, argv: readonly string[] = []): Config => {
  const problems: string[] = []
  const flags = parseFlags(argv, problems)

  // Flag first, then variable; an empty variable counts as unset (systemd's `Environment=X=`).
  const source = (flag: FlagName | undefined, variable: string): Source | undefined => {
    const fromFlag = flag === undefined ? undefined : flags[flag]
    if (fromFlag !== undefined) return { label: `${FLAGS[flag as FlagName].flag}=${fromFlag}`, raw: fromFlag }
    const fromEnv = env[variable]
    if (fromEnv === undefined || fromEnv === '') return undefined
    return { label: `${variable}=${fromEnv}`, raw: fromEnv }
  }
  const fail = <T>(src: Source, accepted: string, fallback: T): T => {
    problems.push(`${src.label}: expected ${accepted}`)
    return fallback
  }
  const pattern = (src: Source | undefined, re: RegExp, accepted: string, fallback: string): string =>
    src === undefined ? fallback : re.test(src.raw) ? src.raw : fail(src, accepted, fallback)
  const integer = (src: Source | undefined, min: number, max: number, fallback: number): number => {
    if (src === undefined) return fallback
    const n = /^\d+$/.test(src.raw) ? Number(src.raw) : Number.NaN
    return n >= min && n <= max ? n : fail(src, `an integer from ${min} to ${max}`, fallback)
  }
  const oneOf = <T extends string>(src: Source | undefined, values: readonly T[], fallback: T, aliases: Readonly<Record<string, T>> = {}): T => {
    if (src === undefined) return fallback
    const lower = src.raw.toLowerCase()
    const found = values.find((v) => v === lower) ?? aliases[lower]
    return found ?? fail(src, `one of ${values.join(', ')} (case-insensitive)`, fallback)
  }

  /** A host and its port, or undefined when the host is unset (a port alone is a mistake). */
  const endpoint = (hostVariable: string, portVariable: string, defaultPort: number): Endpoint | undefined => {
    const host = pattern(source(undefined, hostVariable), HOST_PATTERN, 'a host name or IP address', '')
    const portSource = source(undefined, portVariable)
    const port = integer(portSource, 1, 65535, defaultPort)
    if (host !== '') return { host, port }
    if (portSource !== undefined && source(undefined, hostVariable) === undefined)
      problems.push(`${portSource.label}: set ${hostVariable} too, or unset ${portVariable}`)
    return undefined
  }
  const httpUrl = (src: Source | undefined): URL | undefined => {
    if (src === undefined) return undefined
    const url = URL.canParse(src.raw) ? new URL(src.raw) : undefined
    return url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') ? url : fail(src, 'an http:// or https:// URL', undefined)
  }

  /** A base URL the rate client appends paths to: no credentials, query or fragment to lose or leak. */
  const baseUrl = (src: Source | undefined, fallback: string): URL => {
    const url = httpUrl(src)
    if (url === undefined) return new URL(fallback)
    if (url.username === '' && url.password === '' && url.search === '' && url.hash === '') return url
    return fail(src as Source, 'an http:// or https:// base URL without credentials, query or fragment', new URL(fallback))
  }
  const providers = (src: Source | undefined): readonly RateProviderName[] => {
    if (src === undefined) return RATE_PROVIDERS
    const names = src.raw.split(',').map((name) => name.trim().toLowerCase())
    const isValid = names.every((name) => (RATE_PROVIDERS as readonly string[]).includes(name)) && new Set(names).size === names.length
    return isValid ? (names as RateProviderName[]) : fail(src, `a comma-separated list of ${RATE_PROVIDERS.join(', ')}, each at most once`, RATE_PROVIDERS)
  }

  /** The three endpoint forms of DESIGN §3, normalised to a URL the OTLP/gRPC exporter takes. */
  const otlpEndpoint = (src: Source | undefined): TracingConfig['otlp'] => {
    if (src === undefined) return undefined
    const raw = HOST_PORT.test(src.raw) ? `http://${src.raw}` : src.raw
    const url = URL.canParse(raw) ? new URL(raw) : undefined
    const isValid =
      url !== undefined &&
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.hostname !== '' &&
      (url.pathname === '/' || url.pathname === '') &&
      url.search === '' &&
      url.hash === '' &&
      url.username === '' &&
      url.password === ''
    if (!isValid || (url.port !== '' && Number(url.port) === 0)) return fail(src, OTLP_FORMS, undefined)
    return { url: `${url.protocol}//${url.host}`, isSecure: url.protocol === 'https:' }
  }
  const boolean = (src: Source | undefined): boolean => oneOf(src, ['true', 'false'], 'false') === 'true'
  /** A decimal number above `min` (or from `min`, when `isMinIncluded`) and at most `max`. */
  const decimal = (src: Source | undefined, min: number, max: number, fallback: number, isMinIncluded = false): number => {
    if (src === undefined) return fallback
    const n = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(src.raw) ? Number(src.raw) : Number.NaN
    if ((isMinIncluded ? n >= min : n > min) && n <= max) return n
    return fail(src, isMinIncluded ? `a number from ${min} to ${max}` : `a number above ${min} and at most ${max}`, fallback)
  }
  const ratio = (src: Source | undefined): number => decimal(src, 0, 1, 1, true)
  const cron = (src: Source | undefined, fallback: string): string =>
    src === undefined
      ? fallback
      : isCronExpression(src.raw.trim())
        ? src.raw.trim()
        : fail(src, 'a cron expression of five fields, or six with seconds first (e.g. "* * * * *")', fallback)
  const drift = {
    isEnabled: oneOf(source(undefined, 'SVC_DRIFT_ENABLED'), ['true', 'false'], 'true') === 'true',
    window: integer(source(undefined, 'SVC_DRIFT_WINDOW'), 1, 1_000_000, 1000),
    minSamples: integer(source(undefined, 'SVC_DRIFT_MIN_SAMPLES'), 1, 1_000_000, 500),
    schedule: cron(source(undefined, 'SVC_DRIFT_SCHEDULE'), '* * * * *'),
    thresholds: {
      moderate: decimal(source(undefined, 'SVC_DRIFT_MODERATE'), 0, 100, 0.1),
      severe: decimal(source(undefined, 'SVC_DRIFT_SEVERE'), 0, 100, 0.25),
      spike: decimal(source(undefined, 'SVC_DRIFT_SPIKE'), 0, 100, 0.1),
    },
  }
  // RFC 6750 b64token characters; short tokens are guessable. A problem names the token by its
  // position only: the value is a secret and must not reach the error output.
  const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/
  const MIN_TOKEN_LENGTH = 16
  const tokens = (variable: string, raw: string | undefined): string[] => {
    if (raw === undefined || raw.trim() === '') return []
    const list = raw
      .split(',')
      .map((token) => token.trim())
      .filter((token) => token !== '')
    list.forEach((token, i) => {
      const which = list.length === 1 ? 'the token' : `token ${i + 1} of ${list.length}`
      if (!TOKEN.test(token)) problems.push(`${variable}: ${which} has characters outside A-Z a-z 0-9 - . _ ~ + / (and trailing =)`)
      else if (token.length < MIN_TOKEN_LENGTH) problems.push(`${variable}: ${which} is shorter than ${MIN_TOKEN_LENGTH} characters`)
    })
    return list
  }
  const metricsTokens = tokens('SVC_METRICS_TOKEN', env['SVC_METRICS_TOKEN'])
  if (metricsTokens.length > 1) problems.push('SVC_METRICS_TOKEN: expected one token')
  const environment = oneOf(source('env', 'SVC_ENVIRONMENT'), ENVIRONMENTS, 'dev')
  const adminPort = source(undefined, 'SVC_ADMIN_PORT')

  if (drift.minSamples > drift.window) problems.push(`SVC_DRIFT_MIN_SAMPLES=${drift.minSamples}: expected at most SVC_DRIFT_WINDOW (${drift.window})`)
  if (drift.thresholds.severe <= drift.thresholds.moderate) {
    problems.push(`SVC_DRIFT_SEVERE=${drift.thresholds.severe}: expected above SVC_DRIFT_MODERATE (${drift.thresholds.moderate})`)
  }

  const batch = {
    scheduleDelayMs: integer(source(undefined, 'OTEL_BSP_SCHEDULE_DELAY'), 1, 600_000, 5000),
    exportTimeoutMs: integer(source(undefined, 'OTEL_BSP_EXPORT_TIMEOUT'), 1, 600_000, 30_000),
    maxQueueSize: integer(source(undefined, 'OTEL_BSP_MAX_QUEUE_SIZE'), 1, 1_000_000, 2048),
    maxExportBatchSize: integer(source(undefined, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'), 1, 1_000_000, 512),
  }
  if (batch.maxExportBatchSize > batch.maxQueueSize) {
    problems.push(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE=${batch.maxExportBatchSize}: expected at most OTEL_BSP_MAX_QUEUE_SIZE (${batch.maxQueueSize})`)
  }

  // Not through source(): its label repeats the raw value, which may hold a password.
  const modelStore = (raw: string | undefined): StoreSpec => {
    const spec = parseStoreSpec(raw === '' ? undefined : raw)
    if (spec !== undefined) return spec
    problems.push(`SVC_MODEL_STORE=${redactStoreSpec(raw as string)}: expected ${STORE_SPEC_FORMS}`)
    return parseStoreSpec(undefined) as StoreSpec
  }

  const config: Config = {
    name: pattern(source('name', 'APP_NAME'), NAME_PATTERN, 'a name of letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit)', 'svc'),
    host: pattern(source('host', 'HOST'), HOST_PATTERN, 'a host name or IP address', '127.0.0.1'),
    port: integer(source('port', 'PORT'), 0, 65535, 8000),
    environment,
    logLevel: oneOf(source('log-level', 'LOG_LEVEL'), LOG_LEVELS, 'info', LOG_LEVEL_ALIASES),
    logFormat: oneOf(source('log-format', 'LOG_FORMAT'), LOG_FORMATS, 'json'),
    maxBodyBytes: integer(source(undefined, 'SVC_MAX_BODY_BYTES'), 1, 1024 * MIB, MIB),
    drainTimeoutMs: integer(source(undefined, 'SVC_DRAIN_TIMEOUT_MS'), 0, 600_000, 10_000),
    shutdownDelayMs: integer(source(undefined, 'SVC_SHUTDOWN_DELAY_MS'), 0, 600_000, environment === 'dev' ? 0 : 5000),
    maxConnections: integer(source(undefined, 'SVC_MAX_CONNECTIONS'), 0, 1_000_000, 0),
    maxInFlight: integer(source(undefined, 'SVC_MAX_IN_FLIGHT'), 0, 1_000_000, 0),
    maxEventLoopDelayMs: integer(source(undefined, 'SVC_MAX_EVENT_LOOP_DELAY_MS'), 0, 60_000, 0),
    admin:
      adminPort === undefined
        ? undefined
        : { host: pattern(source(undefined, 'SVC_ADMIN_HOST'), HOST_PATTERN, 'a host name or IP address', '127.0.0.1'), port: integer(adminPort, 0, 65535, 0) },
    auth: { apiTokens: tokens('SVC_API_TOKENS', env['SVC_API_TOKENS']), metricsToken: metricsTokens[0] },
    trustRequestId: boolean(source(undefined, 'SVC_TRUST_REQUEST_ID')),
    health: {
      database: endpoint('SVC_DB_HOST', 'SVC_DB_PORT', 5432),
      cache: withPassword(endpoint('SVC_CACHE_HOST', 'SVC_CACHE_PORT', 6379), env['SVC_CACHE_PASSWORD']),
      externalApi: httpUrl(source(undefined, 'SVC_EXTERNAL_API_URL')),
      timeoutMs: integer(source(undefined, 'SVC_HEALTH_TIMEOUT_MS'), 1, 60_000, 500),
      cacheMs: integer(source(undefined, 'SVC_HEALTH_CACHE_MS'), 0, 600_000, 1000),
    },
    tracing: {
      otlp: otlpEndpoint(source(undefined, 'OTLP_ENDPOINT')),
      isConsole: boolean(source(undefined, 'ENABLE_CONSOLE_TRACES')),
      sampler: oneOf(source(undefined, 'OTEL_TRACES_SAMPLER'), SAMPLERS, 'parentbased_always_on'),
      samplerRatio: ratio(source(undefined, 'OTEL_TRACES_SAMPLER_ARG')),
      batch,
    },
    rates: {
      providers: providers(source(undefined, 'SVC_RATE_PROVIDERS')),
      urls: {
        coingecko: baseUrl(source(undefined, 'SVC_RATE_COINGECKO_URL'), 'https://api.coingecko.com/api/v3'),
        coinbase: baseUrl(source(undefined, 'SVC_RATE_COINBASE_URL'), 'https://api.coinbase.com'),
      },
      timeoutMs: integer(source(undefined, 'SVC_RATE_TIMEOUT_MS'), 1, 60_000, 2000),
      cacheTtlMs: integer(source(undefined, 'SVC_RATE_CACHE_TTL_MS'), 0, 3_600_000, 15_000),
      staleMs: integer(source(undefined, 'SVC_RATE_STALE_MS'), 0, 86_400_000, 300_000),
    },
    maxStreams: integer(source(undefined, 'SVC_MAX_STREAMS'), 1, 100_000, 100),
    models: {
      store: modelStore(env['SVC_MODEL_STORE']),
      reloadIntervalS: integer(source(undefined, 'SVC_MODEL_RELOAD_INTERVAL_S'), 0, MAX_RELOAD_INTERVAL_S, 0),
      maxBatch: integer(source(undefined, 'SVC_MAX_BATCH'), 1, 100_000, 1000),
    },
    drift,
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(config)
}

const withPassword = (cache: Endpoint | undefined, password: string | undefined): HealthConfig['cache'] =>
  cache === undefined ? undefined : { ...cache, password: password === '' ? undefined : password }

const parseFlags = (argv: readonly string[], problems: string[]): Partial<Record<FlagName, string>> => {
  const options = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'V' },
    ...Object.fromEntries(Object.keys(FLAGS).map((k) => [k, { type: 'string' }])),
  } as const
  try {
    const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false })
    return values as Partial<Record<FlagName, string>>
  } catch (error: unknown) {
    problems.push(`${(error as Error).message.replace(/\. To specify.*$/s, '')}; accepted flags: ${usageFlags}`)
    return {}
  }
}

const usageFlags = [...Object.values(FLAGS).map((f) => f.flag), '--help', '--version'].join(', ')

export const USAGE = `Usage: svc [options]
       svc loadgen --model NAME [options]   prediction traffic for a running svc (--help for more)

Options (each overrides the environment variable in brackets):
  --host H                listen address [HOST] (default 127.0.0.1)
  --port N                listen port, 0 for any free port [PORT] (default 8000)
  --env dev|stage|prod    deployment environment [SVC_ENVIRONMENT] (default dev)
  --name NAME             service name in logs and metrics [APP_NAME] (default svc)
  --log-level L           DEBUG, INFO, WARNING or ERROR [LOG_LEVEL] (default INFO)
  --log-format F          json or console [LOG_FORMAT] (default json)
  -h, --help              print this help and exit
  -V, --version           print the version and exit

Environment only:
  SVC_MAX_BODY_BYTES      largest request body in bytes (default 1048576)
  SVC_DRAIN_TIMEOUT_MS    graceful shutdown limit in ms (default 10000)
  SVC_SHUTDOWN_DELAY_MS   after a signal, keep accepting this long while /ready answers 503
                          (default 5000 in prod and stage, 0 in dev)
  SVC_MAX_CONNECTIONS     open sockets per listener, 0 for no limit (default 0)
  SVC_MAX_IN_FLIGHT       requests in flight past which new ones get 503, 0 for no limit (default 0)
  SVC_MAX_EVENT_LOOP_DELAY_MS  event-loop lag in ms past which requests get 503, 0 for none (default 0)
  SVC_API_TOKENS          comma-separated bearer tokens for /api/v1/* and /v2/* (default: open)
  SVC_API_TOKENS_FILE     a file of those tokens, one per line (instead of SVC_API_TOKENS)
  SVC_METRICS_TOKEN       the bearer token /metrics needs (default: open)
  SVC_ADMIN_PORT, SVC_ADMIN_HOST    a second listener for /metrics and the probes (host 127.0.0.1)
  SVC_TRUST_REQUEST_ID    true: keep a well-formed inbound X-Request-ID (default false)
  SVC_DB_HOST, SVC_DB_PORT          PostgreSQL checked by the probes (port 5432)
  SVC_CACHE_HOST, SVC_CACHE_PORT    Redis checked by the probes (port 6379)
  SVC_CACHE_PASSWORD                Redis password, sent with AUTH (never logged)
  SVC_EXTERNAL_API_URL              http(s) URL whose GET must answer 2xx
  SVC_HEALTH_TIMEOUT_MS   each check's timeout in ms (default 500)
  SVC_HEALTH_CACHE_MS     how long check results are reused in ms (default 1000)
  OTLP_ENDPOINT           OTLP/gRPC collector: host:4317, http://host:4317 or https://host:4317
  ENABLE_CONSOLE_TRACES   true: print every span to stdout as one JSON line (default false)
  OTEL_TRACES_SAMPLER     always_on, always_off, traceidratio, parentbased_always_on (default),
                          parentbased_always_off or parentbased_traceidratio
  OTEL_TRACES_SAMPLER_ARG the traceidratio samplers' ratio, 0 to 1 (default 1; 0.01 under high traffic)
  OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT, OTEL_BSP_MAX_QUEUE_SIZE,
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE    batch span processor (defaults 5000 ms, 30000 ms, 2048, 512)
  SVC_RATE_PROVIDERS      BTC rate upstreams in the order asked (default coingecko,coinbase)
  SVC_RATE_COINGECKO_URL  CoinGecko API base URL (default https://api.coingecko.com/api/v3)
  SVC_RATE_COINBASE_URL   Coinbase API base URL (default https://api.coinbase.com)
  SVC_RATE_TIMEOUT_MS     each upstream attempt's timeout in ms (default 2000)
  SVC_RATE_CACHE_TTL_MS   how long a fetched rate is reused in ms (default 15000)
  SVC_RATE_STALE_MS       how old a cached rate may still answer when every upstream fails (default 300000)
  SVC_MAX_STREAMS         concurrent /api/insights streams per process (default 100)
  SVC_MODEL_STORE         model artifacts: a directory (path or file://), an http(s):// artifact
                          server, default the artifacts shipped with the package
  SVC_MODEL_RELOAD_INTERVAL_S  seconds between model hot-reload passes, 0 for none (default 0)
  SVC_MAX_BATCH           most rows in one prediction request (default 1000)
  SVC_DRIFT_ENABLED       false turns drift monitoring off (default true)
  SVC_DRIFT_WINDOW        input rows kept per model for drift checks (default 1000)
  SVC_DRIFT_MIN_SAMPLES   fewest rows a drift score is computed from (default 500)
  SVC_DRIFT_SCHEDULE      when drift checks run, a cron expression in UTC (default "* * * * *")
  SVC_DRIFT_MODERATE, SVC_DRIFT_SEVERE   PSI thresholds (defaults 0.1, 0.25)
  SVC_DRIFT_SPIKE         PSI rise since the previous check that is a spike (default 0.1)

Exit codes: 0 stopped cleanly, 1 start-up or runtime failure, 2 invalid configuration.
`
