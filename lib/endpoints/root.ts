// GET /: who this is and where to go next. The reply never changes, so it is built once.
import { ENVIRONMENTS } from '../config/config.js'
import { Type } from 'typebox'
import { json, named, schemasOf, stringEnum, type BodyOf, type RouteDoc } from '../core/route-doc.js'
import type { Handler, Reply } from '../core/pipeline.js'

const SERVICE_DESCRIPTION = named(
  'ServiceDescription',
  Type.Object({
    service: Type.String({ description: 'APP_NAME' }),
    version: Type.String(),
    environment: stringEnum(ENVIRONMENTS),
    endpoints: Type.Array(Type.Object({ method: Type.String(), path: Type.String({ description: 'A path template: `{name}` is a parameter' }) })),
  }),
)
/** The body of GET /. */
export type ServiceDescription = BodyOf<typeof SERVICE_DESCRIPTION.schema>

export type ServiceInfo = Readonly<{ name: string; version: string; environment: ServiceDescription['environment'] }>

export type EndpointLink = ServiceDescription['endpoints'][number]

export const getRoot = (info: ServiceInfo, endpoints: readonly EndpointLink[]): Handler => {
  const reply: Reply = Object.freeze({
    kind: 'json',
    status: 200,
    json: JSON.stringify({ service: info.name, version: info.version, environment: info.environment, endpoints } satisfies ServiceDescription),
  })
  return () => reply
}

export const ROOT_DOC: RouteDoc = {
  operationId: 'getRoot',
  summary: 'What this service is',
  description: 'The service name, version and environment, and every route (method and path template).',
  tags: ['service'],
  responses: {
    '200': json('The service and its routes', SERVICE_DESCRIPTION.ref, {
      example: {
        service: 'svc',
        version: '1.0.0',
        environment: 'dev',
        endpoints: [
          { method: 'GET', path: '/' },
          { method: 'GET', path: '/metrics' },
        ],
      } satisfies ServiceDescription,
    }),
  },
  schemas: schemasOf([SERVICE_DESCRIPTION]),
}
