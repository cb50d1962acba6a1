// GET /: who this is and where to go next. The reply never changes, so it is built once.
import { ENVIRONMENTS } from '../process/config/config.js'
import { json, ref, type RouteDoc } from '../core/route-doc.js'
import type { Handler, Reply } from '../core/pipeline.js'

export type ServiceInfo = Readonly<{ name: string; version: string; environment: string }>

export type EndpointLink = Readonly<{ method: string; path: string }>

export const getRoot = (info: ServiceInfo, endpoints: readonly EndpointLink[]): Handler => {
  const reply: Reply = Object.freeze({
    kind: 'json',
    status: 200,
    json: JSON.stringify({ service: info.name, version: info.version, environment: info.environment, endpoints }),
  })
  return () => reply
}

export const ROOT_DOC: RouteDoc = {
  operationId: 'getRoot',
  summary: 'What this service is',
  description: 'The service name, version and environment, and every route (method and path template).',
  tags: ['service'],
  responses: {
    '200': json('The service and its routes', ref('ServiceDescription'), {
      example: {
        service: 'svc',
        version: '1.0.0',
        environment: 'dev',
        endpoints: [
          { method: 'GET', path: '/' },
          { method: 'GET', path: '/metrics' },
        ],
      },
    }),
  },
  schemas: {
    ServiceDescription: {
      type: 'object',
      required: ['service', 'version', 'environment', 'endpoints'],
      properties: {
        service: { type: 'string', description: 'APP_NAME' },
        version: { type: 'string' },
        environment: { type: 'string', enum: [...ENVIRONMENTS] },
        endpoints: {
          type: 'array',
          items: {
            type: 'object',
            required: ['method', 'path'],
            properties: { method: { type: 'string' }, path: { type: 'string', description: 'A path template: `{name}` is a parameter' } },
          },
        },
      },
    },
  },
}
