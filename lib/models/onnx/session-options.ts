// Session options, for a server, in process and in every worker alike: one inter-op thread and
// sequential execution (these graphs have no parallel branches worth a thread), every graph
// optimisation, and onnxruntime's own logging at fatal only: its warnings go to stderr outside svc's
// log lines, and its errors come back as exceptions, which svc reports. Intra-op threads are
// SVC_ONNX_THREADS, set by whoever makes the session.
import type { InferenceSession } from 'onnxruntime-node'

export const SESSION_OPTIONS: Readonly<InferenceSession.SessionOptions> = Object.freeze({
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  logSeverityLevel: 4,
})
