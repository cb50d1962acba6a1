// A stream reply is answered long after its endpoint returns: layers that close a request
// (request_completed, the duration histogram, in-flight) wrap the stream to close it at its end.
// Not a generator: an async generator never started runs no `finally` on return(), and the server
// ends a HEAD reply without reading the stream. This wrapper reports the end on the last item, on
// an error, and on return() — whichever comes first, once.
import type { StreamReply } from '../core/pipeline.js'

/** `error` is what the stream threw, undefined when it ended or was stopped. */
export type StreamEnd = (error: unknown) => void

export const onStreamEnd = (reply: StreamReply, end: StreamEnd): StreamReply => {
  const stream: AsyncIterable<string> = {
    [Symbol.asyncIterator]() {
      const inner = reply.stream[Symbol.asyncIterator]()
      let isEnded = false
      const finish = (error: unknown): void => {
        if (isEnded) return
        isEnded = true
        end(error)
      }
      return {
        async next() {
          try {
            const item = await inner.next()
            if (item.done === true) finish(undefined)
            return item
          } catch (error: unknown) {
            finish(error)
            throw error
          }
        },
        async return(value?: unknown) {
          try {
            return (await inner.return?.(value)) ?? { done: true, value: undefined }
          } finally {
            finish(undefined)
          }
        },
      }
    },
  }
  return { ...reply, stream }
}
