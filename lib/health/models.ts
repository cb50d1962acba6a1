// The `models` component of the probes: readiness needs at least one model that can serve, since
// an instance without a model answers every prediction 503 (lib/README.md §10). Nothing is asked
// over the network; the registry already knows.
import type { ModelRegistry } from '../models/registry/registry.js'
import type { Check, CheckResult } from './check.js'

const SERVING: CheckResult = Object.freeze({ status: 'ok', latency_ms: 0 })

export const modelsCheck =
  (registry: Pick<ModelRegistry, 'isReady' | 'entries'>): Check =>
  async () => {
    if (registry.isReady()) return SERVING
    const count = registry.entries().length
    return { status: 'fail', latency_ms: 0, error: count === 0 ? 'no model in the store' : `none of ${count} models could be loaded` }
  }
