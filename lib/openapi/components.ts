// What every route of /openapi.json shares: the problem+json schema (lib/README.md §7), the standard
// headers, and the answers any operation can give.
import { PROBLEM_CONTENT_TYPE, problemType } from '../core/http/problem-body.js'
import { INTERNAL_PROBLEM } from '../core/http/problem.js'
import { RETRY_AFTER_S, SHED_REASONS } from '../layers/shedding.js'
import { BUSY_REASONS } from '../models/onnx/pool/busy-error.js'
import { CACHE_STATUS } from '../rates/cache.js'
import { Type } from 'typebox'
import { oipExtra, payloadTooLarge } from '../core/http/errors.js'
import {
  EXAMPLE_REQUEST_ID,
  HEADERS,
  problem,
  problemExample,
  ref,
  stringEnum,
  type BodyOf,
  type Example,
  type HeaderDoc,
  type ResponseDoc,
  type Schema,
} from '../core/route-doc.js'

export const PROBLEM_SCHEMA = Type.Object(
  {
    type: Type.String({ format: 'uri', pattern: '^urn:svc:problem:[a-z0-9-]+$', description: 'What went wrong, as a stable URN' }),
    title: Type.String({ description: 'The reason phrase of `status`' }),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String({ description: 'What went wrong here, for people' }),
    instance: Type.String({ description: 'The path asked for, without its query' }),
    request_id: Type.String({ format: 'uuid', description: 'The X-Request-ID of this response' }),
    parameter: Type.Optional(Type.String({ description: 'The query parameter at fault' })),
    error: Type.Optional(Type.String({ description: 'Model routes: `detail` again, for Open Inference Protocol clients' })),
    input: Type.Optional(Type.String({ description: 'Model routes: the input tensor at fault' })),
    name: Type.Optional(Type.String({ description: 'Readiness probes of the model routes: the model asked about' })),
    ready: Type.Optional(Type.Literal(false, { description: 'Readiness probes of the model routes' })),
    reason: Type.Optional(
      stringEnum([...SHED_REASONS, ...BUSY_REASONS], { description: 'OVERLOADED: which limit shed the request, or why the ONNX workers could not answer it' }),
    ),
  },
  {
    description:
      'An RFC 9457 problem: every 4xx and 5xx body. `type` is stable, so clients may key on it; `detail` is for people. ' +
      '5xx bodies never carry internal details: quote `request_id` to find the log lines. Some routes add members: ' +
      '`parameter` names the query parameter at fault; the model routes add `error` (the detail again, the member Open ' +
      'Inference Protocol clients read), `input` (the input tensor at fault) and, on readiness probes, `name` and `ready`; ' +
      'a request shed under load says why in `reason`.',
    examples: [problemExample('', 404, 'NOT_FOUND', 'No route matches this path', '/nope').value],
  },
)
/** A problem as it is sent, `instance` and `request_id` included (lib/core/http/problem.ts writes them). */
export type ProblemBody = BodyOf<typeof PROBLEM_SCHEMA>

export const COMPONENT_SCHEMAS: Readonly<Record<string, Schema>> = { Problem: PROBLEM_SCHEMA }

/** `required`: every response that declares the header sends it. */
export const COMPONENT_HEADERS: Readonly<Record<string, HeaderDoc>> = {
  'X-Request-ID': {
    description: "A fresh UUID for every request: the `request_id` of that request's log lines and of a problem body",
    required: true,
    schema: { type: 'string', format: 'uuid', examples: [EXAMPLE_REQUEST_ID] },
  },
  'Cache-Status': {
    description: 'RFC 9211: whether the rate came from the cache (`hit`), from an upstream (`fwd=miss`, `fwd=stale`), or stale because every upstream failed',
    required: true,
    schema: { type: 'string', enum: Object.values(CACHE_STATUS) },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    required: true,
    schema: { type: 'integer', minimum: 1, examples: [5] },
  },
  ETag: {
    description: 'The version of this body; send it back in If-None-Match to get 304 Not Modified while it has not changed',
    required: true,
    schema: { type: 'string', examples: ['"kM3d9vJq0lW1m8t3bQxZpS6rYv2"'] },
  },
  'Cache-Control': {
    description: '`no-cache`: a cache keeps the body but asks again (If-None-Match) before each reuse, so a new version shows at once',
    required: true,
    schema: { type: 'string', const: 'no-cache' },
  },
  'Content-Security-Policy': {
    description: 'Scripts, styles and requests from this service only; no inline script; the page cannot be framed',
    required: true,
    schema: { type: 'string' },
  },
  'WWW-Authenticate': {
    description: 'RFC 6750: the Bearer challenge, with `error="invalid_token"` when the token sent is not valid',
    required: true,
    schema: { type: 'string', examples: ['Bearer realm="svc"', 'Bearer realm="svc", error="invalid_token"'] },
  },
}

const INTERNAL_ERROR: ResponseDoc = problem('The service failed to handle the request (every operation may answer this)', {
  internal: {
    summary: 'An unexpected failure; the detail never says what',
    value: { ...INTERNAL_PROBLEM, instance: '/api/v1/models', request_id: EXAMPLE_REQUEST_ID } satisfies ProblemBody,
  },
})

