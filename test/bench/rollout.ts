// Rollouts in process (lib/models/registry/rollout.ts, lib/serving/shadow/copies.ts), on registries
// built as the service builds them: createModelRegistry over a memory store of rollout-store.ts's
// files, the kernel's iris as versions 1 and 2.
//
// - A routing decision, `route('iris', key)` as serving makes it (the model's slot, then `routeOf`), in CPU ns: with a 5 % canary keyed by a
//   36-character UUID (4 096 distinct ones in turn, parsed from JSON as a body's `id` is), with the
//   same canary unkeyed (Math.random), and with no canary (the baseline: the model's slot and its
//   default); `keyPoint` alone on the same keys. Ten million decisions a sample, after as many to
//   warm up, the median of five samples; each loop counts the decisions that went to the canary,
//   which keeps the results alive and is printed as a share. This VM moves a figure by up to ±30 %
//   from one run to the next.
// - A shadow copy, in CPU µs: one batch-1 prediction of the shadow version (encodeInputs and the
//   kernel's predict, what post-path.ts measures for the default), and the whole of a copy as
//   createShadowCopies runs it (the ShadowCopy, the hook, the queue, the setImmediate drain, the
//   prediction, the comparison with the answer given, the shadow's series and drift bin counters),
//   50 copies a turn as 50 connections bring them, less the same turns without copies.
import { randomUUID } from 'node:crypto'
import { Registry } from 'prom-client'
import type { Ctx } from '../../lib/core/http/context.js'
import { readConfig } from '../../lib/config/config.js'
import { encodeInputs } from '../../lib/models/inference/features.js'
import { readPredictRequest } from '../../lib/models/inference/request.js'
import { createModelRegistry, type ModelRegistry, type ServedModel } from '../../lib/models/registry/registry.js'
import { keyPoint, routeOf } from '../../lib/models/registry/rollout.js'
import type { Prediction } from '../../lib/models/runtime.js'
import { createShadowCopies } from '../../lib/serving/shadow/copies.js'
import { createMemoryStore } from '../../lib/models/store/memory.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { metricTotal } from './load-tools.js'
import { driftParts } from './predict.js'
import { CANARY_PERCENT, type Rollout, rolloutFiles } from './rollout-store.js'

export const DECISIONS = 10_000_000
export const SAMPLES = 5
// Flat strings, as JSON.parse makes a body's `id`: randomUUID's own are built in pieces, and
// hashing one costs about a quarter more.
const KEYS = JSON.parse(JSON.stringify(Array.from({ length: 4096 }, () => randomUUID()))) as string[]
const MASK = KEYS.length - 1

const silent = createLogger({ name: 'bench', level: 'error', format: 'json', write: () => {} })

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** A registry of iris 1 and 2 under `rollout`'s manifest, loaded; throws unless its model is READY. */
const registryOf = async (root: string, rollout: Rollout): Promise<ModelRegistry> => {
  const registry = createModelRegistry({ store: createMemoryStore(rolloutFiles(root, rollout)), logger: silent, metrics: new Registry(), reloadIntervalS: 0 })
  await registry.load()
  if (registry.entry('iris')?.state !== 'READY') throw new Error(`the ${rollout} store's iris did not load: ${registry.entry('iris')?.reason}`)
  return registry
}

/** One routing figure: CPU ns per decision, and the share of decisions that went to the canary (%). */
export type Decision = Readonly<{ ns: number; canaryPercent: number }>

export type RoutingNs = Readonly<{
  /** `keyPoint(uuid)` alone; its share is the keys' points below the canary's percent. */
  keyPoint: Decision
  /** `route` with a 5 % canary and a UUID key. */
  keyed: Decision
  /** `route` with a 5 % canary and no key: Math.random. */
  unkeyed: Decision
  /** `route` with no canary: the baseline. */
  noCanary: Decision
}>

/** `loop(n)` makes n decisions and returns how many went to the canary: median CPU ns per decision over SAMPLES. */
const perDecision = (loop: (n: number) => number): Decision => {
  loop(DECISIONS)
  const samples: number[] = []
  let canary = 0
  for (let s = 0; s < SAMPLES; s++) {
    const start = process.cpuUsage()
    canary += loop(DECISIONS)
    const used = process.cpuUsage(start)
    samples.push(((used.user + used.system) * 1000) / DECISIONS)
  }
  return { ns: median(samples), canaryPercent: (canary * 100) / (SAMPLES * DECISIONS) }
}

