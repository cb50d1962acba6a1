import t from 'tap'
import { readCapped } from '../../../lib/core/net/read-capped.js'

/** A reply whose body arrives in the given chunks, and a flag that turns true if the stream is cancelled. */
const reply = (chunks: readonly string[], headers: Record<string, string> = {}): { res: Response; cancelled: () => boolean } => {
  let isCancelled = false
  let i = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++]
      if (chunk === undefined) controller.close()
      else controller.enqueue(new TextEncoder().encode(chunk))
    },
    cancel() {
      isCancelled = true
    },
  })
  return { res: new Response(body, { headers }), cancelled: () => isCancelled }
}

t.test('a body within the cap is read whole, across chunks', async (t) => {
  const { res } = reply(['{"a":', '1}'])
  t.equal((await readCapped(res, 7))?.toString(), '{"a":1}')
})

t.test('a declared Content-Length over the cap is refused before a byte is read', async (t) => {
  const { res, cancelled } = reply(['x'], { 'content-length': '100' })
  t.equal(await readCapped(res, 99), undefined)
  t.ok(cancelled(), 'the body was cancelled')
})

t.test('a body that streams past the cap is refused and the rest never read', async (t) => {
  const { res, cancelled } = reply(['12345', '67890', 'never'])
  t.equal(await readCapped(res, 8), undefined)
  t.ok(cancelled(), 'the download was stopped')
})

t.test('a reply without a body gives undefined', async (t) => {
  t.equal(await readCapped(new Response(null, { status: 204 }), 10), undefined)
})
