// The one error hierarchy (lib/README.md §7). Everything svc throws on purpose is an SvcError with a
// stable `code`, as undici's errors carry `UND_ERR_*` and fastify's `FST_ERR_*`: callers, tests and
// operators key on the code, and the message, written for people, may change. Codes are UPPER_SNAKE
// and name what went wrong within their class (`StoreError` `NOT_FOUND`, `ConfigError`
// `INVALID_CONFIGURATION`); each class keeps its own `name`, which is what a log line's `error.type`
// and the exception_type label show. An HttpError is the one that is an answer: domain errors are
// turned into one at the boundary (lib/endpoints/problems.ts). The single numeric code is
// ExportTimeoutError's: it stands in for a gRPC failure, so it carries gRPC's number as the
// exporters' own errors do. A leaf: imports nothing, so every module may use it.
//
// A class with one code declares it (`readonly code = 'INVALID_MANIFEST'`); a class whose code is
// chosen where it is thrown, from its list, extends `CodedError` (`StoreError`, `RequestError`,
// `HttpError`…), and one about a field of a document extends `FieldError`, which keeps `field` and
// `reason` and writes the message `field: reason` (`ArtifactError`, `ProfileError`,
// `OnnxGraphError`). A catch clause reads what it caught with `errorMessage(error)`, never with a
// cast. Domain errors that never reach a client: `StoreError`, `ManifestError`, `ArtifactError`,
// `ProfileError` and the ONNX ones become a model's `reason` (a 503 `MODEL_NOT_READY`), and a
// `ConfigError` is exit 2.

export abstract class SvcError<Code extends string | number = string> extends Error {
  abstract readonly code: Code
}

/** An SvcError whose code is chosen where it is thrown, from its class's list (StoreError `NOT_FOUND`…). */
export abstract class CodedError<Code extends string> extends SvcError<Code> {
  readonly code: Code
  constructor(code: Code, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
  }
}

/** A CodedError about one field of a document: the message is `field: reason`, and both are kept. */
export abstract class FieldError<Code extends string> extends CodedError<Code> {
  readonly field: string
  readonly reason: string
  constructor(code: Code, field: string, reason: string) {
    super(code, `${field}: ${reason}`)
    this.field = field
    this.reason = reason
  }
}

/**
 * What was thrown, in words: an error's message, otherwise the value as text (a thrown string is its
 * own message). Catch clauses bind `unknown`; this is how they read it, never through a cast.
 */
export const errorMessage = (error: unknown): string =>
  String((typeof error === 'object' && error !== null && 'message' in error ? error.message : undefined) ?? error)

/** What was thrown, by Node's error code (`ENOENT`, `EADDRINUSE`): undefined when it carries no code in a string. */
export const errorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined
