// Errors an endpoint throws on purpose. The code is stable (dashboards and clients may key on it);
// the message may change. Anything else thrown is an unexpected failure and answers 500.
export class HttpError extends Error {
  override name = 'HttpError'
  readonly status: number
  readonly code: string
  /** Extra members merged into the problem body (e.g. `{ error: … }` for OIP clients). */
  readonly extra: Readonly<Record<string, unknown>> | undefined
  /** Extra response headers (e.g. `Allow` on 405, `Retry-After` on 503). */
  readonly headers: Readonly<Record<string, string>> | undefined

  constructor(
    status: number,
    code: string,
    message: string,
    options?: ErrorOptions & { extra?: Readonly<Record<string, unknown>>; headers?: Readonly<Record<string, string>> },
  ) {
    super(message, options)
    this.status = status
    this.code = code
    this.extra = options?.extra
    this.headers = options?.headers
  }
}

const tooLarge = new Map<number, HttpError>()

/**
 * The 413 for a body over SVC_MAX_BODY_BYTES, whether a declared Content-Length shows it before
 * anything is read (lib/core/server/inspect.ts) or the body reader finds it (Ctx.body): one error per
 * limit, built on first use, so both answer the same bytes and a refusal allocates none. It carries
 * `error` too: Open Inference Protocol clients read that member (lib/README.md §10), whatever the route.
 */
export const payloadTooLarge = (limit: number): HttpError => {
  let error = tooLarge.get(limit)
  if (error === undefined) {
    const detail = `Request body exceeds the limit of ${limit} bytes`
    tooLarge.set(limit, (error = new HttpError(413, 'PAYLOAD_TOO_LARGE', detail, { extra: { error: detail } })))
  }
  return error
}
