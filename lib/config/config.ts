// Configuration: read once from the environment and the command line, validated all at once,
// returned frozen. Nothing else under lib/ reads process.env.
//
// Each variable is declared once in lib/config/variables.ts (flag, default, --help text, parser);
// here each section of the Config reads its variables and checks them against each other. The
// sections run in a fixed order, and so the problems of one configuration are listed in it.
import { SvcError } from '../core/errors.js'
import { deepFreeze } from '../core/freeze.js'
import type { Environment, LogFormat, LogLevel, RateProviderName, SamplerName } from './choices.js'
import type { StoreSpec } from './model-store.js'
import type { OtlpEndpoint, PayloadTarget } from './parsers.js'
import { type Env, Reader } from './reader.js'
import { type Name, SHUTDOWN_DELAY_MS_DEFAULTS } from './variables.js'

export {
  ENVIRONMENTS,
  type Environment,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
  RATE_PROVIDERS,
  type RateProviderName,
  SAMPLERS,
  type SamplerName,
} from './choices.js'
export type { Env } from './reader.js'
export type { PayloadTarget } from './parsers.js'

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
   * Unset, it depends on the environment: SHUTDOWN_DELAY_MS_DEFAULTS (./variables.ts).
   */
  shutdownDelayMs: number
  /** Open sockets one listener keeps at once; 0 for no limit. */
  maxConnections: number
  /**
   * How long an idle keep-alive connection is kept. Above the idle timeout of the load balancer in
   * front, so the balancer closes first and never sends a request on a connection svc is closing.
   */
  keepAliveTimeoutMs: number
  /** How long a reply not yet out may go with its client reading none of it before its connection is closed. */
  writeTimeoutMs: number
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

/** Where spans go and which are kept; with no exporter, the tracing layer is left out entirely. */
export type TracingConfig = Readonly<{
  /** OTLP/gRPC collector; `isSecure` for an https:// endpoint (TLS with the system's roots). */
  otlp: OtlpEndpoint | undefined
  /** Print each span to stdout in the console shape (lib/README.md §6). */
  isConsole: boolean
  sampler: SamplerName
  /** The ratio of the `traceidratio` samplers, 0 to 1. */
  samplerRatio: number
  /** The standard OTEL_BSP_* settings of the batch span processor. */
  batch: Readonly<{ scheduleDelayMs: number; exportTimeoutMs: number; maxQueueSize: number; maxExportBatchSize: number }>
}>

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

/** Where model artifacts come from and how they are served (lib/README.md §10). */
export type ModelsConfig = Readonly<{
  store: StoreSpec
  /** How an s3:// store is reached; read whatever the store, used only for s3://. */
  s3: S3Config
  /** Seconds between hot-reload passes; 0 turns hot reload off. */
  reloadIntervalS: number
  /** Most rows one prediction request may carry. */
  maxBatch: number
  /** Largest store file read; a larger one refuses its version (TOO_LARGE), never downloaded. */
  maxBytes: number
  /** Intra-op threads per ONNX session: one suits a VM that runs one instance per core. */
  onnxThreads: number
  /** The ONNX worker pool (lib/models/onnx/pool.ts): 0 workers runs every model in process. */
  onnxPool: Readonly<{ workers: number; inlineMaxUs: number; maxRows: number; maxDelayUs: number; queueRows: number; timeoutMs: number }>
  /** The lower-case header whose value is a request's routing key for a canary split; undefined: the body's `id`. */
  routingHeader: string | undefined
  /** Shadow copies: most waiting, how long an asynchronous one is awaited, a regressor's relative tolerance. */
  shadow: Readonly<{ queue: number; timeoutMs: number; tolerance: number }>
  /** Labels sent back (lib/README.md §10); undefined when no secret is set: feedback is off. */
  feedback: FeedbackConfig | undefined
  /** The payload log (lib/README.md §10); undefined when SVC_PAYLOAD_LOG is unset: nothing is built. */
  payloadLog: PayloadLogConfig | undefined
}>

/**
 * Where prediction events go and how: the queue's size, a file's rotation (size, files kept), a
 * sink's flush interval, the share of requests logged and the inputs never written.
 */
export type PayloadLogConfig = Readonly<{
  target: PayloadTarget
  queue: number
  queueBytes: number
  maxBytes: number
  files: number
  flushMs: number
  percent: number
  exclude: readonly string[]
}>

/** Feedback tokens and labels: the fleet's secrets (never logged), a token's lifetime, the seen set's size. */
export type FeedbackConfig = Readonly<{ secret: string; previousSecret: string | undefined; maxAgeS: number; seen: number }>

