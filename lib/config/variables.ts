// Every variable svc reads, declared once: its flag, its default, what --help says and how its text
// is parsed. lib/config/config.ts reads them section by section, ./usage.ts lists them in this order for
// --help, and test/config/variables.readme.test.ts holds README.md's configuration table to them. A new
// variable is one entry here, one read in its section, and one row in README.md.
import { ENVIRONMENTS, type Environment, LOG_FORMATS, LOG_LEVELS, RATE_PROVIDERS, SAMPLERS } from './choices.js'
import { DEFAULT_MAX_BYTES, DEFAULT_STORE_ROOT, redactStoreSpec } from './model-store.js'
import {
  baseUrl,
  boolean,
  cron,
  decimal,
  feedbackSecret,
  headerName,
  host,
  httpUrl,
  awsRegion,
  integer,
  listOf,
  names,
  oneOf,
  otlpEndpoint,
  payloadTarget,
  type Parser,
  serviceName,
  storeSpec,
  text,
  token,
  tokens,
} from './parsers.js'
import { MAX_RELOAD_INTERVAL_S } from './reload-interval.js'

export type Variable<T> = Readonly<{
  /** The command-line flag that overrides the variable: `--name arg` in --help. */
  flag?: Readonly<{ name: string; arg: string }>
  /** What --help says the variable is for. */
  help: string
  /** The text the variable stands for when unset, parsed as a set one is; absent, the value is undefined. */
  default?: string
  /** How --help and README.md show the default when `default` is not what an operator should read. */
  shown?: string
  /** Absent only for the *_FILE variables, which lib/config/credentials.ts reads before readConfig does. */
  parse?: Parser<T>
  /** How a problem shows the value: masked, or not at all when this returns undefined (a secret). */
  redact?: (raw: string) => string | undefined
}>

/**
 * SVC_SHUTDOWN_DELAY_MS when unset: behind a load balancer (prod, stage), time for its probes to take
 * the instance out; none in dev. --help and README.md say it as `shown` words it, from this table.
 */
export const SHUTDOWN_DELAY_MS_DEFAULTS: Readonly<Record<Environment, number>> = Object.freeze({ prod: 5000, stage: 5000, dev: 0 })

/** A default that depends on the environment, in words: `5000 in prod and stage, 0 in dev`. */
const perEnvironment = (defaults: Readonly<Record<Environment, number>>): string => {
  const byValue = new Map<number, string[]>()
  for (const [environment, value] of Object.entries(defaults)) byValue.set(value, [...(byValue.get(value) ?? []), environment])
  return [...byValue].map(([value, environments]) => `${value} in ${environments.join(' and ')}`).join(', ')
}

const MIB = 1024 * 1024
const SECRET = (): undefined => undefined

