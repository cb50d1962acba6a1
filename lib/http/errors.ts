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
