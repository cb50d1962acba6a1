// The runtimes svc serves models with, in the order a version's files are tried (registry.ts): the
// kernel's model.json first, then an ONNX graph's model.onnx. A service's ONNX runtime has a worker
// pool (onnx/pool.ts) for the graphs too heavy for the event loop, answered within the drain's budget
// on shutdown; a tool's (`svc profile`) runs every graph in process.
import type { Registry } from 'prom-client'
import type { Logger } from '../../telemetry/logger.js'
import type { Runtime } from '../runtime.js'
import { kernelRuntime } from '../kernel/runtime.js'
import { createOnnxRuntime } from '../onnx/runtime.js'
import { createPoolSeries } from '../onnx/pool/pool.js'

/** A service's pool: its settings (Config.models.onnxPool), series, log, and the drain it ends with. */
export type PoolWiring = Readonly<{
  settings: Readonly<{ workers: number; inlineMaxUs: number; maxRows: number; maxDelayUs: number; queueRows: number; timeoutMs: number }>
  metrics: Registry
  logger: Logger
  /** Aborts when the drain begins (Lifecycle.closing). */
  closing: AbortSignal
  /** How long the drain lasts (SVC_DRAIN_TIMEOUT_MS). */
  drainTimeoutMs: number
}>

export type RuntimesOptions = Readonly<{ onnxThreads: number; pool?: PoolWiring | undefined }>

/**
 * What the pool keeps of the drain for its 503s to go out before the connections are closed: a
 * quarter, up to a second (the loop may be busy reading requests when the pool's timer is due).
 */
const answerMarginMs = (drainTimeoutMs: number): number => Math.min(1000, drainTimeoutMs / 4)

export const servedRuntimes = ({ onnxThreads, pool }: RuntimesOptions): readonly Runtime[] => {
  if (pool === undefined) return runtimesWith(createOnnxRuntime({ threads: onnxThreads }))
  const { settings, metrics, logger, closing, drainTimeoutMs } = pool
  const onnx = createOnnxRuntime({
    threads: onnxThreads,
    pool: { ...settings, series: createPoolSeries(metrics) },
    inlineMaxUs: settings.inlineMaxUs,
    events: {
      placed: (model, runUs, where) =>
        logger.info('onnx_model_placed', { model: model.name, version: model.version, run_us: Math.round(runUs), runs_in: where }),
      workerReplaced: (cause) => logger.error('onnx_worker_replaced', { reason: cause }),
    },
  })
  closing.addEventListener('abort', () => onnx.close(drainTimeoutMs - answerMarginMs(drainTimeoutMs)), { once: true })
  return runtimesWith(onnx)
}

/** The kernel's first, then ONNX: an OnnxRuntime is a Runtime whose load resolves with its own predictor. */
const runtimesWith = (onnx: ReturnType<typeof createOnnxRuntime>): readonly Runtime[] => Object.freeze([kernelRuntime, onnx as Runtime])
