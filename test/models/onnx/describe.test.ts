// onnxruntime's errors in words (lib/models/onnx/describe.ts).
import t from 'tap'
import { describeOnnxError } from '../../../lib/models/onnx/describe.js'

t.test('describeOnnxError keeps the words and drops status prefixes, source locations, line breaks and length', async (t) => {
  t.equal(
    describeOnnxError(
      new Error('[ONNXRuntimeError] : 10 : INVALID_GRAPH : Load failed at /onnxruntime_src/core/graph/graph.cc:1234 onnxruntime::Graph\n  node X'),
    ),
    'Load failed at onnxruntime::Graph node X',
  )
  t.equal(describeOnnxError('plain text'), 'plain text', 'a thrown string is its own message')
  const long = describeOnnxError(new Error('x'.repeat(400)))
  t.equal(long.length, 300)
  t.ok(long.endsWith('…'), 'a cut message says it was cut')
})
