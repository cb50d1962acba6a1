// The metrics contract, declared once: every family the service exposes (prom-client's process and
// Node.js defaults aside), with its type, labels and HELP text. README.md's Metrics table is
// rendered from these rows, and test/structure/readme-tables.test.ts holds the table, these rows and
// what a running service's registry exposes (TYPE, HELP and the labels of its series) to one another.
// `doc` is the Labels cell: the labels, with their values where they are a closed set, and a note.
//
// Series that alerts take `rate()` of exist at 0 from start-up or first use: shed reasons, dropped
// spans, upstream outcomes, model outcomes, drift check results and alert severities. Series off a
// request's path (upstream, drift, shedding) resolve their prom-client children (`labels()`) once
// and keep them.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary'

export type MetricFamily = Readonly<{
  name: string
  type: MetricType
  /** The value, when it is a constant (svc_build_info's 1). */
  value?: string
  /** Every label, `environment` (the registry's default label) included. */
  labels: readonly string[]
  help: string
  doc: string
}>

export const METRIC_FAMILIES: readonly MetricFamily[] = [
  {
    name: 'http_requests_total',
    type: 'counter',
    labels: ['method', 'endpoint', 'status', 'environment'],
    help: 'Total HTTP requests.',
    doc: '`method`, `endpoint`, `status`, `environment`',
  },
  {
    name: 'http_request_duration_seconds',
    type: 'histogram',
    labels: ['method', 'endpoint', 'environment'],
    help: 'HTTP request duration in seconds.',
    doc: '`method`, `endpoint`, `environment`',
  },
  {
    name: 'http_requests_in_flight',
    type: 'gauge',
    labels: ['environment'],
    help: 'HTTP requests currently being processed.',
    doc: '`environment`',
  },
  {
    name: 'http_exceptions_total',
    type: 'counter',
    labels: ['exception_type', 'environment'],
    help: 'Exceptions raised while handling HTTP requests.',
    doc: '`exception_type`, `environment`',
  },
  {
    name: 'svc_build_info',
    type: 'gauge',
    value: '1',
    labels: ['version', 'node_version', 'environment'],
    help: 'Build information; the value is always 1.',
    doc: '`version`, `node_version`, `environment`',
  },
  {
    name: 'svc_spans_dropped_total',
    type: 'counter',
    labels: ['exporter', 'reason', 'environment'],
    help: 'Spans lost: the export queue was full, or their batch failed to export.',
    doc: '`exporter` (`otlp`, `console`), `reason` (`queue_full`, `export_failed`), `environment`; only while tracing runs',
  },
  {
    name: 'svc_upstream_requests_total',
    type: 'counter',
    labels: ['upstream', 'outcome', 'environment'],
    help: 'Requests to third-party upstreams, by outcome (success, error, timeout).',
    doc: '`upstream` (`coingecko`, `coinbase`), `outcome` (`success`, `error`, `timeout`), `environment` ([BTC exchange rate](#btc-exchange-rate))',
  },
  {
    name: 'svc_upstream_request_duration_seconds',
    type: 'histogram',
    labels: ['upstream', 'environment'],
    help: 'Duration of requests to third-party upstreams in seconds, body included.',
    doc: '`upstream`, `environment`',
  },
  {
    name: 'svc_health_check_status',
    type: 'gauge',
    labels: ['component', 'environment'],
    help: 'Result of the last dependency check: 1 ok, 0 failed (absent when the check is not configured).',
    doc: '`component`, `environment`: 1 ok, 0 failed; absent when skipped ([Health probes](#health-probes))',
  },
  {
    name: 'svc_health_check_duration_seconds',
    type: 'histogram',
    labels: ['component', 'environment'],
    help: 'Duration of dependency checks in seconds.',
    doc: '`component`, `environment`',
  },
  {
    name: 'svc_model_prediction_requests_total',
    type: 'counter',
    labels: ['model', 'version', 'outcome', 'environment'],
    help: 'Prediction requests for a served model version, by outcome (success, client_error, server_error, overloaded).',
    doc: '`model`, `version`, `outcome` (`success`, `client_error`, `server_error`, `overloaded`), `environment` ([Models](#models))',
  },
  {
    name: 'svc_model_predictions_total',
    type: 'counter',
    labels: ['model', 'version', 'environment'],
    help: 'Rows predicted by a model version.',
    doc: '`model`, `version`, `environment`: rows predicted',
  },
  {
    name: 'svc_model_prediction_duration_seconds',
    type: 'histogram',
    labels: ['model', 'version', 'environment'],
    help: 'Time to encode and predict one request batch, a wait for an ONNX worker left out, in seconds.',
    doc: '`model`, `version`, `environment`: encoding and inference of successes, from 0.1 ms, no queue',
  },
  {
    name: 'svc_model_prediction_batch_size',
    type: 'histogram',
    labels: ['model', 'environment'],
    help: 'Rows per successful prediction request.',
    doc: '`model`, `environment`',
  },
  {
    name: 'svc_onnx_batch_rows',
    type: 'histogram',
    labels: ['environment'],
    help: 'Rows per ONNX run in the worker pool.',
    doc: '`environment`: rows per worker run',
  },
  {
    name: 'svc_onnx_queue_wait_seconds',
    type: 'histogram',
    labels: ['environment'],
    help: 'Time a request waited for a worker before its batch ran, in seconds.',
    doc: "`environment`: a request's wait for a worker",
  },
  {
    name: 'svc_onnx_queue_rows',
    type: 'gauge',
    labels: ['environment'],
    help: 'Rows waiting for an ONNX worker.',
    doc: '`environment`: rows waiting for a worker',
  },
  {
    name: 'svc_onnx_worker_restarts_total',
    type: 'counter',
    labels: ['environment'],
    help: 'ONNX worker threads replaced after they failed.',
    doc: '`environment`: workers replaced',
  },
  {
    name: 'svc_model_ready',
    type: 'gauge',
    labels: ['model', 'version', 'environment'],
    help: 'Model versions loaded: 1 for the version served by default, 0 for the others.',
    doc: '`model`, `version`, `environment`: 1 for the version served by default, 0 for the others loaded',
  },
  {
    name: 'svc_model_rollout_percent',
    type: 'gauge',
    labels: ['model', 'version', 'role', 'environment'],
    help: "The percent of a model's traffic a version takes, by role: default, canary (requests naming no version), shadow (copies).",
    doc: "`model`, `version`, `role` (`default`: 100 − the canary's, `canary`, `shadow`), `environment`; READY models, declared roles only",
  },
  {
    name: 'svc_model_shadow_predictions_total',
    type: 'counter',
    labels: ['model', 'version', 'outcome', 'environment'],
    help: 'Shadow copies of prediction requests by outcome (success, error, timeout), for the shadow version.',
    doc: '`model`, `version`, `outcome` (`success`, `error`, `timeout`), `environment`',
  },
  {
    name: 'svc_model_shadow_rows_total',
    type: 'counter',
    labels: ['model', 'version', 'environment'],
    help: 'Rows of successful shadow copies compared with the answer the client was given.',
    doc: '`model`, `version`, `environment`',
  },
  {
    name: 'svc_model_shadow_disagreements_total',
    type: 'counter',
    labels: ['model', 'version', 'environment'],
    help: "Rows whose shadow answer differs from the primary's: another label, or a value beyond the relative tolerance.",
    doc: '`model`, `version`, `environment`',
  },
  {
    name: 'svc_model_shadow_dropped_total',
    type: 'counter',
    labels: ['model', 'version', 'environment'],
    help: 'Shadow copies dropped because the shadow queue was full, the service was under load, or a timed-out copy was still running.',
    doc: '`model`, `version`, `environment`',
  },
  {
    name: 'svc_model_shadow_duration_seconds',
    type: 'histogram',
    labels: ['model', 'version', 'environment'],
    help: 'Time to encode and predict one shadow copy, in seconds.',
    doc: '`model`, `version`, `environment`',
  },
  {
    name: 'svc_model_feedback_rows_total',
    type: 'counter',
    labels: ['model', 'version', 'environment'],
    help: 'Labels scored against the answers of a model version.',
    doc: '`model`, `version`, `environment`: labels scored ([Model quality from labels](#model-quality-from-labels))',
  },
  {
    name: 'svc_model_feedback_confusion_total',
    type: 'counter',
    labels: ['model', 'version', 'actual', 'predicted', 'correct', 'environment'],
    help: 'Labels scored against a classifier version, by actual and predicted class; correct is "true" on the diagonal.',
    doc: '`model`, `version`, `actual`, `predicted`, `correct`, `environment`: classifiers, every pair; above 32 classes `predicted` is the class or `<other>`',
  },
  {
    name: 'svc_model_feedback_absolute_error',
    type: 'summary',
    labels: ['model', 'version', 'environment'],
    help: "Sum of |prediction − truth| over a regressor version's labels.",
    doc: '`model`, `version`, `environment`: regressors, Σ\\|prediction − truth\\|',
  },
  {
    name: 'svc_model_feedback_squared_error',
    type: 'summary',
    labels: ['model', 'version', 'environment'],
    help: "Sum of (prediction − truth)² over a regressor version's labels.",
    doc: '`model`, `version`, `environment`: Σ(prediction − truth)²',
  },
  {
    name: 'svc_model_feedback_overestimate',
    type: 'summary',
    labels: ['model', 'version', 'environment'],
    help: "Sum of max(prediction − truth, 0) over a regressor version's labels.",
    doc: '`model`, `version`, `environment`: Σ max(prediction − truth, 0); bias = (2·overestimate − absolute) / rows',
  },
  {
    name: 'svc_model_feedback_delay_seconds',
    type: 'histogram',
    labels: ['model', 'environment'],
    help: 'Time from a prediction to its label being scored, in seconds.',
    doc: '`model`, `environment`: prediction to label, 1 s to 60 days',
  },
  {
    name: 'svc_feedback_refused_total',
    type: 'counter',
    labels: ['reason', 'environment'],
    help: 'Feedback items refused, by reason.',
    doc: '`reason` (`invalid_token`, `expired`, `invalid_truth`, `unknown_version`, `duplicate`), `environment`',
  },
  {
    name: 'svc_model_reference_quality',
    type: 'gauge',
    labels: ['model', 'version', 'metric', 'environment'],
    help: 'Quality of a model version measured on labelled held-out rows, by metric.',
    doc:
      "`model`, `version`, `metric`, `environment`: the artifact's `provenance.metrics` or a profile's `quality`, of the build last published " +
      '(a rebuild or a profile added updates it); with `SVC_FEEDBACK_SECRET` only',
  },
  {
    name: 'svc_payload_log_events_total',
    type: 'counter',
    labels: ['outcome', 'environment'],
    help: 'Payload log events by outcome: written, dropped (queue full, under load, left at shutdown) or failed (the file or the sink refused them).',
    doc: '`outcome` (`written`, `dropped`, `failed`), `environment`; at 0 from start-up ([Payload log](#payload-log))',
  },
  {
    name: 'svc_payload_log_dropped_total',
    type: 'counter',
    labels: ['reason', 'environment'],
    help:
      'Payload log events dropped, by reason: queue (SVC_PAYLOAD_LOG_QUEUE events waiting), bytes (SVC_PAYLOAD_LOG_QUEUE_BYTES held), ' +
      'pressure (near shedding) or shutdown (left at its budget).',
    doc:
      '`reason` (`queue`, `bytes`, `pressure`, `shutdown`), `environment`; each also in `svc_payload_log_events_total{outcome="dropped"}`; ' +
      'at 0 from start-up',
  },
  {
    name: 'svc_payload_log_queue_depth',
    type: 'gauge',
    labels: ['environment'],
    help: 'Payload log events waiting to be written.',
    doc: '`environment`: events waiting to be written',
  },
  {
    name: 'svc_payload_log_write_duration_seconds',
    type: 'histogram',
    labels: ['environment'],
    help: 'Time to write one batch of payload log events to the file or the sink, in seconds.',
    doc: '`environment`: one batch written to the file or the sink, done or failed, 0.5 ms to 10 s',
  },
  {
    name: 'svc_drift_psi',
    type: 'gauge',
    labels: ['model', 'feature', 'environment'],
    help: 'Population Stability Index of a feature at the last drift check that scored it.',
    doc: '`model`, `feature`, `environment` ([Drift](#drift))',
  },
  {
    name: 'svc_drift_alerts_total',
    type: 'counter',
    labels: ['model', 'feature', 'severity', 'environment'],
    help: 'Drift checks that found a feature at or above a threshold, by severity (moderate, severe, spike).',
    doc: '`model`, `feature`, `severity` (`moderate`, `severe`, `spike`), `environment`',
  },
  {
    name: 'svc_drift_prediction_psi',
    type: 'gauge',
    labels: ['model', 'output', 'environment'],
    help: "Population Stability Index of a model's answers (class shares, or binned values) at the last drift check that scored them.",
    doc: "`model`, `output` (the label or value output), `environment`: the answers' PSI",
  },
  {
    name: 'svc_drift_prediction_alerts_total',
    type: 'counter',
    labels: ['model', 'output', 'severity', 'environment'],
    help: "Drift checks that found a model's answers at or above a threshold, by severity (moderate, severe, spike).",
    doc: '`model`, `output`, `severity` (`moderate`, `severe`, `spike`), `environment`',
  },
  {
    name: 'svc_drift_checks_total',
    type: 'counter',
    labels: ['model', 'result', 'environment'],
    help: 'Drift checks per model, by result (ok, insufficient_data, no_reference, error).',
    doc: '`model`, `result` (`ok`, `insufficient_data`, `no_reference`, `error`), `environment`',
  },
  {
    name: 'svc_drift_last_check_timestamp_seconds',
    type: 'gauge',
    labels: ['model', 'environment'],
    help: 'Unix time of the last drift check that produced scores.',
    doc: '`model`, `environment`; only checks that scored refresh it',
  },
  {
    name: 'svc_drift_window_samples',
    type: 'gauge',
    labels: ['model', 'environment'],
    help: 'Input rows in the drift window of the version served by default.',
    doc: '`model`, `environment`',
  },
  {
    name: 'svc_drift_bin_total',
    type: 'counter',
    labels: ['model', 'version', 'build', 'feature', 'bin', 'environment'],
    help: "Rows whose value of a feature fell in a bin of the feature's drift reference.",
    doc:
      '`model`, `version`, `build`, `feature`, `bin` (`"0"` upward), `environment`: ' +
      'rows whose value fell in the bin ([Drift across a fleet](#drift-across-a-fleet))',
  },
  {
    name: 'svc_drift_prediction_bin_total',
    type: 'counter',
    labels: ['model', 'version', 'build', 'output', 'bin', 'environment'],
    help: "Answers that fell in a bin of the drift reference's predictions.",
    doc: '`model`, `version`, `build`, `output`, `bin`, `environment`: answers that fell in the bin',
  },
  {
    name: 'svc_drift_reference_share',
    type: 'gauge',
    labels: ['model', 'version', 'build', 'feature', 'bin', 'environment'],
    help: "The drift reference's share of rows in a bin of a feature (unfloored).",
    doc: "`model`, `version`, `build`, `feature`, `bin`, `environment`: the reference's share of the bin, unfloored",
  },
  {
    name: 'svc_drift_prediction_reference_share',
    type: 'gauge',
    labels: ['model', 'version', 'build', 'output', 'bin', 'environment'],
    help: "The drift reference's share of answers in a bin (unfloored).",
    doc: '`model`, `version`, `build`, `output`, `bin`, `environment`',
  },
  {
    name: 'svc_drift_out_of_range_total',
    type: 'counter',
    labels: ['model', 'version', 'build', 'feature', 'side', 'environment'],
    help: 'Values of a numerical feature outside its training range: below the minimum or above the maximum.',
    doc: '`model`, `version`, `build`, `feature`, `side` (`below`, `above`), `environment`: values outside the training range',
  },
  {
    name: 'svc_log_lines_dropped_total',
    type: 'counter',
    labels: ['environment'],
    help: 'Log lines lost because their reader went away (stdout or stderr closed: EPIPE, EBADF).',
    doc: '`environment`: log lines lost because the reader of stdout or stderr went away (EPIPE)',
  },
  {
    name: 'svc_requests_shed_total',
    type: 'counter',
    labels: ['reason', 'environment'],
    help: 'Requests answered 503 before their endpoint ran, because the service was overloaded, by reason.',
    doc: '`reason` (`max_in_flight`, `event_loop_delay`), `environment`; only when a limit is set ([Overload](#overload))',
  },
]

/** A row of README.md's Metrics table, `| Metric | Type | Labels |`. */
export const metricTableRow = (family: MetricFamily): string =>
  `| \`${family.name}\` | ${family.type}${family.value === undefined ? '' : ` (${family.value})`} | ${family.doc} |`
