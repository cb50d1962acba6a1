// What every route of /openapi.json shares: the problem+json schema (lib/README.md §7), the standard
// headers, and the answers any operation can give.
import { INTERNAL_PROBLEM } from '../http/problem.js'
import { CACHE_STATUS } from '../rates/cache.js'
import { EXAMPLE_REQUEST_ID, problem, problemExample, type ResponseDoc, type Schema } from './route-doc.js'

export const PROBLEM_SCHEMA: Schema = {
  type: 'object',
  description:
    'An RFC 9457 problem: every 4xx and 5xx body. `type` is stable, so clients may key on it; `detail` is for people. ' +
    '5xx bodies never carry internal details: quote `request_id` to find the log lines. Some routes add members: ' +
    '`parameter` names the query parameter at fault; the model routes add `error` (the detail again, the member Open ' +
    'Inference Protocol clients read), `input` (the input tensor at fault) and, on readiness probes, `ready`.',
  required: ['type', 'title', 'status', 'detail', 'instance', 'request_id'],
  properties: {
    type: { type: 'string', format: 'uri', pattern: '^urn:svc:problem:[a-z0-9-]+$', description: 'What went wrong, as a stable URN' },
    title: { type: 'string', description: 'The reason phrase of `status`' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    detail: { type: 'string', description: 'What went wrong here, for people' },
    instance: { type: 'string', description: 'The path asked for, without its query' },
    request_id: { type: 'string', format: 'uuid', description: 'The X-Request-ID of this response' },
    parameter: { type: 'string', description: 'The query parameter at fault' },
    error: { type: 'string', description: 'Model routes: `detail` again, for Open Inference Protocol clients' },
    input: { type: 'string', description: 'Model routes: the input tensor at fault' },
    ready: { type: 'boolean', const: false, description: 'Readiness probes of the model routes' },
  },
  examples: [problemExample('', 404, 'NOT_FOUND', 'No route matches this path', '/nope').value],
}

export const COMPONENT_SCHEMAS: Readonly<Record<string, Schema>> = { Problem: PROBLEM_SCHEMA }

export const COMPONENT_HEADERS: Readonly<Record<string, Readonly<{ description: string; schema: Schema }>>> = {
  'X-Request-ID': {
    description: "A fresh UUID for every request: the `request_id` of that request's log lines and of a problem body",
    schema: { type: 'string', format: 'uuid', examples: [EXAMPLE_REQUEST_ID] },
  },
  'Cache-Status': {
    description: 'RFC 9211: whether the rate came from the cache (`hit`), from an upstream (`fwd=miss`, `fwd=stale`), or stale because every upstream failed',
    schema: { type: 'string', enum: Object.values(CACHE_STATUS) },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', minimum: 1, examples: [5] },
  },
  ETag: {
    description: 'The version of this body; send it back in If-None-Match to get 304 Not Modified while it has not changed',
    schema: { type: 'string', examples: ['"kM3d9vJq0lW1m8t3bQxZpS6rYv2"'] },
  },
  'Cache-Control': {
    description: '`no-cache`: a cache keeps the body but asks again (If-None-Match) before each reuse, so a new version shows at once',
    schema: { type: 'string', const: 'no-cache' },
  },
  'Content-Security-Policy': {
    description: 'Scripts, styles and requests from this service only; no inline script; the page cannot be framed',
    schema: { type: 'string' },
  },
}

const INTERNAL_ERROR: ResponseDoc = problem('The service failed to handle the request (every operation may answer this)', {
  internal: {
    summary: 'An unexpected failure; the detail never says what',
    value: { ...INTERNAL_PROBLEM, instance: '/api/v1/models', request_id: EXAMPLE_REQUEST_ID },
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

const UNAUTHORIZED: ResponseDoc = problem('No valid bearer token was sent', {
  missing: problemExample('No Authorization header', 401, 'UNAUTHORIZED', 'This path needs a bearer token', '/api/v1/models'),
})

export const COMPONENT_RESPONSES: Readonly<Record<string, ResponseDoc>> = {
  InternalError: INTERNAL_ERROR,
  InvalidPathParameter: INVALID_PATH_PARAMETER,
  Unauthorized: UNAUTHORIZED,
}