export const VARIABLES = {
  APP_NAME: { flag: { name: 'name', arg: 'NAME' }, help: 'service name in logs and metrics', default: 'svc', parse: serviceName },
  HOST: { flag: { name: 'host', arg: 'H' }, help: 'listen address', default: '127.0.0.1', parse: host },
  PORT: { flag: { name: 'port', arg: 'N' }, help: 'listen port, 0 for any free port', default: '8000', parse: integer(0, 65535) },
  SVC_ENVIRONMENT: { flag: { name: 'env', arg: ENVIRONMENTS.join('|') }, help: 'deployment environment', default: 'dev', parse: oneOf(ENVIRONMENTS) },
  LOG_LEVEL: {
    flag: { name: 'log-level', arg: 'L' },
    help: 'DEBUG, INFO, WARNING or ERROR',
    default: 'INFO',
    parse: oneOf(LOG_LEVELS, { warn: 'warning' }),
  },
  LOG_FORMAT: { flag: { name: 'log-format', arg: 'F' }, help: 'json or console', default: 'json', parse: oneOf(LOG_FORMATS) },

  SVC_MAX_BODY_BYTES: { help: 'largest request body in bytes', default: String(MIB), parse: integer(1, 1024 * MIB) },
  SVC_DRAIN_TIMEOUT_MS: { help: 'graceful shutdown limit in ms', default: '10000', parse: integer(0, 600_000) },
  SVC_SHUTDOWN_DELAY_MS: {
    help: 'after a signal, keep accepting this long while /ready answers 503',
    shown: perEnvironment(SHUTDOWN_DELAY_MS_DEFAULTS),
    parse: integer(0, 600_000),
  },
  SVC_MAX_CONNECTIONS: { help: 'open sockets per listener, 0 for no limit', default: '0', parse: integer(0, 1_000_000) },
  SVC_KEEP_ALIVE_TIMEOUT_MS: {
    help: "how long an idle keep-alive connection is kept, in ms; above the load balancer's own idle timeout",
    default: '65000',
    parse: integer(1000, 3_600_000),
  },
  SVC_WRITE_TIMEOUT_MS: {
    help: 'how long a reply may wait for its client to read any of it, in ms, before its connection is closed',
    default: '30000',
    parse: integer(1000, 3_600_000),
  },
  SVC_MAX_IN_FLIGHT: { help: 'requests in flight past which new ones get 503, 0 for no limit', default: '0', parse: integer(0, 1_000_000) },
  SVC_MAX_EVENT_LOOP_DELAY_MS: { help: 'event-loop lag in ms past which requests get 503, 0 for none', default: '0', parse: integer(0, 60_000) },
  SVC_API_TOKENS: { help: 'comma-separated bearer tokens for /api/v1/* and /v2/*; unset, they are open', parse: tokens, redact: SECRET },
  SVC_API_TOKENS_FILE: { help: 'a file of those tokens, one per line (instead of SVC_API_TOKENS)' },
  SVC_METRICS_TOKEN: { help: 'the bearer token /metrics needs; unset, it is open', parse: token, redact: SECRET },
  SVC_ADMIN_PORT: { help: 'a second listener for /metrics and the probes, which then leave the public one', parse: integer(0, 65535) },
  SVC_ADMIN_HOST: { help: "the second listener's address", default: '127.0.0.1', parse: host },
  SVC_TRUST_REQUEST_ID: { help: 'true: keep a well-formed inbound X-Request-ID', default: 'false', parse: boolean },

  SVC_DB_HOST: { help: 'PostgreSQL checked by the probes', parse: host },
  SVC_DB_PORT: { help: 'its port', default: '5432', parse: integer(1, 65535) },
  SVC_CACHE_HOST: { help: 'Redis checked by the probes', parse: host },
  SVC_CACHE_PORT: { help: 'its port', default: '6379', parse: integer(1, 65535) },
  SVC_CACHE_PASSWORD: { help: 'Redis password, sent with AUTH (never logged)', parse: text, redact: SECRET },
  SVC_EXTERNAL_API_URL: { help: 'http(s) URL whose GET must answer 2xx', parse: httpUrl },
  SVC_HEALTH_TIMEOUT_MS: { help: "each check's timeout in ms", default: '500', parse: integer(1, 60_000) },
  SVC_HEALTH_CACHE_MS: { help: 'how long check results are reused in ms', default: '1000', parse: integer(0, 600_000) },

  OTLP_ENDPOINT: { help: 'OTLP/gRPC collector: host:4317, http://host:4317 or https://host:4317', parse: otlpEndpoint },
  ENABLE_CONSOLE_TRACES: { help: 'true: print every span to stdout as one JSON line', default: 'false', parse: boolean },
  OTEL_TRACES_SAMPLER: { help: `which spans are kept: ${SAMPLERS.join(', ')}`, default: 'parentbased_always_on', parse: oneOf(SAMPLERS) },
  OTEL_TRACES_SAMPLER_ARG: { help: "the traceidratio samplers' ratio, 0 to 1; 0.01 under high traffic", default: '1', parse: decimal(0, 1, true) },
  OTEL_BSP_SCHEDULE_DELAY: { help: 'ms between batch span exports', default: '5000', parse: integer(1, 600_000) },
  OTEL_BSP_EXPORT_TIMEOUT: { help: 'ms a span export may take', default: '30000', parse: integer(1, 600_000) },
  OTEL_BSP_MAX_QUEUE_SIZE: { help: 'spans waiting for export; beyond it they are dropped', default: '2048', parse: integer(1, 1_000_000) },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: { help: 'spans per export, at most OTEL_BSP_MAX_QUEUE_SIZE', default: '512', parse: integer(1, 1_000_000) },

  SVC_RATE_PROVIDERS: { help: 'BTC rate upstreams in the order asked', default: RATE_PROVIDERS.join(','), parse: listOf(RATE_PROVIDERS) },
  SVC_RATE_COINGECKO_URL: { help: 'CoinGecko API base URL', default: 'https://api.coingecko.com/api/v3', parse: baseUrl },
  SVC_RATE_COINBASE_URL: { help: 'Coinbase API base URL', default: 'https://api.coinbase.com', parse: baseUrl },
  SVC_RATE_TIMEOUT_MS: { help: "each upstream attempt's timeout in ms", default: '2000', parse: integer(1, 60_000) },
  SVC_RATE_CACHE_TTL_MS: { help: 'how long a fetched rate is reused in ms', default: '15000', parse: integer(0, 3_600_000) },
  SVC_RATE_STALE_MS: { help: 'how old a cached rate may still answer when every upstream fails', default: '300000', parse: integer(0, 86_400_000) },
  SVC_MAX_STREAMS: { help: 'concurrent /api/insights streams per process', default: '100', parse: integer(1, 100_000) },

  SVC_MODEL_STORE: {
    help: 'model artifacts: a directory (path or file://) or an http(s):// artifact server',
    default: DEFAULT_STORE_ROOT,
    shown: 'the artifacts shipped in lib/models/artifacts',
    parse: storeSpec,
    // Its label would repeat the raw value, which may hold a password.
    redact: redactStoreSpec,
  },
  SVC_S3_ENDPOINT: {
    help: 'an s3:// store on a server other than AWS (MinIO, Ceph, R2), addressed path-style',
    parse: baseUrl,
  },
  AWS_ENDPOINT_URL_S3: { help: 'as SVC_S3_ENDPOINT, which wins, under the name AWS tools read', parse: baseUrl },
  AWS_REGION: { help: "an s3:// store's region; without an endpoint, its regional AWS endpoint", parse: awsRegion },
  AWS_DEFAULT_REGION: { help: 'the region when AWS_REGION is unset', parse: awsRegion },
  AWS_ACCESS_KEY_ID: { help: "an s3:// store's access key id (or the credential svc-s3-access-key-id)", parse: text, redact: SECRET },
  AWS_SECRET_ACCESS_KEY: { help: 'its secret access key (or the credential svc-s3-secret-access-key)', parse: text, redact: SECRET },
  AWS_SESSION_TOKEN: { help: 'its session token, for temporary keys (or the credential svc-s3-session-token)', parse: text, redact: SECRET },
  AWS_EC2_METADATA_DISABLED: {
    help: 'true: never ask the EC2 instance metadata service for role credentials',
    default: 'false',
    parse: boolean,
  },
  AWS_EC2_METADATA_SERVICE_ENDPOINT: {
    help: 'where the instance metadata service (IMDSv2) answers',
    default: 'http://169.254.169.254',
    parse: baseUrl,
  },
  SVC_MODEL_RELOAD_INTERVAL_S: { help: 'seconds between model hot-reload passes, 0 for none', default: '0', parse: integer(0, MAX_RELOAD_INTERVAL_S) },
  SVC_MAX_BATCH: { help: 'most rows in one prediction request', default: '1000', parse: integer(1, 100_000) },
  SVC_MODEL_MAX_BYTES: {
    help: 'largest model store file read (model.json, model.onnx, a profile), in bytes',
    default: String(DEFAULT_MAX_BYTES),
    parse: integer(1024, 4 * 1024 * 1024 * 1024),
  },
  SVC_ONNX_THREADS: { help: 'threads each ONNX model runs a prediction on (intra-op)', default: '1', parse: integer(1, 256) },
  SVC_ONNX_WORKERS: {
    help: 'worker threads for ONNX models too heavy for the event loop; 0: all in process',
    default: '1',
    parse: integer(0, 64),
  },
  SVC_ONNX_INLINE_MAX_US: {
    help: 'an ONNX graph whose one-row run takes fewer µs stays in process; 0: none does',
    default: '50',
    parse: integer(0, 10_000_000),
  },
  SVC_BATCH_MAX_ROWS: { help: 'most rows one pooled ONNX run joins from concurrent requests', default: '64', parse: integer(1, 100_000) },
  SVC_BATCH_MAX_DELAY_US: {
    help: 'µs a free ONNX worker waits for more rows to join its batch; 0: none',
    default: '0',
    parse: integer(0, 1_000_000),
  },
  SVC_BATCH_QUEUE_ROWS: {
    help: 'most rows waiting for an ONNX worker; past it, 503',
    default: '4096',
    parse: integer(1, 10_000_000),
  },
  SVC_PREDICT_TIMEOUT_MS: {
    help: 'longest a pooled ONNX prediction may take, waiting included; then 503',
    default: '10000',
    parse: integer(1, 600_000),
  },
  SVC_ROLLOUT_KEY_HEADER: {
    help: "request header whose value keeps a client on one side of a canary split (e.g. X-Session-ID); unset: the body's id",
    parse: headerName,
  },
  SVC_SHADOW_QUEUE: { help: 'most shadow copies waiting to be predicted; more are dropped and counted', default: '256', parse: integer(1, 100_000) },
  SVC_SHADOW_TIMEOUT_MS: { help: 'how long an asynchronous shadow prediction is awaited, in ms', default: '1000', parse: integer(1, 60_000) },
  SVC_FEEDBACK_SECRET: {
    help: 'signs a feedback token per answered row: 16 bytes or more, the same on every instance; unset, off',
    parse: feedbackSecret,
    redact: SECRET,
  },
  SVC_FEEDBACK_SECRET_FILE: { help: 'a file holding that secret (instead of SVC_FEEDBACK_SECRET)' },
  SVC_FEEDBACK_SECRET_PREVIOUS: { help: 'a second secret: tokens it signed are accepted, and none is signed with it', parse: feedbackSecret, redact: SECRET },
  SVC_FEEDBACK_SECRET_PREVIOUS_FILE: { help: 'a file holding the previous secret (instead of SVC_FEEDBACK_SECRET_PREVIOUS)' },
  SVC_FEEDBACK_MAX_AGE_S: { help: 'how long a feedback token is accepted, in seconds', default: '2592000', parse: integer(1, 315_360_000) },
  SVC_FEEDBACK_SEEN: { help: 'feedback tokens remembered to refuse a label sent twice (per process)', default: '1000000', parse: integer(1, 100_000_000) },
  SVC_SHADOW_TOLERANCE: {
    help: "relative difference past which a regressor's shadow value disagrees with its answer",
    default: '0.05',
    parse: decimal(0, 1, true),
  },
  SVC_PAYLOAD_LOG: {
    help: 'where prediction events are written: a file path (JSON lines, rotated) or an http(s):// sink; unset, off',
    parse: payloadTarget,
    // A sink's URL may hold a password.
    redact: redactStoreSpec,
  },
  SVC_PAYLOAD_LOG_QUEUE: { help: 'most payload events waiting to be written; more are dropped and counted', default: '10000', parse: integer(1, 1_000_000) },
  SVC_PAYLOAD_LOG_QUEUE_BYTES: {
    help: 'most bytes the waiting payload events hold (their rows, answers and tokens); more are dropped and counted',
    default: String(64 * MIB),
    parse: integer(MIB, 4096 * MIB),
  },
  SVC_PAYLOAD_LOG_MAX_BYTES: {
    help: 'size in bytes past which the payload log file is rotated',
    default: String(100 * MIB),
    parse: integer(1024, 1024 * 1024 * MIB),
  },
  SVC_PAYLOAD_LOG_FILES: { help: 'rotated payload log files kept (<path>.1 … <path>.N)', default: '5', parse: integer(1, 1000) },
  SVC_PAYLOAD_LOG_FLUSH_MS: { help: 'longest an event waits before it is POSTed to the sink, in ms', default: '1000', parse: integer(10, 60_000) },
  SVC_PAYLOAD_LOG_PERCENT: { help: 'share of prediction requests logged, 0 to 100', default: '100', parse: decimal(0, 100, true) },
  SVC_PAYLOAD_LOG_EXCLUDE: { help: 'comma-separated input names never written to the payload log (personal data)', parse: names },

  SVC_DRIFT_ENABLED: { help: 'false turns drift monitoring off', default: 'true', parse: boolean },
  SVC_DRIFT_WINDOW: { help: 'input rows kept per model for drift checks', default: '1000', parse: integer(1, 1_000_000) },
  SVC_DRIFT_MIN_SAMPLES: { help: 'fewest rows a drift score is computed from, at most SVC_DRIFT_WINDOW', default: '500', parse: integer(1, 1_000_000) },
  SVC_DRIFT_SCHEDULE: { help: 'when drift checks run, a cron expression in UTC', default: '* * * * *', parse: cron },
  SVC_DRIFT_MODERATE: { help: 'PSI at or above which drift is moderate', default: '0.1', parse: decimal(0, 100) },
  SVC_DRIFT_SEVERE: { help: 'PSI at or above which drift is severe, above SVC_DRIFT_MODERATE', default: '0.25', parse: decimal(0, 100) },
  SVC_DRIFT_SPIKE: { help: 'PSI rise since the previous check that is a spike', default: '0.1', parse: decimal(0, 100) },
  SVC_DRIFT_BIN_SERIES: {
    help: 'false stops exporting the per-bin row counters and reference shares fleet PSI is computed from',
    default: 'true',
    parse: boolean,
  },
} satisfies Readonly<Record<string, Variable<unknown>>>

type Declared = typeof VARIABLES
export type Name = keyof Declared
/** The variables readConfig parses: all but the *_FILE ones. */
export type Readable = { [K in Name]: Declared[K] extends { parse: Parser<unknown> } ? K : never }[Name]
/** What reading a variable gives: its parser's value, or undefined too when it has no default. */
export type Value<K extends Readable> = Declared[K] extends { parse: Parser<infer T> } ? (Declared[K] extends { default: string } ? T : T | undefined) : never
