// onnxruntime's errors in words fit for a model's reason or a 500's detail, wherever a session ran:
// in process (runtime.ts, predictor.ts) or in a worker thread (worker-session.ts).
import { errorMessage } from '../../core/errors.js'

/** Longest onnxruntime message kept in a reason: its messages can quote a whole node. */
const MAX_MESSAGE_LENGTH = 300

/**
 * onnxruntime's message in words fit for a model's reason: its status prefix and any source
 * location dropped, one line, bounded. No native stack reaches a client or a log line.
 */
export const describeOnnxError = (error: unknown): string => {
  const text = errorMessage(error)
    .replace(/\[ONNXRuntimeError\]\s*:\s*\d+\s*:\s*\w+\s*:\s*/g, '')
    .replace(/\S*\/[\w./-]+\.(?:cc|cpp|h):\d+\S*/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text
}
