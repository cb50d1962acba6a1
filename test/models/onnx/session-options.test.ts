// The options every ONNX session is made with, in process and in the workers alike.
import t from 'tap'
import { SESSION_OPTIONS } from '../../../lib/models/onnx/session-options.js'

t.test('one inter-op thread, sequential, every optimisation, onnxruntime logging fatal only; frozen', async (t) => {
  t.same(SESSION_OPTIONS, { interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all', logSeverityLevel: 4 })
  t.ok(Object.isFrozen(SESSION_OPTIONS))
})
