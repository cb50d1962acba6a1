// The entry of an ONNX pool's worker thread (pool.ts starts it by this file): the pool's messages
// to the handler in worker-session.ts, its answers back.
import { parentPort } from 'node:worker_threads'
import { createWorkerSession } from './worker-session.js'

const port = parentPort
if (port === null) throw new Error('lib/models/onnx/worker.ts runs in a worker thread')
port.on(
  'message',
  createWorkerSession((message) => port.postMessage(message)),
)