/** Drift monitoring (lib/README.md §10): the live window, when it is checked, and the PSI thresholds. */
export type DriftConfig = Readonly<{
  isEnabled: boolean
  /** Input rows kept per model. */
  window: number
  /** Fewest rows a score is computed from; at most `window`. */
  minSamples: number
  /** A node-cron expression: five fields, or six with seconds first. */
  schedule: string
  thresholds: Readonly<{ moderate: number; severe: number; spike: number }>
  /** Exports svc_drift_bin_total and the other per-bin series (lib/drift/bin-counters.ts). */
  hasBinSeries: boolean
}>

/** Every problem found in one pass, so an operator fixes them all in one edit. */
export class ConfigError extends SvcError {
  override name = 'ConfigError'
  readonly code = 'INVALID_CONFIGURATION'
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.problems = problems
  }
}

export const readConfig = (env: Env, argv: readonly string[] = []): Config => readConfigAndDefaulted(env, argv).config

/**
 * readConfig, and the variables that took their defaults because neither they nor their flag were
 * set: start-up says so when SVC_ENVIRONMENT is one (lib/README.md §5, `application_started`).
 * Noted once, while reading; Config itself carries only the values.
 */
export const readConfigAndDefaulted = (env: Env, argv: readonly string[] = []): Readonly<{ config: Config; defaulted: ReadonlySet<Name> }> => {
  const r = new Reader(env, argv)
  const server = readServer(r)
  const config: Config = {
    ...server,
    ...readLogging(r),
    auth: readAuth(r),
    health: readHealth(r),
    tracing: readTracing(r),
    rates: readRates(r),
    ...readLimits(r, server.environment),
    models: readModels(r),
    drift: readDrift(r),
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems)
  return { config: deepFreeze(config), defaulted: r.defaulted }
}

const readServer = (r: Reader): Pick<Config, 'environment' | 'name' | 'host' | 'port' | 'admin'> => ({
  environment: r.read('SVC_ENVIRONMENT'),
  name: r.read('APP_NAME'),
  host: r.read('HOST'),
  port: r.read('PORT'),
  // The host is checked only for a listener that is asked for (a refused port fails the whole read).
  admin: r.isSet('SVC_ADMIN_PORT') ? { host: r.read('SVC_ADMIN_HOST'), port: r.read('SVC_ADMIN_PORT') ?? 0 } : undefined,
})

const readLogging = (r: Reader): Pick<Config, 'logLevel' | 'logFormat' | 'trustRequestId'> => ({
  logLevel: r.read('LOG_LEVEL'),
  logFormat: r.read('LOG_FORMAT'),
  trustRequestId: r.read('SVC_TRUST_REQUEST_ID'),
})

const readAuth = (r: Reader): AuthConfig => ({ apiTokens: r.read('SVC_API_TOKENS') ?? [], metricsToken: r.read('SVC_METRICS_TOKEN') })

const readHealth = (r: Reader): HealthConfig => {
  const database = readEndpoint(r, 'SVC_DB_HOST', 'SVC_DB_PORT')
  const cache = readEndpoint(r, 'SVC_CACHE_HOST', 'SVC_CACHE_PORT')
  const password = r.read('SVC_CACHE_PASSWORD')
  return {
    database,
    cache: cache === undefined ? undefined : { ...cache, password },
    externalApi: r.read('SVC_EXTERNAL_API_URL'),
    timeoutMs: r.read('SVC_HEALTH_TIMEOUT_MS'),
    cacheMs: r.read('SVC_HEALTH_CACHE_MS'),
  }
}

/** A host and its port, or undefined when the host is unset (a port alone is a mistake). */
const readEndpoint = (r: Reader, hostVariable: 'SVC_DB_HOST' | 'SVC_CACHE_HOST', portVariable: 'SVC_DB_PORT' | 'SVC_CACHE_PORT'): Endpoint | undefined => {
  const host = r.read(hostVariable)
  const port = r.read(portVariable)
  if (host !== undefined) return { host, port }
  if (!r.isSet(hostVariable)) r.refuse(portVariable, `set ${hostVariable} too, or unset ${portVariable}`)
  return undefined
}

