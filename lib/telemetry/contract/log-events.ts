// The log contract, declared once: every event the service logs, at which levels, with which
// members. README.md's Logs table is rendered from these rows, and test/structure/readme-tables.test.ts
// holds the table, the code's log calls (their events and levels) and these rows to one another. A
// member marked `?` is present only sometimes; `fields` says what the members hold, and when.
import type { LogLevel } from '../../config/choices.js'

export type LogEventRow = Readonly<{
  /** Events logged with the same members; most rows hold one. */
  events: readonly string[]
  /** Every level a call site logs these events at; `stderr` for the process's last words. */
  levels: readonly (LogLevel | 'stderr')[]
  /** The Level cell, when the levels need words. */
  level?: string
  /** Every member the events carry, besides the ones every line has. */
  members: readonly string[]
  fields: string
}>

const ERROR = '`error` (`type`, `message`, `stack`)'

export const LOG_EVENTS: readonly LogEventRow[] = [
  {
    events: ['application_started'],
    levels: ['info', 'warning'],
    level: 'info; warning when `SVC_ENVIRONMENT` was unset',
    members: ['version', 'environment', 'environment_defaulted', 'host', 'port', 'admin_host?', 'admin_port?'],
    fields: '`version`, `environment`, `environment_defaulted` (true: unset, so `dev`), `host`, `port`; `admin_host`, `admin_port`',
  },
  {
    events: ['request_rejected'],
    levels: ['info', 'warning'],
    level: 'info; warning for a 503',
    members: ['status', 'code', 'reason'],
    fields:
      "`status`, `code`, `reason` (Node's parser error such as `HPE_INVALID_METHOD`, or `CONNECT`, `MAX_CONNECTIONS`): refused " +
      'before routing, so no method or path',
  },
  {
    events: ['stream_stalled', 'reply_stalled'],
    levels: ['warning'],
    members: ['path', 'stalled_ms'],
    fields: '`path`, `stalled_ms`: a stream or reply left unread that long: dropped',
  },
  {
    events: ['request_started'],
    levels: ['debug', 'info'],
    level: 'info (debug on probes)',
    members: ['method', 'path'],
    fields: '`method`, `path`',
  },
  {
    events: ['request_completed'],
    levels: ['debug', 'info', 'error'],
    level: 'info (debug on probes); error on a 5xx, or whenever something was thrown',
    members: ['method', 'path', 'route', 'status', 'duration_ms', 'error?', 'problem?', 'model?', 'model_version?'],
    fields:
      `\`method\`, \`path\`, \`route\` (the template), \`status\`, \`duration_ms\`; ${ERROR} when thrown; on a deliberate 5xx ` +
      `(an \`HttpError\`, such as a 503 for an upstream down), \`problem\` (\`type\`, \`detail\`); on a prediction answered, ` +
      `\`model\` and \`model_version\`, the version that answered`,
  },
  {
    events: ['request_failed'],
    levels: ['error'],
    members: ['method', 'path', 'error'],
    fields: '`method`, `path`, `error`: a layer threw, or a body was not JSON-serialisable; answered 500',
  },
  {
    events: ['stream_failed'],
    levels: ['error'],
    members: ['path', 'error'],
    fields: '`path`, `error`: a stream broke',
  },
  {
    events: ['reply_hook_failed'],
    levels: ['error'],
    members: ['method', 'path', 'error'],
    fields:
      `\`method\`, \`path\`, ${ERROR}: a reply-written hook threw after the answer was sent; the hooks after it still ran, and ` +
      `it counts in \`http_exceptions_total\``,
  },
  {
    events: ['upstream_failed'],
    levels: ['warning'],
    members: ['upstream', 'reason', 'detail'],
    fields: '`upstream`, `reason`, `detail`: an exchange-rate upstream failed; the next is asked',
  },
  {
    events: ['model_loaded'],
    levels: ['info'],
    members: ['model', 'version', 'sha256'],
    fields: "`model`, `version`, `sha256` (first 12 hex digits: the drift bin series' `build`)",
  },
  {
    events: ['model_removed'],
    levels: ['info'],
    members: ['model'],
    fields: '`model`: left out of two store listings in a row; its series go',
  },
  {
    events: ['onnx_model_placed'],
    levels: ['info'],
    members: ['model', 'version', 'run_us', 'runs_in'],
    fields: '`model`, `version`, `run_us` (its fastest one-row run), `runs_in` (`process`, `workers`)',
  },
  {
    events: ['onnx_worker_replaced'],
    levels: ['error'],
    members: ['reason'],
    fields: '`reason`: an ONNX worker threw or exited; its batch failed, a new one loaded every session',
  },
  {
    events: ['model_reloaded'],
    levels: ['info'],
    members: ['model', 'version', 'versions', 'canary?', 'shadow?'],
    fields:
      '`model`, `version` (the default), `versions`, `canary`?, `shadow`? (`{version, percent}`): a reload changed what a model serves, or only the split',
  },
  {
    events: ['model_unavailable'],
    levels: ['error'],
    members: ['model', 'version?', 'reason', 'detail?'],
    fields: '`model`, `version`?, `reason`, `detail`?: a model that could not be loaded',
  },
  {
    events: ['model_reload_failed'],
    levels: ['warning'],
    members: ['model', 'version?', 'reason', 'detail?'],
    fields: '`model`, `version`?, `reason`, `detail`?: a reload found a version broken; the old one keeps serving',
  },
  {
    events: ['model_rollout_refused'],
    levels: ['warning'],
    members: ['model', 'reason'],
    fields: '`model`, `reason` (naming the manifest member): the previous split serves on',
  },
  {
    events: ['shadow_prediction_failed'],
    levels: ['warning'],
    members: ['model', 'version', 'outcome', 'message'],
    fields: "`model`, `version` (the shadow's), `outcome` (`error`, `timeout`), `message`; outside any request",
  },
  {
    events: ['payload_log_failed'],
    levels: ['warning'],
    members: ['sink', 'reason'],
    fields:
      '`sink` (`file`, `http`), `reason` (an errno code such as `ENOSPC`, `HTTP 503`, `connection refused`, `no answer within ' +
      '5000 ms`, `disk not answering`, `event not built: …`): once per new reason, outside any request; its events count as `failed`',
  },
  {
    events: ['payload_log_recovered'],
    levels: ['info'],
    members: ['sink'],
    fields: '`sink`: the first batch written after failures',
  },
  {
    events: ['model_store_failed'],
    levels: ['error'],
    members: ['store', 'code', 'detail'],
    fields: '`store`, `code`, `detail`: the model store could not be listed',
  },
  {
    events: ['model_store_credentials_stale'],
    levels: ['warning'],
    members: ['store', 'detail'],
    fields: '`store`, `detail`: an instance role not renewed; its valid keys sign on',
  },
  {
    events: ['model_dispose_failed'],
    levels: ['warning'],
    members: ['model', 'version', 'type', 'message', 'stack'],
    fields: "`model`, `version`, the error's `type`, `message`, `stack`: a build no longer served could not be freed",
  },
  {
    events: ['drift_detected'],
    levels: ['warning'],
    members: ['model', 'version', 'feature?', 'output?', 'psi', 'severity', 'previous_psi?', 'samples'],
    fields:
      '`model`, `version`, `feature` (an input) or `output` (the answers), `psi`, `severity` (what the alerts counter counted: ' +
      '`["severe"]`, `["moderate", "spike"]`…), `previous_psi` (a spike\'s previous score), `samples`',
  },
  {
    events: ['drift_check_failed'],
    levels: ['error'],
    members: ['model?', 'version?', 'message', 'type?', 'stack?'],
    fields: "`model`, `version`, `message`; or the error's `type`, `message`, `stack` when a whole run fails",
  },
  {
    events: ['drift_check_completed'],
    levels: ['debug'],
    members: ['models', 'duration_ms'],
    fields: '`models`, `duration_ms`: a drift check ended',
  },
  {
    events: ['drift_check_skipped'],
    levels: ['warning'],
    members: ['reason', 'schedule'],
    fields: '`reason`, `schedule`: a scheduled check found the previous one still running',
  },
  {
    events: ['drift_series_high'],
    levels: ['warning'],
    members: ['metric', 'series', 'limit', 'advice'],
    fields: '`metric`, `series`, `limit` (1000), `advice`: a publish of the models takes one [bin metric](#drift-across-a-fleet) over 1000 series',
  },
  {
    events: ['trace_export_failed'],
    levels: ['error'],
    members: ['exporter', 'endpoint', 'code', 'message', 'spans_dropped'],
    fields: '`exporter`, `endpoint`, `code` (`StatusCode.UNAVAILABLE`, `StatusCode.INVALID_ARGUMENT`…), `message`, `spans_dropped`',
  },
  {
    events: ['trace_export_recovered'],
    levels: ['info'],
    members: ['exporter', 'endpoint', 'failed_for_ms', 'spans_dropped'],
    fields: '`exporter`, `endpoint`, `failed_for_ms`, `spans_dropped` (during the outage)',
  },
  {
    events: ['trace_flush_incomplete'],
    levels: ['warning'],
    members: ['timeout_ms'],
    fields: '`timeout_ms`: spans still queued at exit were given up',
  },
  {
    events: ['shutdown_started'],
    levels: ['info'],
    members: ['signal', 'shutdown_delay_ms', 'drain_timeout_ms'],
    fields: '`signal`, `shutdown_delay_ms`, `drain_timeout_ms`',
  },
  {
    events: ['shutdown_forced'],
    levels: ['warning'],
    members: ['signal'],
    fields: '`signal`',
  },
  {
    events: ['application_stopped'],
    levels: ['info', 'warning'],
    level: 'info; warning after a drain timeout',
    members: ['signal', 'reason?'],
    fields: '`signal`; `reason`',
  },
  {
    events: ['uncaught_exception', 'unhandled_rejection'],
    levels: ['stderr'],
    level: 'error, stderr',
    members: ['error'],
    fields: '`error`',
  },
]

/** A row of README.md's Logs table, `| Event | Level | Fields |`. */
export const logTableRow = (row: LogEventRow): string =>
  `| ${row.events.map((event) => `\`${event}\``).join(', ')} | ${row.level ?? row.levels.join(', ')} | ${row.fields} |`
