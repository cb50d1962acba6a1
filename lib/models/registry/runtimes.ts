// The runtimes svc serves models with, in the order a version's files are tried (registry.ts): the
// kernel's model.json first, then an ONNX graph's model.onnx.
import type { Runtime } from '../runtime.js'
import { kernelRuntime } from '../kernel/runtime.js'
import { createOnnxRuntime } from '../onnx/runtime.js'

export type RuntimesOptions = Readonly<{ onnxThreads: number }>

export const servedRuntimes = ({ onnxThreads }: RuntimesOptions): readonly Runtime[] =>
  Object.freeze([kernelRuntime, createOnnxRuntime({ threads: onnxThreads }) as Runtime])