const readTracing = (r: Reader): TracingConfig => {
  const batch = {
    scheduleDelayMs: r.read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMs: r.read('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: r.read('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: r.read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  }
  if (batch.maxExportBatchSize > batch.maxQueueSize) {
    r.problem(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE=${batch.maxExportBatchSize}: expected at most OTEL_BSP_MAX_QUEUE_SIZE (${batch.maxQueueSize})`)
  }
  return {
    otlp: r.read('OTLP_ENDPOINT'),
    isConsole: r.read('ENABLE_CONSOLE_TRACES'),
    sampler: r.read('OTEL_TRACES_SAMPLER'),
    samplerRatio: r.read('OTEL_TRACES_SAMPLER_ARG'),
    batch,
  }
}

const readRates = (r: Reader): RatesConfig => ({
  providers: r.read('SVC_RATE_PROVIDERS'),
  urls: { coingecko: r.read('SVC_RATE_COINGECKO_URL'), coinbase: r.read('SVC_RATE_COINBASE_URL') },
  timeoutMs: r.read('SVC_RATE_TIMEOUT_MS'),
  cacheTtlMs: r.read('SVC_RATE_CACHE_TTL_MS'),
  staleMs: r.read('SVC_RATE_STALE_MS'),
})

type Limits = Pick<
  Config,
  | 'maxBodyBytes'
  | 'drainTimeoutMs'
  | 'shutdownDelayMs'
  | 'maxConnections'
  | 'keepAliveTimeoutMs'
  | 'writeTimeoutMs'
  | 'maxInFlight'
  | 'maxEventLoopDelayMs'
  | 'maxStreams'
>

const readLimits = (r: Reader, environment: Environment): Limits => ({
  maxBodyBytes: r.read('SVC_MAX_BODY_BYTES'),
  drainTimeoutMs: r.read('SVC_DRAIN_TIMEOUT_MS'),
  shutdownDelayMs: r.read('SVC_SHUTDOWN_DELAY_MS') ?? SHUTDOWN_DELAY_MS_DEFAULTS[environment],
  maxConnections: r.read('SVC_MAX_CONNECTIONS'),
  keepAliveTimeoutMs: r.read('SVC_KEEP_ALIVE_TIMEOUT_MS'),
  writeTimeoutMs: r.read('SVC_WRITE_TIMEOUT_MS'),
  maxInFlight: r.read('SVC_MAX_IN_FLIGHT'),
  maxEventLoopDelayMs: r.read('SVC_MAX_EVENT_LOOP_DELAY_MS'),
  maxStreams: r.read('SVC_MAX_STREAMS'),
})

// How an s3:// model store is reached (lib/README.md §10): the server, the region SigV4 signs for,
// and the credentials, as the AWS tools name them, so one environment serves svc and `aws s3`.
// Read by readConfig for the service, and by readS3Config for the commands that open a store
// (`svc push`, `svc profile`). Credentials come in this order: the variables, the systemd credentials
// svc-s3-* (lib/config/credentials.ts fills the variables from them), then an EC2 instance role
// through IMDSv2 (lib/models/store/s3/credentials.ts); profiles, ECS and web identity are not read.
export type S3Config = Readonly<{
  /** SVC_S3_ENDPOINT, else AWS_ENDPOINT_URL_S3: a non-AWS server, addressed path-style; undefined: AWS. */
  endpoint: URL | undefined
  /** AWS_REGION, else AWS_DEFAULT_REGION; with an endpoint and neither, us-east-1 (MinIO's and R2's `auto` take it). */
  region: string
  /** Static keys, both or neither; undefined: the instance role. */
  keys: Readonly<{ accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined }> | undefined
  /** The instance metadata service: off with AWS_EC2_METADATA_DISABLED=true. */
  imds: Readonly<{ isDisabled: boolean; endpoint: URL }>
}>

/** The region signed for a non-AWS server that names none. */
export const DEFAULT_ENDPOINT_REGION = 'us-east-1'

/** The S3 settings; problems go to `r`. `store` decides whether a missing region is one. */
export const readS3 = (r: Reader, store: StoreSpec): S3Config => {
  const endpoint = r.read('SVC_S3_ENDPOINT') ?? r.read('AWS_ENDPOINT_URL_S3')
  const region = r.read('AWS_REGION') ?? r.read('AWS_DEFAULT_REGION')
  if (store.kind === 's3' && endpoint === undefined && region === undefined) {
    r.problem(`s3://${store.bucket}/${store.prefix}: set AWS_REGION to the bucket's region (AWS), or SVC_S3_ENDPOINT to the server (MinIO, Ceph, R2)`)
  }
  const accessKeyId = r.read('AWS_ACCESS_KEY_ID')
  const secretAccessKey = r.read('AWS_SECRET_ACCESS_KEY')
  const sessionToken = r.read('AWS_SESSION_TOKEN')
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    r.problem('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither (or the credentials svc-s3-access-key-id and svc-s3-secret-access-key)')
  }
  if (sessionToken !== undefined && accessKeyId === undefined)
    r.refuse('AWS_SESSION_TOKEN', 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY too: a session token goes with its keys')
  const imdsEndpoint = r.read('AWS_EC2_METADATA_SERVICE_ENDPOINT')
  if (imdsEndpoint.protocol !== 'http:' || imdsEndpoint.pathname !== '/') {
    r.refuse('AWS_EC2_METADATA_SERVICE_ENDPOINT', 'expected http://host or http://host:port: the metadata service speaks plain HTTP at its root')
  }
  const keys = accessKeyId === undefined || secretAccessKey === undefined ? undefined : { accessKeyId, secretAccessKey, sessionToken }
  return {
    endpoint,
    region: region ?? DEFAULT_ENDPOINT_REGION,
    keys,
    imds: { isDisabled: r.read('AWS_EC2_METADATA_DISABLED'), endpoint: imdsEndpoint },
  }
}

/** The S3 settings of `env` alone, for a command; throws ConfigError naming every problem. */
export const readS3Config = (env: Env, store: StoreSpec): S3Config => {
  const r = new Reader(env, [])
  const s3 = readS3(r, store)
  if (r.problems.length > 0) throw new ConfigError(r.problems)
  return s3
}

const readModels = (r: Reader): ModelsConfig => {
  const store = r.read('SVC_MODEL_STORE')
  return {
    store,
    s3: readS3(r, store),
    reloadIntervalS: r.read('SVC_MODEL_RELOAD_INTERVAL_S'),
    maxBatch: r.read('SVC_MAX_BATCH'),
    maxBytes: r.read('SVC_MODEL_MAX_BYTES'),
    onnxThreads: r.read('SVC_ONNX_THREADS'),
    onnxPool: {
      workers: r.read('SVC_ONNX_WORKERS'),
      inlineMaxUs: r.read('SVC_ONNX_INLINE_MAX_US'),
      maxRows: r.read('SVC_BATCH_MAX_ROWS'),
      maxDelayUs: r.read('SVC_BATCH_MAX_DELAY_US'),
      queueRows: r.read('SVC_BATCH_QUEUE_ROWS'),
      timeoutMs: r.read('SVC_PREDICT_TIMEOUT_MS'),
    },
    routingHeader: r.read('SVC_ROLLOUT_KEY_HEADER'),
    shadow: { queue: r.read('SVC_SHADOW_QUEUE'), timeoutMs: r.read('SVC_SHADOW_TIMEOUT_MS'), tolerance: r.read('SVC_SHADOW_TOLERANCE') },
    feedback: readFeedback(r),
    payloadLog: readPayloadLog(r),
  }
}

const readPayloadLog = (r: Reader): PayloadLogConfig | undefined => {
  const target = r.read('SVC_PAYLOAD_LOG')
  const settings = {
    queue: r.read('SVC_PAYLOAD_LOG_QUEUE'),
    queueBytes: r.read('SVC_PAYLOAD_LOG_QUEUE_BYTES'),
    maxBytes: r.read('SVC_PAYLOAD_LOG_MAX_BYTES'),
    files: r.read('SVC_PAYLOAD_LOG_FILES'),
    flushMs: r.read('SVC_PAYLOAD_LOG_FLUSH_MS'),
    percent: r.read('SVC_PAYLOAD_LOG_PERCENT'),
    exclude: r.read('SVC_PAYLOAD_LOG_EXCLUDE') ?? [],
  }
  return target === undefined ? undefined : { target, ...settings }
}

const readFeedback = (r: Reader): FeedbackConfig | undefined => {
  const secret = r.read('SVC_FEEDBACK_SECRET')
  const previousSecret = r.read('SVC_FEEDBACK_SECRET_PREVIOUS')
  const maxAgeS = r.read('SVC_FEEDBACK_MAX_AGE_S')
  const seen = r.read('SVC_FEEDBACK_SEEN')
  if (secret !== undefined) return { secret, previousSecret, maxAgeS, seen }
  if (previousSecret !== undefined) r.refuse('SVC_FEEDBACK_SECRET_PREVIOUS', 'set SVC_FEEDBACK_SECRET too: the previous secret only checks tokens')
  return undefined
}

const readDrift = (r: Reader): DriftConfig => {
  const drift = {
    isEnabled: r.read('SVC_DRIFT_ENABLED'),
    window: r.read('SVC_DRIFT_WINDOW'),
    minSamples: r.read('SVC_DRIFT_MIN_SAMPLES'),
    schedule: r.read('SVC_DRIFT_SCHEDULE'),
    thresholds: { moderate: r.read('SVC_DRIFT_MODERATE'), severe: r.read('SVC_DRIFT_SEVERE'), spike: r.read('SVC_DRIFT_SPIKE') },
    hasBinSeries: r.read('SVC_DRIFT_BIN_SERIES'),
  }
  if (drift.minSamples > drift.window) r.problem(`SVC_DRIFT_MIN_SAMPLES=${drift.minSamples}: expected at most SVC_DRIFT_WINDOW (${drift.window})`)
  if (drift.thresholds.severe <= drift.thresholds.moderate) {
    r.problem(`SVC_DRIFT_SEVERE=${drift.thresholds.severe}: expected above SVC_DRIFT_MODERATE (${drift.thresholds.moderate})`)
  }
  return drift
}
