// The gauges set from each published state (lib/README.md §10), declared in
// lib/telemetry/contract/metrics.ts: svc_model_ready, 1 for the version a model serves by default and
// 0 for its other loaded versions, and svc_model_rollout_percent, the share each version plays for a
// READY model by `role` (`default`: 100 − the canary's).
// A version no longer served, or a role no longer declared, loses its series (version-series.ts);
// alerts join the canary's series to the default's by model through `role`
// (ops/prometheus/rules/rollout.yml).
import { Gauge, type Registry } from 'prom-client'
import type { ModelSlot, ServedModel } from './state.js'
import { createVersionFamily, type SeriesPolicy } from './version-series.js'

/** Sets the gauges for every build `slots` serve, drops the series of the rest; returns those builds, by model then version. */
export type PublishReady = (slots: ReadonlyMap<string, ModelSlot>) => ServedModel[]

export const ROLLOUT_ROLES = ['default', 'canary', 'shadow'] as const
export type RolloutRole = (typeof ROLLOUT_ROLES)[number]

type RolloutLabels = Readonly<{ model: string; version: string; role: RolloutRole }>

/** Each role a READY slot's versions play, with its percent. */
const rolesOf = (slot: ModelSlot): Array<readonly [RolloutLabels, number]> => {
  const { defaultModel, rollout } = slot
  if (defaultModel === undefined) return []
  const { canary, shadow } = rollout
  const roles: Array<readonly [RolloutLabels, number]> = [
    [{ model: defaultModel.name, version: defaultModel.version, role: 'default' }, 100 - (canary?.percent ?? 0)],
  ]
  if (canary !== undefined) roles.push([{ model: canary.served.name, version: canary.served.version, role: 'canary' }, canary.percent])
  if (shadow !== undefined) roles.push([{ model: shadow.served.name, version: shadow.served.version, role: 'shadow' }, shadow.percent])
  return roles
}

/** Set by each publish, removed by the one that no longer serves the version or declares the role (version-series.ts). */
const GAUGE_SERIES: SeriesPolicy = Object.freeze({ keptS: 0 })

export const createReadyGauge = (metrics: Registry): PublishReady => {
  const ready = new Gauge({
    name: 'svc_model_ready',
    help: 'Model versions loaded: 1 for the version served by default, 0 for the others.',
    labelNames: ['model', 'version'],
    registers: [metrics],
  })
  const rollout = new Gauge({
    name: 'svc_model_rollout_percent',
    help: "The percent of a model's traffic a version takes, by role: default, canary (requests naming no version), shadow (copies).",
    labelNames: ['model', 'version', 'role'],
    registers: [metrics],
  })
  const versions = createVersionFamily({
    policy: GAUGE_SERIES,
    keyOf: (build: ServedModel) => `${build.name}/${build.version}`,
    make: (build: ServedModel) => ({ model: build.name, version: build.version }),
    drop: (_, labels) => void ready.remove(labels),
  })
  const roles = createVersionFamily({
    policy: GAUGE_SERIES,
    keyOf: (labels: RolloutLabels) => `${labels.model}/${labels.version}/${labels.role}`,
    make: (labels: RolloutLabels) => labels,
    drop: (_, labels) => void rollout.remove(labels),
  })
  return (slots) => {
    const builds: ServedModel[] = []
    const played: RolloutLabels[] = []
    for (const slot of slots.values()) {
      for (const build of slot.served.values()) {
        builds.push(build)
        ready.set({ model: build.name, version: build.version }, build === slot.defaultModel ? 1 : 0)
      }
      for (const [labels, percent] of rolesOf(slot)) {
        played.push(labels)
        rollout.set(labels, percent)
      }
    }
    versions.publish(builds, 0)
    roles.publish(played, 0)
    return builds
  }
}
