// What every route of /openapi.json shares, held to the code it describes: the problem schema fits
// the problems the server writes, and the refused-head examples are the inspector's own answers.
import type { IncomingMessage, ServerResponse } from 'node:http'
import t from 'tap'
import { Value } from 'typebox/value'
import { HttpError } from '../../lib/core/http/errors.js'
import { problemJson, toProblemReply } from '../../lib/core/http/problem.js'
import { createInspector, type Expect } from '../../lib/server/inspect.js'
import { COMPONENT_HEADERS, COMPONENT_RESPONSES, COMPONENT_SCHEMAS, overloadedExample, PROBLEM_SCHEMA } from '../../lib/openapi/components.js'
import { makeCtx } from '../fixtures/ctx.js'

type Examples = Record<string, { value: Record<string, unknown> }>
const examplesOf = (name: string): Examples =>
  (COMPONENT_RESPONSES[name] as { content: Record<string, { examples: Examples }> }).content['application/problem+json']?.examples as Examples

t.test('the problem schema is the one component schema, and every example fits it', async (t) => {
  t.same(Object.keys(COMPONENT_SCHEMAS), ['Problem'])
  for (const name of Object.keys(COMPONENT_RESPONSES)) {
    for (const [key, { value }] of Object.entries(examplesOf(name))) t.ok(Value.Check(PROBLEM_SCHEMA, value), `${name}.${key}`)
  }
  t.notOk(Value.Check(PROBLEM_SCHEMA, { ...examplesOf('InternalError')['internal']?.value, type: 'about:blank' }), 'a type outside urn:svc:problem is refused')
})

t.test('a problem as the server writes it fits the schema', async (t) => {
  const ctx = makeCtx('GET', '/x?y=1')
  const { problem } = toProblemReply(new HttpError(400, 'INVALID_PARAMETER', 'bad', { extra: { parameter: 'y' } }))
  const written = JSON.parse(problemJson(problem, ctx)) as unknown
  t.ok(Value.Check(PROBLEM_SCHEMA, written), JSON.stringify(written))
})

t.test("each refused-head example is the inspector's answer to such a head", async (t) => {
  const inspect = createInspector(1048576, 8192)
  const decided = (rawHeaders: string[], url = '/health', httpVersionMinor = 1, expect: Expect = 'none'): HttpError | undefined => {
    const ctx = makeCtx('GET', url)
    inspect(ctx, { rawHeaders, url, httpVersionMinor } as unknown as IncomingMessage, {} as ServerResponse, expect)
    return ctx.rejection
  }
  const heads: Record<string, HttpError | undefined> = {
    framing: decided(['Host', 'a', 'Transfer-Encoding', 'gzip']),
    host: decided([]),
    target: decided(['Host', 'a'], 'ftp://a/'),
    large: decided(['Host', 'a', 'Content-Length', '1048577']),
    long: decided(['Host', 'a'], `/${'x'.repeat(8192)}`),
    expect: decided(['Host', 'a'], '/health', 1, 'unsupported'),
  }
  const examples = examplesOf('RequestHeadRefused')
  t.same(Object.keys(examples), Object.keys(heads))
  for (const [name, error] of Object.entries(heads)) {
    t.match(examples[name]?.value, { status: error?.status, detail: error?.message }, name)
  }
})

t.test('the overloaded examples say which limit shed the request', async (t) => {
  t.match(overloadedExample('/p', 'max_in_flight').value, { status: 503, reason: 'max_in_flight', instance: '/p', type: 'urn:svc:problem:overloaded' })
  t.match(overloadedExample('/p', 'event_loop_delay').value, { reason: 'event_loop_delay', detail: /too busy/ })
  t.same(Object.keys(COMPONENT_RESPONSES), ['InternalError', 'InvalidPathParameter', 'Unauthorized', 'Overloaded', 'RequestHeadRefused'])
  t.match(COMPONENT_HEADERS['X-Request-ID'], { required: true })
})