/** The routing figures; `root` is the repository's. */
/** The build answering a request to iris that names no version, as lib/serving/serving.ts chooses it. */
const route = (registry: ModelRegistry, key: string | undefined): ServedModel | undefined => {
  const slot = registry.published('iris')
  return slot === undefined ? undefined : routeOf(slot, key)
}

export const inProcessRoutingNs = async (root: string): Promise<RoutingNs> => {
  const withCanary = await registryOf(root, 'canary')
  const without = await registryOf(root, 'none')
  const primary = withCanary.resolve('iris') as ServedModel
  const alone = without.resolve('iris') as ServedModel
  // One loop per figure, so each call site sees one function.
  return {
    keyPoint: perDecision((n) => {
      let canary = 0
      for (let i = 0; i < n; i++) if (keyPoint(KEYS[i & MASK] as string) < CANARY_PERCENT) canary++
      return canary
    }),
    keyed: perDecision((n) => {
      let canary = 0
      for (let i = 0; i < n; i++) if (route(withCanary, KEYS[i & MASK]) !== primary) canary++
      return canary
    }),
    unkeyed: perDecision((n) => {
      let canary = 0
      for (let i = 0; i < n; i++) if (route(withCanary, undefined) !== primary) canary++
      return canary
    }),
    noCanary: perDecision((n) => {
      let canary = 0
      for (let i = 0; i < n; i++) if (route(without, KEYS[i & MASK]) !== alone) canary++
      return canary
    }),
  }
}

export type ShadowUs = Readonly<{
  /** One batch-1 prediction of the shadow version: encodeInputs + the kernel's predict. */
  prediction: number
  /** One copy, all of it, as createShadowCopies runs it after a reply. */
  copy: number
  /** Copies predicted successfully over copies made (1 when none was dropped or failed). */
  completed: number
}>

const PREDICTIONS = 1_000_000
const TURNS = 20_000
const PER_TURN = 50

const cpuUs = (): number => {
  const { user, system } = process.cpuUsage()
  return user + system
}
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The shadow's figures for `body`, a batch-1 /api/v1/predict request of iris; `root` is the repository's. */
export const inProcessShadowUs = async (root: string, body: string): Promise<ShadowUs> => {
  const registry = await registryOf(root, 'shadow')
  const primary = registry.resolve('iris') as ServedModel
  const shadow = registry.shadowOf('iris')?.served as ServedModel
  const request = readPredictRequest(JSON.parse(body), { maxBatch: 1000 })
  const answered = primary.predictor.predict(encodeInputs(request, primary.model), request.rows) as Prediction

  let sink = 0
  const predictOnce = (): void => {
    const prediction = shadow.predictor.predict(encodeInputs(request, shadow.model), request.rows) as Prediction
    sink += 'labels' in prediction ? (prediction.labels[0] as number) : 0
  }
  for (let i = 0; i < PREDICTIONS / 20; i++) predictOnce()
  const start = cpuUs()
  for (let i = 0; i < PREDICTIONS; i++) predictOnce()
  const prediction = (cpuUs() - start) / PREDICTIONS

  const { queue: capacity, timeoutMs, tolerance } = readConfig({}).models.shadow
  const metrics = new Registry()
  const copies = createShadowCopies({
    metrics,
    logger: silent,
    capacity,
    timeoutMs,
    tolerance,
    isUnderPressure: () => false,
    onRows: driftParts(shadow).both.count,
  })
  copies.track([shadow])
  // The server runs the hook once the reply is written; here at once.
  const ctx = { whenWritten: (hook: (ctx: Ctx, error: unknown) => void) => hook(ctx as unknown as Ctx, undefined) }
  const turns = async (count: number, withCopies: boolean): Promise<number> => {
    const before = cpuUs()
    for (let t = 0; t < count; t++) {
      if (withCopies) for (let c = 0; c < PER_TURN; c++) copies.copy(ctx as unknown as Ctx, { shadow, primary, request, answered })
      await nextTurn()
    }
    return cpuUs() - before
  }
  await turns(TURNS / 10, true)
  await turns(TURNS / 10, false)
  const made = (TURNS / 10 + TURNS) * PER_TURN
  const withCopies = await turns(TURNS, true)
  const without = await turns(TURNS, false)
  const text = await metrics.metrics()
  const completed = metricTotal(text, 'svc_model_shadow_predictions_total', { outcome: 'success' }) / made
  if (sink < 0 || copies.pending() !== 0) throw new Error('unreachable: a label is never negative; every turn drains its copies')
  return { prediction, copy: (withCopies - without) / (TURNS * PER_TURN), completed }
}