const INVALID_PATH_PARAMETER: ResponseDoc = problem('A path parameter is not valid percent-encoding', {
  encoding: problemExample(
    'Malformed percent-encoding',
    400,
    'INVALID_PATH_PARAMETER',
    'Path parameter name is not valid percent-encoding',
    '/api/v1/models/%E0%A4%A',
  ),
})

// The texts of lib/layers/auth.ts.
const UNAUTHORIZED: ResponseDoc = problem(
  'No bearer token was sent, or not a valid one (the token this operation names in `security`)',
  {
    missing: problemExample(
      'No Authorization header',
      401,
      'UNAUTHORIZED',
      'This endpoint needs a bearer token: send Authorization: Bearer <token>',
      '/api/v1/models',
    ),
    invalid: problemExample('A token that is not accepted here', 401, 'UNAUTHORIZED', 'The bearer token is not valid', '/api/v1/models'),
  },
  { 'WWW-Authenticate': HEADERS.wwwAuthenticate },
)

const OVERLOADED_DETAILS = {
  max_in_flight: 'Too many requests are in progress; retry after the time in Retry-After',
  event_loop_delay: 'The server is too busy to answer in time; retry after the time in Retry-After',
} as const satisfies Readonly<Record<(typeof SHED_REASONS)[number], string>>

/** How lib/layers/shedding.ts answers a request it sheds (`instance`: the path asked for). */
export const overloadedExample = (instance: string, reason: (typeof SHED_REASONS)[number]): Example =>
  problemExample(
    reason === 'max_in_flight' ? 'Over SVC_MAX_IN_FLIGHT' : 'Event loop lagging past SVC_MAX_EVENT_LOOP_DELAY_MS',
    503,
    'OVERLOADED',
    OVERLOADED_DETAILS[reason],
    instance,
    { reason },
  )

/** Said of an operation's own 503 when shedding may answer it too; Retry-After comes with OVERLOADED only. */
export const OVERLOADED_SUFFIX = '; or, under load shedding, OVERLOADED (with Retry-After)'
export const SHED_RETRY_AFTER: HeaderDoc = {
  description: `With OVERLOADED: seconds to wait before trying again (${RETRY_AFTER_S})`,
  schema: { type: 'integer', minimum: 1, examples: [RETRY_AFTER_S] },
}

const OVERLOADED: ResponseDoc = problem(
  'The service is overloaded and shed the request before it ran (SVC_MAX_IN_FLIGHT, SVC_MAX_EVENT_LOOP_DELAY_MS); retry after Retry-After',
  { inFlight: overloadedExample('/api/v1/predict', 'max_in_flight'), lag: overloadedExample('/api/v1/predict', 'event_loop_delay') },
  { 'Retry-After': HEADERS.retryAfter },
)

// What the server answers, on any route, for a request head it will not take (rows 3–8 of the table
// in lib/server/inspect.ts, with its texts and the default 8 KiB target limit of lib/server/server.ts). The
// problem types are listed in the schema, so only these refusals fit the `4XX` range: an operation's
// own 4xx must be declared under its own code.
const REFUSED_HEAD = {
  framing: [400, 'INVALID_FRAMING', 'Transfer-Encoding must be chunked alone, and HTTP/1.0 requests cannot use it', 'Transfer-Encoding other than chunked'],
  host: [400, 'INVALID_HOST', 'An HTTP/1.1 request carries exactly one Host header', 'No Host header, or two'],
  target: [400, 'INVALID_TARGET', 'The request target must be a path or an http(s) URL', 'A target that is no path'],
  large: [413, 'PAYLOAD_TOO_LARGE', payloadTooLarge(1048576).message, 'A Content-Length over SVC_MAX_BODY_BYTES: the body is not read'],
  long: [414, 'URI_TOO_LONG', 'The request target exceeds 8192 bytes', 'A target over 8 KiB'],
  expect: [417, 'EXPECTATION_FAILED', 'The only expectation supported is 100-continue', 'An Expect other than 100-continue'],
} as const

const REQUEST_HEAD_REFUSED: ResponseDoc = {
  description:
    'The request head was refused before the operation ran, whatever the operation: its framing, Host or target (400), a declared body ' +
    'over SVC_MAX_BODY_BYTES (413), a target too long (414), an Expect other than 100-continue (417). A 400 or 413 an operation ' +
    'declares itself covers these too.',
  content: {
    [PROBLEM_CONTENT_TYPE]: {
      schema: { allOf: [ref('Problem'), { properties: { type: { enum: [...new Set(Object.values(REFUSED_HEAD).map(([, code]) => problemType(code)))] } } }] },
      examples: Object.fromEntries(
        Object.entries(REFUSED_HEAD).map(([name, [status, code, detail, summary]]) => [
          name,
          problemExample(summary, status, code, detail, '/health', status === 413 ? oipExtra(detail) : {}),
        ]),
      ),
    },
  },
}

export const COMPONENT_RESPONSES: Readonly<Record<string, ResponseDoc>> = {
  InternalError: INTERNAL_ERROR,
  InvalidPathParameter: INVALID_PATH_PARAMETER,
  Unauthorized: UNAUTHORIZED,
  Overloaded: OVERLOADED,
  RequestHeadRefused: REQUEST_HEAD_REFUSED,
}
