// The buckets every prediction duration is timed in: a request's (svc_model_prediction_duration_seconds,
// lib/serving/metrics.ts) and a shadow copy's (svc_model_shadow_duration_seconds), so the two compare.

/** From 0.1 ms: a linear model predicts a small batch in tens of microseconds. */
export const PREDICTION_DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] as const
