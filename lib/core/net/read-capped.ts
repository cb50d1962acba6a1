// The one way a fetch reply's body is read in svc: whole, but never past a byte cap. A peer that
// declares or streams more than the cap is not the API we speak, and must not make us buffer
// without bound (the rate upstreams, the HTTP model store).

/**
 * The body of `res`, or undefined when there is none or it passes `limit` bytes: refused at once by
 * its Content-Length, else while streaming. Either way the rest is never downloaded: the body is
 * cancelled, and leaving the loop early cancels the stream.
 */
export const readCapped = async (res: Response, limit: number): Promise<Buffer | undefined> => {
  const declared = res.headers.get('content-length')
  if (res.body === null || (declared !== null && Number(declared) > limit)) {
    await res.body?.cancel()
    return undefined
  }
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body) {
    size += chunk.byteLength
    if (size > limit) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}
