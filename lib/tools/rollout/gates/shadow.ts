// The shadow gates, on a shadow step: the share of compared rows on which the shadow's answer
// differs from the one the client was given (`shadow_disagreement`, role `hold` by default: a
// retrained model is meant to differ some, so it is for the model's owners to weigh), and the
// share of copies the shadow failed on, by error or timeout (`shadow_failures`, role `fail`). Each
// by its Wilson interval against 5 %, from the guards of SvcShadowDisagreementHigh (500 rows
// compared) and SvcShadowFailing (0.5 copies/s over 10 minutes, 300 copies) in
// ops/prometheus/rules/rollout.yml. A shadow answers nobody, so nothing decides below them.
import { shareCheck, shareValues } from './share.js'
import { badFigure, combine, type GateName, type GateResult, noData, percent } from './verdict.js'

export type ShadowGateOptions = Readonly<{ minRows: number; limit: number }>

export const SHADOW_DISAGREEMENT_DEFAULTS: ShadowGateOptions = Object.freeze({ minRows: 500, limit: 0.05 })
export const SHADOW_FAILURE_DEFAULTS: ShadowGateOptions = Object.freeze({ minRows: 300, limit: 0.05 })

/** What one shadow gate counts, in its values' names and in words. */
type Counting = Readonly<{ gate: GateName; what: string; unit: string; countName: string; totalName: string }>

const shadowGate = (c: Counting, count: number, total: number, o: ShadowGateOptions): GateResult => {
  const values = { [c.countName]: count, [c.totalName]: total }
  const bad = badFigure(values)
  if (bad !== undefined) return noData(c.gate, bad, values)
  if (count > total) return noData(c.gate, `more ${c.countName} than ${c.unit} (${count} of ${total})`, values)
  const { check, figures } = shareCheck({
    count,
    total,
    limit: o.limit,
    minRows: o.minRows,
    criticalFrom: o.minRows,
    what: c.what,
    limitText: `the limit ${percent(o.limit)}`,
    unit: c.unit,
  })
  return combine(c.gate, [check], { ...values, limit: o.limit, min_rows: o.minRows, ...shareValues('shadow', figures) })
}

const DISAGREEMENT: Counting = {
  gate: 'shadow_disagreement',
  what: 'shadow disagreement share',
  unit: 'compared rows',
  countName: 'disagreements',
  totalName: 'compared',
}
const FAILURES: Counting = { gate: 'shadow_failures', what: 'shadow error and timeout share', unit: 'copies', countName: 'failures', totalName: 'copies' }

/** Rows the shadow answered otherwise than the version that answered the client, of the rows compared. */
export type Disagreements = Readonly<{ disagreements: number; compared: number }>

export const shadowDisagreementGate = (input: Disagreements, options: Partial<ShadowGateOptions> = {}): GateResult =>
  shadowGate(DISAGREEMENT, input.disagreements, input.compared, { ...SHADOW_DISAGREEMENT_DEFAULTS, ...options })

/** Copies the shadow failed on (outcome error or timeout), of the copies it was given; dropped copies are in neither. */
export type ShadowFailures = Readonly<{ failures: number; copies: number }>

export const shadowFailureGate = (input: ShadowFailures, options: Partial<ShadowGateOptions> = {}): GateResult =>
  shadowGate(FAILURES, input.failures, input.copies, { ...SHADOW_FAILURE_DEFAULTS, ...options })
