// GET /: who this is and where to go next. The reply never changes, so it is built once.
import type { Handler, Reply } from '../pipeline.js'

export type ServiceInfo = Readonly<{ name: string; version: string; environment: string }>

export type EndpointLink = Readonly<{ method: string; path: string }>

export const getRoot = (info: ServiceInfo, endpoints: readonly EndpointLink[]): Handler => {
  const reply: Reply = Object.freeze({
    status: 200,
    headers: Object.freeze({ 'content-type': 'application/json' }),
    text: JSON.stringify({ service: info.name, version: info.version, environment: info.environment, endpoints }),
  })
  return () => reply
}
