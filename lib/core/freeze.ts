// Deep freezing: what is parsed or read once at start-up (the configuration, an artifact, a profile,
// the OpenAPI document) is handed out frozen, so no part of the service can change what another
// part reads. A leaf: imports nothing.

/**
 * Freezes `value` and everything reachable from it, and returns it. What is already frozen is left
 * as it is (shared constants, and any cycle, are visited once); so is a URL, whose setters write
 * internal state that freezing does not stop.
 */
export const deepFreeze = <T>(value: T): T => {
  if (typeof value !== 'object' || value === null || value instanceof URL || Object.isFrozen(value)) return value
  Object.freeze(value)
  for (const member of Object.values(value)) deepFreeze(member)
  return value
}
