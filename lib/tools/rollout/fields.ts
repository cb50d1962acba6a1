// Strict reading of a JSON document's members, shared by the rollout plan (plan.ts) and the state
// file (state.ts): an unknown member is refused, as the manifest refuses one, and every refusal
// names the member's path (`gates.latency_p95.rol`, `steps[2].percent`) and what it accepts, thrown
// as the caller's own error through `refuse`. The path leads the message, so an operator editing a
// plan by hand goes straight to the member.
import { isObject, type JsonObject } from '../../core/json.js'

/** Why a member is refused: it is not one of the document's, or its value is not what it takes. */
export type FieldCode = 'UNKNOWN_MEMBER' | 'INVALID_MEMBER'

/** How a checker refuses: an error of its own, `field: reason`. */
export type Refuse = (code: FieldCode, field: string, reason: string) => Error

/** The path of `key` within `parent` (`gates` → `gates.quality`; the document's own members bare). */
export const pathOf = (parent: string, key: string | number): string =>
  typeof key === 'number' ? `${parent}[${key}]` : parent === '' ? key : `${parent}.${key}`

/** A value as a message shows it: its JSON, `missing` for undefined. */
export const shown = (value: unknown): string => JSON.stringify(value) ?? 'missing'

export type Fields = Readonly<{
  /** `value` as an object holding only `members`; `what` names it in the refusal (`a step`); field '' is the document. */
  object: (value: unknown, field: string, members: readonly string[], what: string) => JsonObject
  /** `value` when `isValid`, otherwise refused as not `expected` (`must be a positive integer, is 0`). */
  valid: <T>(value: unknown, field: string, isValid: (value: unknown) => value is T, expected: string) => T
  /** Refused with a reason of the caller's. */
  invalid: (field: string, reason: string) => Error
}>

export const fieldsOf = (refuse: Refuse): Fields => ({
  object: (value, field, members, what) => {
    if (!isObject(value)) throw refuse('INVALID_MEMBER', field === '' ? '(document)' : field, `must be ${what} (a JSON object), is ${shown(value)}`)
    for (const key of Object.keys(value)) {
      if (!members.includes(key)) throw refuse('UNKNOWN_MEMBER', pathOf(field, key), `unknown member; ${what} takes ${members.join(', ')}`)
    }
    return value
  },
  valid: (value, field, isValid, expected) => {
    if (!isValid(value)) throw refuse('INVALID_MEMBER', field, `must be ${expected}, is ${shown(value)}`)
    return value
  },
  invalid: (field, reason) => refuse('INVALID_MEMBER', field, reason),
})
