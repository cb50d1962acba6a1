// GET /openapi.json: the document built once at start-up from the finished route table, sent as one
// pre-serialised body with an ETag (lib/pages/static-file.ts).
import { serveText } from '../pages/static-file.js'
import type { RouteDef } from '../core/pipeline.js'
import { buildDocument, OPENAPI_SCHEMA, type DocumentOptions } from './document.js'
import { HEADERS, type RouteDoc } from '../core/route-doc.js'

export const OPENAPI_PATH = '/openapi.json'

export const OPENAPI_DOC: RouteDoc = {
  operationId: 'getOpenApi',
  summary: 'This API description',
  description: 'The OpenAPI 3.1 document of every route, built from the route table at start-up (the document you are reading).',
  tags: ['service'],
  parameters: [
    { name: 'If-None-Match', in: 'header', description: 'The ETag of a copy already held: 304 without a body while it is current', schema: { type: 'string' } },
  ],
  responses: {
    '200': {
      description: 'An OpenAPI 3.1 document',
      headers: { ETag: HEADERS.etag, 'Cache-Control': HEADERS.cacheControl },
      content: {
        'application/json': {
          schema: OPENAPI_SCHEMA,
        },
      },
    },
    '304': { description: 'The copy held (If-None-Match) is current', headers: { ETag: HEADERS.etag, 'Cache-Control': HEADERS.cacheControl } },
  },
}

/**
 * The /openapi.json route, describing `routes` and itself. Throws (at start-up) when a route has
 * no description, so no route exists undocumented.
 */
export const openApiRoute = (options: DocumentOptions): RouteDef => {
  const own = { method: 'GET', path: OPENAPI_PATH, doc: OPENAPI_DOC } as const
  const document = buildDocument({ ...options, routes: [...options.routes, own] })
  return { ...own, handler: serveText(JSON.stringify(document), 'application/json') }
}
