// The statuses of a model's drift, declared once: what a check finds (the `result` label of
// svc_drift_checks_total) and what GET /api/v1/models/{name} shows (lib/endpoints/model-schemas.ts).
export const DRIFT_CHECK_RESULTS = ['ok', 'insufficient_data', 'no_reference', 'error'] as const
export type DriftCheckResult = (typeof DRIFT_CHECK_RESULTS)[number]

/** A check's result, `not_checked` before the first check, `disabled` when drift monitoring is off. */
export const DRIFT_STATUSES = [...DRIFT_CHECK_RESULTS, 'not_checked', 'disabled'] as const
export type DriftStatusName = (typeof DRIFT_STATUSES)[number]
