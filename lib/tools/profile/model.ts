// The model `svc profile --model` runs: loaded from a model store exactly as the service loads it
// (the store, the registry and its runtimes, with every check they make), but only that model: the
// registry is handed a view of the store that lists nothing else. Its runtimes are the registry's
// own, so whatever the service can serve, this can run.
import { Registry } from 'prom-client'
import { SvcError } from '../../core/errors.js'
import type { StoreSpec } from '../../config/model-store.js'
import { createModelRegistry, type ModelEntry, type ServedModel } from '../../models/registry/registry.js'
import { servedRuntimes } from '../../models/registry/runtimes.js'
import type { S3Config } from '../../config/config.js'
import { createStore } from '../../models/store/open.js'
import type { Store } from '../../models/store/store.js'
import { createLogger } from '../../telemetry/logger.js'

/** The model cannot be served: the command exits 1. */
export class ModelLoadError extends SvcError {
  override name = 'ModelLoadError'
  readonly code = 'MODEL_UNAVAILABLE'
}

export type LoadModelOptions = Readonly<{
  store: StoreSpec
  name: string
  /** The version to run; the manifest's default when undefined. */
  version: string | undefined
  /** An s3:// store's settings. */
  s3?: S3Config | undefined
}>

/** What the registry logs of a failure (model_unavailable). */
type Failure = Readonly<{ version?: string; reason: string; detail?: string }>

/** Only `name` of `store`, so the registry loads nothing else: listed alone, and no scan of every model's files. */
const onlyModel = ({ scan: _everyModel, ...store }: Store, name: string): Store => ({ ...store, list: async () => [name] })

/**
 * The model, loaded and ready to predict; throws ModelLoadError with the registry's reason and,
 * when the store said more (a path, a host), that too. The caller disposes of the predictor.
 */
export const loadModel = async ({ store, name, version, s3 }: LoadModelOptions): Promise<ServedModel> => {
  // The registry logs why a model or a version failed; the store's own detail is only in that line.
  let logged = ''
  const logger = createLogger({ name: 'svc', level: 'error', format: 'json', write: (text) => void (logged += text) })
  const registry = createModelRegistry({
    store: onlyModel(createStore(store, s3 === undefined ? {} : { s3 }), name),
    logger,
    metrics: new Registry(),
    reloadIntervalS: 0,
    runtimes: servedRuntimes({ onnxThreads: 1 }),
  })
  await registry.load()
  const failures = logged
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Failure)
  const why = (failure: Failure): string => `${failure.reason}${failure.detail === undefined ? '' : ` (${failure.detail})`}`
  const entry = registry.entry(name) as ModelEntry
  // An UNAVAILABLE model's failure is always logged, without a version.
  if (entry.state !== 'READY') throw new ModelLoadError(`model ${name}: ${why(failures.find((failure) => failure.version === undefined) as Failure)}`)
  const served = registry.resolve(name, version)
  if (served !== undefined) return served
  const failure = failures.find((line) => line.version === version)
  if (failure !== undefined) throw new ModelLoadError(`model ${name} version ${version}: ${why(failure)}`)
  throw new ModelLoadError(`model ${name} has no version ${version}: the versions are ${entry.versions.join(', ')}`)
}
