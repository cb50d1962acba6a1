// svc_model_ready (lib/README.md §10), set from each published state: 1 for the version a model
// serves by default, 0 for its other loaded versions; a version no longer served loses its series.
import { Gauge, type Registry } from 'prom-client'
import type { ModelSlot, ServedModel } from './state.js'

/** Sets the gauge for every build `slots` serve, drops the series of the rest; returns those builds, by model then version. */
export type PublishReady = (slots: ReadonlyMap<string, ModelSlot>) => ServedModel[]

export const createReadyGauge = (metrics: Registry): PublishReady => {
  const ready = new Gauge({
    name: 'svc_model_ready',
    help: 'Model versions loaded: 1 for the version served by default, 0 for the others.',
    labelNames: ['model', 'version'],
    registers: [metrics],
  })
  let series: ReadonlyMap<string, ServedModel> = new Map()
  return (slots) => {
    const next = new Map<string, ServedModel>()
    for (const slot of slots.values()) {
      for (const build of slot.served.values()) {
        const key = `${build.name}/${build.version}`
        next.set(key, build)
        ready.set({ model: build.name, version: build.version }, build === slot.defaultModel ? 1 : 0)
      }
    }
    for (const [key, build] of series) if (!next.has(key)) ready.remove({ model: build.name, version: build.version })
    series = next
    return [...next.values()]
  }
}
