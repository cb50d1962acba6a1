// What an ONNX worker thread does with the pool's messages (worker.ts is the thread's entry): holds
// one onnxruntime session per build the pool loaded, and runs the batches it is sent, so the
// JavaScript thread that serves HTTP never runs a graph. It knows nothing of models: the tensors
// come built, and the one output goes back as its typed array (copied: rows × classes numbers).
//
// Protocol (messages.ts):
//   load    {id, bytes, threads}     → loaded {id} | load_failed {id, message}
//   run     {id, seq, feeds, fetch}  → ran {seq, data} | run_failed {seq, message}
//   release {id}                     → nothing
import type { InferenceSession, Tensor } from 'onnxruntime-node'
import { describeOnnxError } from '../describe.js'
import type { ToPool, ToWorker } from './messages.js'
import { SESSION_OPTIONS } from '../session-options.js'

type Ort = typeof import('onnxruntime-node')

/** The handler of one thread's messages; `send` posts an answer to the pool. */
export const createWorkerSession = (send: (message: ToPool) => void): ((message: ToWorker) => void) => {
  const sessions = new Map<number, InferenceSession>()
  let loading: Promise<Ort> | undefined
  const ort = (): Promise<Ort> => (loading ??= import('onnxruntime-node'))

  const load = async (id: number, bytes: Uint8Array, threads: number): Promise<void> => {
    try {
      const { InferenceSession } = await ort()
      sessions.set(id, await InferenceSession.create(bytes, { ...SESSION_OPTIONS, intraOpNumThreads: threads }))
      send({ kind: 'loaded', id })
    } catch (error: unknown) {
      send({ kind: 'load_failed', id, message: describeOnnxError(error) })
    }
  }

  const run = async ({ seq, id, feeds, fetch }: Extract<ToWorker, { kind: 'run' }>): Promise<void> => {
    try {
      const session = sessions.get(id)
      if (session === undefined) throw new Error(`no session ${id} in this worker`)
      const { Tensor } = await ort()
      const inputs: Record<string, Tensor> = {}
      for (const feed of feeds) inputs[feed.name] = new Tensor(feed.type, feed.data, feed.dims)
      const data = (await session.run(inputs, [fetch]))[fetch]?.data
      if (!(data instanceof Float32Array || data instanceof Float64Array)) throw new Error(`output ${fetch} is not a float tensor`)
      send({ kind: 'ran', seq, data })
    } catch (error: unknown) {
      send({ kind: 'run_failed', seq, message: describeOnnxError(error) })
    }
  }

  return (message) => {
    if (message.kind === 'load') void load(message.id, message.bytes, message.threads)
    else if (message.kind === 'run') void run(message)
    else {
      const session = sessions.get(message.id)
      sessions.delete(message.id)
      void session?.release()
    }
  }
}
