// The runtimes svc serves with, in the order a version's files are tried: the kernel's model.json
// before an ONNX graph's model.onnx.
import t from 'tap'
import { servedRuntimes } from '../../../lib/models/registry/runtimes.js'

t.test('the kernel first, then ONNX Runtime, in a frozen list', async (t) => {
  const runtimes = servedRuntimes({ onnxThreads: 1 })
  t.same(
    runtimes.map(({ platform, files }) => [platform, files[0]]),
    [
      ['svc', 'model.json'],
      ['onnxruntime', 'model.onnx'],
    ],
  )
  t.ok(Object.isFrozen(runtimes))
})

t.test('each call builds its own ONNX runtime, sharing the kernel', async (t) => {
  const [kernelA, onnxA] = servedRuntimes({ onnxThreads: 1 })
  const [kernelB, onnxB] = servedRuntimes({ onnxThreads: 2 })
  t.equal(kernelA, kernelB)
  t.not(onnxA, onnxB)
})
