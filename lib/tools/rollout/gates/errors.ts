// The error gates: the canary's server-error share (a canary that breaks) and its client-error share
// (a canary that refuses inputs the default accepts), each by its Wilson interval against the
// margin of SvcCanaryErrorRatioHigh (ops/prometheus/rules/rollout.yml): D + max(D, 1 point), D the
// default's share over the same window, so more than twice the default's and more than 1 point
// above it. The minimum is that alert's traffic guard, 0.5 requests/s over 10 minutes (300
// requests): at D = 0 a pass needs 381 (the Wilson upper bound of 0 in n falls below 1 % there),
// and a fail at 300 needs 7 errors. A confident breach counts from a quarter of
// it, 75 requests, so a canary failing most of a trickle of traffic is caught (verdict.ts).
import { shareCheck, shareValues } from './share.js'
import { badFigure, combine, type GateName, type GateResult, noData, percent } from './verdict.js'

/** One version's outcomes over the window: errors of the kind judged, of every request. */
export type Outcomes = Readonly<{ errors: number; requests: number }>
export type ErrorCounts = Readonly<{ canary: Outcomes; default: Outcomes }>

export type ErrorGateOptions = Readonly<{
  /** Canary requests from which a pass or a plain fail counts. */
  minRequests: number
  /** Canary requests from which a confident breach fails. */
  criticalFrom: number
  /** The least margin over D: 1 percentage point. */
  floor: number
}>

export const ERROR_GATE_DEFAULTS: ErrorGateOptions = Object.freeze({ minRequests: 300, criticalFrom: 75, floor: 0.01 })

const errorGate = (gate: GateName, kind: string, counts: ErrorCounts, options: Partial<ErrorGateOptions>): GateResult => {
  const { minRequests, criticalFrom, floor } = { ...ERROR_GATE_DEFAULTS, ...options }
  const values = {
    canary_errors: counts.canary.errors,
    canary_requests: counts.canary.requests,
    default_errors: counts.default.errors,
    default_requests: counts.default.requests,
  }
  const bad = badFigure(values)
  if (bad !== undefined) return noData(gate, bad, values)
  if (values.canary_errors > values.canary_requests) return noData(gate, 'the canary has more errors than requests', values)
  if (values.default_errors > values.default_requests) return noData(gate, 'the default version has more errors than requests', values)
  if (values.default_requests === 0) return noData(gate, `the default version answered no requests, so there is no ${kind} share to compare with`, values)
  const d = values.default_errors / values.default_requests
  const limit = d + Math.max(d, floor)
  const { check, figures } = shareCheck({
    count: values.canary_errors,
    total: values.canary_requests,
    limit,
    minRows: minRequests,
    criticalFrom,
    what: `canary ${kind} share`,
    limitText: `the limit ${percent(limit)} (the default's ${percent(d)} plus the larger of it and ${percent(floor)})`,
    unit: 'requests',
  })
  return combine(gate, [check], {
    ...values,
    default_share: d,
    limit,
    min_requests: minRequests,
    ...shareValues('canary', figures),
  })
}

/** The canary's server errors (5xx) against the default's. */
export const serverErrorsGate = (counts: ErrorCounts, options: Partial<ErrorGateOptions> = {}): GateResult =>
  errorGate('server_errors', 'server-error', counts, options)

/** The canary's client errors (4xx) against the default's: inputs the canary refuses and the default accepts. */
export const clientErrorsGate = (counts: ErrorCounts, options: Partial<ErrorGateOptions> = {}): GateResult =>
  errorGate('client_errors', 'client-error', counts, options)
