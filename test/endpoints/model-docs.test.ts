// The model routes' descriptions: one operation each, the versioned ones taking {version}, and
// every example, request and answer alike, valid against the schema it is shown under.
import t from 'tap'
import type { RouteDoc } from '../../lib/core/route-doc.js'
import * as docs from '../../lib/endpoints/model-docs.js'
import { COMPONENT_SCHEMAS } from '../../lib/openapi/components.js'
import { type Json, pointer, schemaChecker } from '../fixtures/openapi.js'

const DOCS: ReadonlyArray<readonly [string, RouteDoc]> = Object.entries(docs)

/** One operation per description, under a path of its own, with every schema they name. */
const DOCUMENT: Json = {
  openapi: '3.1.0',
  components: { schemas: Object.assign({ ...COMPONENT_SCHEMAS }, ...DOCS.map(([, doc]) => doc.schemas ?? {})) },
  paths: Object.fromEntries(DOCS.map(([name, { schemas: _, ...operation }]) => [`/${name}`, { post: operation }])),
}

type Media = Readonly<{ schema?: unknown; example?: unknown; examples?: Readonly<Record<string, { value: unknown }>> }>

/** Every example of an operation, with the pointer to the schema it is shown under. */
const examplesOf = (name: string, doc: RouteDoc): Array<readonly [string, string, unknown]> => {
  const media: Array<readonly [readonly string[], Media]> = [
    ...Object.entries(doc.requestBody?.content ?? {}).map(([type, m]) => [['requestBody', 'content', type], m as Media] as const),
    ...Object.entries(doc.responses).flatMap(([status, response]) =>
      Object.entries((response as { content?: Record<string, Media> }).content ?? {}).map(([type, m]) => [['responses', status, 'content', type], m] as const),
    ),
  ]
  return media.flatMap(([at, m]) => {
    const schema = pointer('paths', `/${name}`, 'post', ...at, 'schema')
    const named = Object.entries(m.examples ?? {}).map(([key, { value }]) => [`${at.join(' ')} ${key}`, schema, value] as const)
    return m.example === undefined ? named : [[`${at.join(' ')} example`, schema, m.example] as const, ...named]
  })
}

t.test('each description is one operation, its id unique', async (t) => {
  const ids = DOCS.map(([, doc]) => doc.operationId)
  t.equal(new Set(ids).size, ids.length)
  t.equal(DOCS.length, 12)
})

t.test('the versioned routes take {version}, the others only {name} or nothing', async (t) => {
  const parameters = (doc: RouteDoc) => (doc.parameters ?? []).map(({ name }) => name)
  for (const doc of [docs.INFER_VERSION_DOC, docs.MODEL_VERSION_METADATA_DOC, docs.MODEL_VERSION_READY_DOC])
    t.same(parameters(doc), ['name', 'version'], doc.operationId)
  for (const doc of [docs.INFER_DOC, docs.MODEL_METADATA_DOC, docs.MODEL_READY_DOC, docs.GET_MODEL_DOC]) t.same(parameters(doc), ['name'], doc.operationId)
  for (const doc of [docs.PREDICT_DOC, docs.LIST_MODELS_DOC, docs.SERVER_LIVE_DOC]) t.same(parameters(doc), [], doc.operationId)
})

t.test('every example is valid against the schema it is shown under', async (t) => {
  const check = schemaChecker(DOCUMENT)
  let checked = 0
  for (const [name, doc] of DOCS) {
    for (const [what, at, value] of examplesOf(name, doc)) {
      t.equal(check(at, value), undefined, `${doc.operationId}: ${what}`)
      checked++
    }
  }
  t.ok(checked > 30, `${checked} examples checked`)
})

t.test('a wrong example is caught: the check can fail', async (t) => {
  const check = schemaChecker(DOCUMENT)
  t.type(check(pointer('paths', '/SERVER_LIVE_DOC', 'post', 'responses', '200', 'content', 'application/json', 'schema'), { live: 'yes' }), 'string')
})
