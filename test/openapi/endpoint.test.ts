// Response shapes declared once, as TypeBox schemas (lib/core/route-doc.ts): what goes into the
// document is the JSON Schema alone, never TypeBox's own marks, and the helpers write the forms the
// document has always had.
import t from 'tap'
import { Type } from 'typebox'
import { anyObject, named, nullable, openEnum, schemasOf, stringEnum, type BodyOf } from '../../lib/core/route-doc.js'
import { DRIFT_CHECK_RESULTS } from '../../lib/drift/status.js'
import { KERNEL_PLATFORM } from '../../lib/models/kernel/runtime.js'
import { ONNX_PLATFORM } from '../../lib/models/onnx/plan.js'
import { PLATFORMS } from '../../lib/models/platform.js'
import { DRIFT_REPORT, MODEL_SCHEMAS, MODEL_SUMMARY } from '../../lib/endpoints/model-schemas.js'
import { HEALTH_STATUSES } from '../../lib/endpoints/health.js'
import { buildDocument } from '../../lib/openapi/document.js'
import { openApiRoute } from '../../lib/openapi/endpoint.js'
import { json } from '../../lib/core/route-doc.js'

/** Every key of `node` and below that JSON.stringify leaves out: symbols and non-enumerable members. */
const hiddenKeys = (node: unknown, found = new Set<string>()): Set<string> => {
  if (node === null || typeof node !== 'object') return found
  for (const key of Reflect.ownKeys(node)) {
    const isShown = typeof key === 'string' && Object.getOwnPropertyDescriptor(node, key)?.enumerable === true
    if (!isShown && !(Array.isArray(node) && key === 'length')) found.add(String(key))
  }
  for (const child of Object.values(node)) hiddenKeys(child, found)
  return found
}

t.test("TypeBox keeps its marks out of a schema's JSON: only JSON Schema members are serialised", async (t) => {
  const schema = Type.Object({ a: Type.String({ description: 'A' }), b: Type.Optional(Type.Array(Type.Integer())) }, { additionalProperties: false })
  t.ok(hiddenKeys(schema).has('~kind'), 'the marks are there, as properties JSON.stringify skips')
  t.same(JSON.parse(JSON.stringify(schema)), {
    type: 'object',
    required: ['a'],
    properties: { a: { type: 'string', description: 'A' }, b: { type: 'array', items: { type: 'integer' } } },
    additionalProperties: false,
  })
  t.notMatch(JSON.stringify(MODEL_SCHEMAS), /"~/, 'no mark in any model schema')
})

t.test('the document holds JSON data only: a copy of the route descriptions without any TypeBox mark', async (t) => {
  const route = {
    method: 'GET',
    path: '/drift',
    doc: { operationId: 'getDrift', summary: 'Drift', tags: ['models'], responses: { '200': json('It', DRIFT_REPORT.ref) }, schemas: MODEL_SCHEMAS },
  } as const
  const document = buildDocument({ routes: [route], info: { title: 'svc', version: '1' } })
  t.same([...hiddenKeys(document)], [])
  const served = openApiRoute({ routes: [route], info: { title: 'svc', version: '1' } })
  t.notMatch(JSON.stringify(served), /~kind/)
})

t.test('a named schema is listed under its name and referenced by it', async (t) => {
  const thing = named('Thing', Type.Object({ id: Type.String() }))
  t.same(JSON.parse(JSON.stringify(thing.ref)), { $ref: '#/components/schemas/Thing' })
  t.same(schemasOf([thing]), { Thing: thing.schema })
  const body: BodyOf<typeof thing.schema> = { id: 'x' }
  t.same(body, { id: 'x' })
})

t.test('nullable writes the type as a pair with null and keeps every other member', async (t) => {
  t.same(JSON.parse(JSON.stringify(nullable(Type.String({ format: 'date-time', description: 'When' })))), {
    type: ['string', 'null'],
    format: 'date-time',
    description: 'When',
  })
  t.same(JSON.parse(JSON.stringify(nullable(Type.Object({ n: Type.Integer() })))), {
    type: ['object', 'null'],
    required: ['n'],
    properties: { n: { type: 'integer' } },
  })
})

t.test('an enum is a string with its values, in their order, and its description', async (t) => {
  t.same(JSON.parse(JSON.stringify(stringEnum(['b', 'a'] as const, { description: 'Which' }))), { type: 'string', enum: ['b', 'a'], description: 'Which' })
  t.same(JSON.parse(JSON.stringify(openEnum(['x']))), { type: 'string', enum: ['x'] })
  t.same(JSON.parse(JSON.stringify(anyObject({ description: 'Any' }))), { type: 'object', description: 'Any' })
  t.same(JSON.parse(JSON.stringify(anyObject())), { type: 'object' })
})

t.test('each enum of the documents is the list its module declares', async (t) => {
  const enumOf = (schema: unknown, member: string): unknown => JSON.parse(JSON.stringify(schema)).properties[member].enum
  t.same(enumOf(MODEL_SUMMARY.schema, 'platform'), [KERNEL_PLATFORM, ONNX_PLATFORM], 'every runtime svc ships')
  t.same(PLATFORMS, [KERNEL_PLATFORM, ONNX_PLATFORM])
  t.same(enumOf(DRIFT_REPORT.schema, 'status'), [...DRIFT_CHECK_RESULTS, 'not_checked', 'disabled'])
  t.same(HEALTH_STATUSES, ['ok', 'degraded', 'starting', 'draining'])
})
